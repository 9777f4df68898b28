"""Turn any text a person types into a valid FTS5 query (adr/0003).

Raw user text never reaches ``MATCH``: ``recall-mcp`` would mean "column recall minus mcp",
``bun:sqlite`` a column filter, ``C++`` and ``what?`` syntax errors. Every word is split the way the
index's unicode61 tokenizer splits it and quoted as a phrase, so punctuation can never be syntax.
What people type on purpose still works: upper-case ``AND``/``OR``/``NOT`` between terms,
``prefix*`` and ``"exact phrases"``.

The index stems with Porter (adr/0010) and FTS5 stems every query term the same way, prefixes
included: ``painting`` finds ``painted``, ``cache*`` becomes ``cach*``. Porter writes a final ``y``
as ``i`` (``deploy`` → ``deploi``), which would hide ``deployment`` (stem ``deploy``) from
``deploy*``, so a prefix ending in ``y`` also searches without its ``y``.

Without explicit operators the terms are OR-ed (minus common stop words) and bm25 ranks documents
that match more of them first: questions in plain words find answers that share only some words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_PIECES = re.compile(r"[^\W_]+")  # what unicode61 keeps as token characters (letters and digits)
_OPERATORS = frozenset({"AND", "OR", "NOT"})
_LEXER = re.compile(r'"([^"]*)"|(\S+)')

STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
    ]
)


@dataclass(frozen=True, slots=True)
class _Term:
    pieces: tuple[str, ...]
    prefix: bool = False

    def render(self) -> str:
        phrase = '"' + " ".join(self.pieces) + '"'
        if not self.prefix:
            return phrase
        last = self.pieces[-1]
        if len(last) > 3 and last.endswith("y"):  # Porter: deploy → deploi, deployment → deploy
            shorter = '"' + " ".join((*self.pieces[:-1], last[:-1])) + '"'
            return f"({phrase} * OR {shorter} *)"
        return phrase + " *"


def build_match(query: str) -> str | None:
    """An FTS5 expression for ``query``, or ``None`` when it holds nothing searchable."""
    items = _lex(query)
    terms = [item for item in items if isinstance(item, _Term)]
    if not terms:
        return None
    if any(isinstance(item, str) for item in items):
        return _with_operators(items)
    content_terms = [t for t in terms if t.prefix or len(t.pieces) > 1 or t.pieces[0] not in STOP_WORDS]
    chosen = content_terms or terms
    unique = list(dict.fromkeys(t.render() for t in chosen))
    return " OR ".join(unique)


def match_terms(query: str) -> list[tuple[tuple[str, ...], bool]]:
    """The terms ``build_match`` puts in the expression, as (lower-case pieces, is a prefix).

    Re-scoring (``project_bm25``) needs the same terms bm25 summed over, not the expression text.
    """
    items = _lex(query)
    terms = [item for item in items if isinstance(item, _Term)]
    if not any(isinstance(item, str) for item in items):
        content_terms = [t for t in terms if t.prefix or len(t.pieces) > 1 or t.pieces[0] not in STOP_WORDS]
        terms = content_terms or terms
    unique = {t.render(): t for t in terms}
    return [(t.pieces, t.prefix) for t in unique.values()]


def is_plain(query: str) -> bool:
    """Whether ``build_match`` ORs the terms of ``query`` (it holds no ``AND``, ``OR`` or ``NOT``),
    so a row matches exactly when it holds one of ``match_terms``."""
    return not any(isinstance(item, str) for item in _lex(query))


def render_term(pieces: tuple[str, ...], prefix: bool) -> str:
    """One term as ``build_match`` writes it (quoted, so it can never be syntax)."""
    return _Term(pieces, prefix).render()


def _lex(query: str) -> list[_Term | str]:
    """The query's terms and operators. A search lexes its query three times (``build_match``,
    ``match_terms``, ``is_plain``), so a query of a search's length is remembered; a longer text
    (a record's content, checked for near duplicates on import) is not kept."""
    return list(_lexed(query) if len(query) <= _REMEMBERED_CHARS else _lexed.__wrapped__(query))


_REMEMBERED_CHARS = 1000


@lru_cache(maxsize=256)
def _lexed(query: str) -> tuple[_Term | str, ...]:
    items: list[_Term | str] = []
    for match in _LEXER.finditer(query.replace("\x00", " ")):
        quoted, bare = match.group(1), match.group(2)
        if quoted is not None:
            pieces = tuple(p.lower() for p in _PIECES.findall(quoted))
            if pieces:
                items.append(_Term(pieces))
            continue
        if bare in _OPERATORS:
            items.append(bare)
            continue
        prefix = bare.endswith("*")
        pieces = tuple(p.lower() for p in _PIECES.findall(bare))
        if pieces:
            items.append(_Term(pieces, prefix=prefix))
    return tuple(items)


def _with_operators(items: list[_Term | str]) -> str | None:
    """Keep operators only where FTS5 accepts them: between two terms, one at a time."""
    out: list[str] = []
    pending: str | None = None
    for item in items:
        if isinstance(item, str):
            if out:  # an operator before any term is dropped
                pending = item
            continue
        if pending is not None:
            out.append(pending)
            pending = None
        elif out:
            out.append("AND")
        out.append(item.render())
    return " ".join(out) if out else None


def scope_filter(kind: str | None, project: str | None) -> str:
    """The scope-column clauses that restrict a query to one kind and/or one project."""
    clauses = []
    if kind:
        clauses.append(f'scope : "k{kind}"')
    if project:
        clauses.append(f'scope : "p{project.encode("utf-8").hex()}"')
    return " AND ".join(clauses)
