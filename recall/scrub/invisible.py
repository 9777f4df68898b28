"""Remove what a reader cannot see but a model can: format characters, controls, terminal escapes.

Invisible text is how prompt injections and secrets hide in transcripts (tag-character smuggling,
bidi overrides that reorder code, zero-width joins that split a token so scanners miss it), so this
runs *before* secret detection. Almost every message is clean, so the work is in saying so fast:
plain ASCII is checked with one ``bytes.translate``; other text with a character-class search over
code points below U+10000 (which ``re`` compiles to a constant-time table) and, only when the
text has astral characters at all, a byte search of its UTF-8 for the astral ones.
"""

from __future__ import annotations

import re

__all__ = ["strip_invisible"]

# Terminal escapes (ECMA-48), 7-bit forms only: in decoded text the 8-bit C1 codes are mojibake far
# more often than escapes, so they are dropped one by one below instead of eating what follows.
# String sequences (OSC incl. hyperlinks, DCS, SOS, PM, APC) run to BEL or ST; an unterminated one
# is cut at the end of its line rather than swallowing the rest of the message.
_ESCAPES = (
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b[\]PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)?"  # OSC, DCS, SOS, PM, APC
    r"|\x1b[!-/]*[0-~]"  # two-character and nF escapes: charset selection, keypad modes
)

# Unicode category Cf written out, so importing needs no 1.1M-code-point scan; a superset of
# Unicode 14-16 that tests check against the running interpreter. ZWJ (U+200D) is handled below
# so emoji sequences survive. The "blank" characters are not Cf but render as nothing: Hangul
# fillers (used for blank-looking identifiers) and supplementary variation selectors (used to
# smuggle bytes after an emoji).
_CONTROL = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_FORMAT_BMP = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200c\u200e\u200f"
    "\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\u115f\u1160\u3164\uffa0"
    "\u034f\u17b4\u17b5\u180b-\u180d\u180f\ufe00-\ufe0e"  # joiners and selectors that show nothing
)
_FORMAT_ASTRAL = (
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
_EMOJI = "\u2190-\u2bff\U0001f000-\U0001faff"

_INVISIBLE = re.compile(
    f"{_ESCAPES}|[{_CONTROL}{_FORMAT_BMP}{_FORMAT_ASTRAL}]|(?<![{_EMOJI}\ufe0f])\u200d|\u200d(?![{_EMOJI}])"
)
_HIDDEN_BMP = re.compile(f"[{_CONTROL}{_FORMAT_BMP}\u200d]")  # ESC is a control: escapes start here
# The astral ones in UTF-8: plane 14 (tags, variation selectors) and a few plane-1 format controls.
_HIDDEN_ASTRAL_UTF8 = re.compile(
    rb"\xf3\xa0|\xf0(?:\x91\x82\xbd|\x91\x83\x8d|\x93\x90[\xb0-\xbf]|\x9b\xb2[\xa0-\xa3]|\x9d\x85[\xb3-\xba])"
)
_ASCII_VISIBLE = bytes(range(0x20, 0x7F)) + b"\t\n\r"
# The same characters written as JSON escapes, as they are when a tool prints JSON: a terminal
# escape (``\u001b[31m``) or an invisible character (``\u200b``) splitting a token hides it as well.
_ESCAPED = re.compile(
    r"\\u001[bB](?:\[[0-?]*[ -/]*[@-~]|\][^\\\n]*(?:\\u0007|\\u001[bB]\\\\)?|[!-/]*[0-~])?"
    r"|\\u(?:00[aA][dD]|034[fF]|200[b-dB-D]|206[0-4]|[fF][eE][fF][fF])"
)


def _clean(text: str) -> bool:
    if text.isascii():
        return not text.encode("ascii").translate(None, _ASCII_VISIBLE)
    if _HIDDEN_BMP.search(text):
        return False
    has_astral = len(text.encode("utf-16-le")) != 2 * len(text)
    return not (has_astral and _HIDDEN_ASTRAL_UTF8.search(text.encode("utf-8", "surrogatepass")))


def strip_invisible(text: str) -> str:
    """Return ``text`` without invisible characters and terminal escapes (the same object if clean)."""
    if "\\u" in text:
        text = _ESCAPED.sub("", text)
    return text if _clean(text) else _INVISIBLE.sub("", text)
