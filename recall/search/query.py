"""Any query becomes text every search mode can take: bytes, lone surrogates, controls and size included.

Queries come from shells (bytes that are not UTF-8 arrive as lone surrogates), from agents and
from pasted logs. The tokenizer of the embedding model refuses lone surrogates, and a query of a
megabyte costs seconds of tokenizing and an FTS5 expression of thousands of terms while adding
nothing a shorter one would not find. So a query is cleaned the way stored text is (invisible
characters and terminal escapes removed, as the scrubber does on write) and cut to
``MAX_QUERY_CHARS``; the model reads only its first 256 tokens anyway.
"""

from __future__ import annotations

import re

from recall.scrub.invisible import strip_invisible

MAX_QUERY_CHARS = 4_000
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_query(query: str | bytes) -> str:
    """``query`` as searchable text: decoded, surrogates and invisible characters replaced, cut to size."""
    if isinstance(query, bytes | bytearray):
        text = bytes(query[: MAX_QUERY_CHARS * 4]).decode("utf-8", "replace")
    else:
        text = query[: MAX_QUERY_CHARS * 2]  # room for what cleaning removes
        if not text.isascii():
            text = _SURROGATE.sub("\ufffd", text)
    return strip_invisible(text)[:MAX_QUERY_CHARS]
