"""A bare UUID in one case is never a secret, and the scrubber passes one without scanning it
(adr/0046).

The shortcut is only worth having if it changes nothing: here the full scanner reads UUIDs built to
tempt it (every trigger made only of hex digits and dashes, planted at every place a UUID can hold
it, in lower, upper and mixed case). It must find nothing in those in one case, and ``scrub`` must
give what the full scan gives for all of them, so a rule added later that could match inside a UUID
fails this test rather than slipping past the shortcut. (A UUID in mixed case is not what a program
prints, and the generated-token layer takes it for one: the shortcut leaves it to that layer.)
"""

from __future__ import annotations

import random
import uuid

from recall.scrub import _redactions, _scanned, _scanner, scrub

_HEX_AND_DASH = frozenset("0123456789abcdef-")
_GROUPS = (8, 4, 4, 4, 12)


def _random_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128)))


def _planted(literal: str, rng: random.Random) -> list[str]:
    """UUIDs holding ``literal`` at every offset where it fits the 8-4-4-4-12 shape."""
    made = []
    template = _random_uuid(rng)
    for start in range(len(template) - len(literal) + 1):
        candidate = template[:start] + literal + template[start + len(literal) :]
        if [len(group) for group in candidate.split("-")] == list(_GROUPS):
            made.append(candidate)
    return made


def _cases(text: str, rng: random.Random) -> list[str]:
    mixed = "".join(c.upper() if rng.random() < 0.5 else c for c in text)
    return [text, text.upper(), mixed]


def test_the_scanner_finds_nothing_in_uuids_built_to_tempt_it() -> None:
    rng = random.Random(46)
    scanner = _scanner()
    tempting = {literal for literal in scanner.literals if set(literal) <= _HEX_AND_DASH}
    assert tempting  # the real triggers hold some ("acca", "ac", "-"), or this test tests nothing
    uuids = [u for literal in sorted(tempting) for u in _planted(literal, rng)]
    uuids += [_random_uuid(rng) for _ in range(3000)]
    uuids += ["deadbeef-dead-beef-dead-beefdeadbeef", "00000000-0000-0000-0000-000000000000"]
    for text in (case for u in uuids for case in _cases(u, rng)):
        if text in (text.lower(), text.upper()):
            assert not _redactions(scanner, text), text  # the full scan, without the shortcut
        assert scrub(text) == _scanned(scanner, text), text


def test_a_uuid_passes_unchanged_and_a_secret_beside_one_is_still_found() -> None:
    value = "0f8fad5b-d9cb-469f-a165-70867728950e"
    assert scrub(value).text == value and not scrub(value).changed
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    leaked = scrub(f"{value} {key}")
    assert key not in leaked.text and value in leaked.text and leaked.changed
    # In mixed case it is left to the full scan, which takes it for a generated token.
    mixed = "0a3aee49-6666-0879-138d-DA71e3658966"
    assert scrub(mixed) == _scanned(_scanner(), mixed) and scrub(mixed).changed
