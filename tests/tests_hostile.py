"""Texts that break naive query builders: tsquery and FTS5 syntax, quotes, escapes, controls."""

HOSTILE_TEXTS = [
    "'; DROP TABLE decisions; --",
    "a & b | !c <-> d:*",
    "foo:* & !bar",
    '"unterminated',
    "\\",
    "((((",
    "%s %(x)s ?",
    "AND OR NOT",
    "NEAR(a b, 3)",
    "\x00\x01\u202e",
    "中文 ÆØÅ ﬁ",
    "x" * 5000,
]
