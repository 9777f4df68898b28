"""bm25 with the statistics of the project searched, over FTS5's candidates (adr/0021).

One FTS5 index holds every project (adr/0003), so FTS5's own bm25 weighs a word by how rare it is
in the whole database. In one project's search that is the wrong scale: a name said in half of a
project's turns is rare in the database and outweighs the words that tell its turns apart. A search
scoped to one project therefore takes FTS5's best ``RESCORE_DEPTH`` rows (the project filter inside
the query, as before) and scores them again with FTS5's bm25 formula, where the number of rows N
and each term's document frequency n are the project's. When the project holds fewer matching rows
than that, they are all the candidates, found without ``bm25()`` (``keyword._matching_rowids``,
adr/0044):

- n per term: ``count(*)`` of the term inside the project, through FTS5 (phrases and prefixes as
  the index matches them); when the candidates are every matching row of the project, the number
  of candidates holding the term, from their positions (adr/0036);
- N: rows carrying the project's scope token, counted once per database state
  (``_Counts``), as each term's n is;
- each candidate's term frequencies: the ``fts5vocab`` instance table of the index, which names
  the stems FTS5 stored, with their column and position (phrases are consecutive positions);
- document lengths from the index's docsize table, the mean length from its averages record.

Query words are stemmed by an FTS5 table with the index's tokenizer in a private in-memory
database, so a stem is always the index's own. Terms in more than half of the project's rows get
FTS5's floor weight (1e-6; its idf is clamped there) and are left out: a candidate that matched
only such terms keeps FTS5's order, a billionth of its FTS5 score (``keyword_candidates``).
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence

from recall.search.fts_query import is_plain, match_terms, render_term

RESCORE_DEPTH = 100  # FTS5 candidates re-scored per search (a larger ``depth`` raises it)
K1 = 1.2  # FTS5's bm25 constants (fts5_aux.c), so scores stay on the scale keyword mode had
B = 0.75
IDF_FLOOR = 1e-6  # FTS5 gives a term found in over half the rows this weight instead of a negative one
TOKENIZER = "porter unicode61 remove_diacritics 2"  # the index's (m0004_porter_index)
COLUMN_WEIGHTS = {"content": 1.0, "detail": 0.5, "tags": 0.8, "scope": 0.0}

Term = tuple[tuple[str, ...], bool]
_local = threading.local()


def project_scores(
    conn: sqlite3.Connection,
    query: str,
    candidates: Iterable[int],
    project: str,
    *,
    complete: bool = False,
    lengths: dict[int, int] | None = None,
) -> dict[int, float]:
    """Index rowid → bm25 with ``project``'s N and n (higher is better), for every candidate.

    ``complete`` says the candidates are every row of the project that matches the query, which
    was a plain OR of its terms with no kind or tag filter (FTS5 returned fewer rows than it was
    asked for): then a term's n is the number of candidates holding it, read from the positions
    fetched for the term frequencies anyway, and FTS5 is not asked to count it (adr/0036).
    ``lengths`` (rowid → tokens) are the candidates' sizes when the caller read them already."""
    rowids = list(candidates)
    terms = match_terms(query)
    if not rowids or not terms:
        return dict.fromkeys(rowids, 0.0)
    scope = _scope(project)
    frequencies: dict[Term, dict[int, float]] | None = None
    counted: dict[Term, int] = {}
    if complete and is_plain(query):  # every matching row of the project is a candidate
        frequencies, exact = _frequencies(conn, terms, rowids)
        for term in exact:
            counted[term] = sum(1 for weighted in frequencies[term].values() if weighted > 0)
    rest = [term for term in terms if term not in counted]
    expressions = [_term_in(term, scope) for term in rest]
    rows, *fts5_counts = _remembered(conn, [scope, *expressions], lambda missing: _counts(conn, missing))
    counted.update(zip(rest, fts5_counts, strict=True))
    if frequencies is None:  # only the terms found in the project are looked for in the candidates
        frequencies = _frequencies(conn, [term for term in terms if counted[term]], rowids)[0]
    # Kept from when N was remembered by the connection's id(), which a new one could reuse: no term
    # can match more rows than the project holds, so the count is raised to what the terms show.
    rows = max([rows, *counted.values()])
    weights = {term: idf(rows, counted[term]) for term in terms if counted[term]}
    mean_length = _mean_length(conn)
    found = {rowid for term in weights for rowid in frequencies[term]}
    if lengths is None:
        lengths = _lengths(conn, sorted(found)) if found else {}
    scores = dict.fromkeys(rowids, 0.0)
    norms = {rowid: _norm(lengths.get(rowid, mean_length), mean_length) for rowid in found}
    for term, weight in weights.items():  # term_score's arithmetic, in its order, without a call per hit
        for rowid, freq in frequencies[term].items():
            scores[rowid] += weight * freq * (K1 + 1) / (freq + norms[rowid])
    return scores


def counted_at_least(conn: sqlite3.Connection, query: str, project: str, rows: int) -> bool:
    """Whether a count remembered for this connection shows one of the terms of ``query`` (a plain
    OR of them) in at least ``rows`` rows of the project: the query then matches that many. A hint
    only, with no statement: the count may be of an earlier database state (adr/0044)."""
    if not is_plain(query):
        return False
    scope = _scope(project)
    expressions = [_term_in(term, scope) for term in match_terms(query)]
    with _counts_lock:
        if _COUNTS.conn is not conn:
            return False
        return any(_COUNTS.counts.get(expression, 0) >= rows for expression in expressions)


def _scope(project: str) -> str:
    return f'scope : "p{project.encode("utf-8").hex()}"'


def _term_in(term: Term, scope: str) -> str:
    """The FTS5 expression counting ``term``'s rows in a project's ``scope``."""
    return f"{{content detail tags}} : ({render_term(*term)}) AND {scope}"


def idf(rows: int, matching: int) -> float:
    """FTS5's idf (fts5_aux.c): a term in more than half the rows gets the floor weight instead of a
    negative one. Shared with the PostgreSQL backend (recall.pg.fulltext), so both rank alike."""
    return max(math.log((rows - matching + 0.5) / (matching + 0.5)), IDF_FLOOR)


def term_score(weight: float, freq: float, length: float, mean_length: float) -> float:
    """One term's bm25 in one row: ``freq`` column-weighted occurrences in a row of ``length`` tokens."""
    return weight * freq * (K1 + 1) / (freq + _norm(length, mean_length))


def _norm(length: float, mean_length: float) -> float:
    return K1 * (1 - B + B * length / mean_length)


class _Counts:
    """Counts of FTS5 expressions for one connection in one database state: a project's rows, and
    the rows of the project holding a query term. A session's searches repeat their words, and the
    count of a common term reads its whole doclist (issue 16). Any commit (this connection's or
    another's) changes the state and starts over, so a remembered count is always the count. The
    connection itself is held, not its ``id()``, so a new connection can never inherit the counts
    of a closed one."""

    def __init__(self) -> None:
        self.conn: sqlite3.Connection | None = None
        self.state: tuple[int, int] = (-1, -1)
        self.counts: dict[str, int] = {}


_COUNTS = _Counts()
_COUNTS_KEPT = 4096
_counts_lock = threading.Lock()


def _remembered(
    conn: sqlite3.Connection, expressions: Sequence[str], count: Callable[[list[str]], list[int]]
) -> list[int]:
    version = int(conn.execute("PRAGMA data_version").fetchone()[0])
    state = (version, conn.total_changes)
    with _counts_lock:
        if _COUNTS.conn is not conn or _COUNTS.state != state or len(_COUNTS.counts) > _COUNTS_KEPT:
            _COUNTS.conn, _COUNTS.state, _COUNTS.counts = conn, state, {}
        known = {e: _COUNTS.counts[e] for e in expressions if e in _COUNTS.counts}
    missing = list(dict.fromkeys(e for e in expressions if e not in known))
    if missing:
        fresh = dict(zip(missing, count(missing), strict=True))
        known.update(fresh)
        with _counts_lock:
            if _COUNTS.conn is conn and _COUNTS.state == state:
                _COUNTS.counts.update(fresh)
    return [known[e] for e in expressions]


def _counts(conn: sqlite3.Connection, expressions: Sequence[str]) -> list[int]:
    """Rows matching each FTS5 expression, in one statement."""
    if not expressions:
        return []
    one = "(SELECT count(*) FROM search_index WHERE search_index MATCH ?)"
    return [
        int(n) for n in conn.execute("SELECT " + ", ".join(one for _ in expressions), expressions).fetchone()
    ]


def _frequencies(
    conn: sqlite3.Connection, terms: Sequence[Term], rowids: Sequence[int]
) -> tuple[dict[Term, dict[int, float]], set[Term]]:
    """Per term: candidate rowid → column-weighted occurrences (a phrase's stems at consecutive
    positions); and the terms these hits are exact for, where every piece is one token of the
    index's tokenizer and no prefix is involved, so a candidate holds the term exactly when
    FTS5's ``{content detail tags} : term`` matches it."""
    tokens = _tokens([piece for pieces, _ in terms for piece in pieces])
    wanted: dict[Term, list[str]] = {}
    exact_terms: set[Term] = set()
    exact: set[str] = set()
    ranges: set[str] = set()
    for pieces, prefix in terms:
        stems = [_first(tokens[piece], piece) for piece in pieces]
        if prefix:  # FTS5 matches the last stem as a prefix; a final y may be an i (fts_query)
            last = pieces[-1]
            low = last[:-1] if len(last) > 3 and last.endswith("y") else stems[-1]
            ranges.add(low)
            exact.update(stems[:-1])
            stems[-1] = "*" + low  # found[] keys a prefix range apart from the same exact stem
        else:
            exact.update(stems)
            if all(len(tokens[piece]) == 1 for piece in pieces):
                exact_terms.add((pieces, prefix))
        wanted[(pieces, prefix)] = stems
    marks = ", ".join(str(int(r)) for r in rowids)
    found: dict[str, dict[tuple[int, str], set[int]]] = {}
    if exact:
        places = ", ".join("?" for _ in exact)
        _collect(conn, found, f"term IN ({places}) AND doc IN ({marks})", tuple(exact), None)
    for low in ranges:
        _collect(
            conn, found, f"term >= ? AND term < ? AND doc IN ({marks})", (low, low + "\U0010ffff"), "*" + low
        )
    return {term: _occurrences(found, stems) for term, stems in wanted.items()}, exact_terms


def _collect(
    conn: sqlite3.Connection,
    found: dict[str, dict[tuple[int, str], set[int]]],
    where: str,
    args: tuple[str, ...],
    prefix: str | None,
) -> None:
    """Positions of stems in candidates, keyed by stem (by ``prefix`` for a prefix range)."""
    sql = f"SELECT term, doc, col, offset FROM temp.recall_instances WHERE {where}"
    try:
        rows = conn.execute(sql, args).fetchall()
    except sqlite3.OperationalError:  # this connection has no vocabulary view yet
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_instances USING fts5vocab(main, search_index, instance)"
        )
        rows = conn.execute(sql, args).fetchall()
    for term, doc, column, offset in rows:
        found.setdefault(prefix or term, {}).setdefault((doc, column), set()).add(offset)


def _occurrences(found: dict[str, dict[tuple[int, str], set[int]]], stems: list[str]) -> dict[int, float]:
    out: dict[int, float] = {}
    first = found.get(stems[0], {})
    rest = [found.get(s, {}) for s in stems[1:]]
    for (doc, column), starts in first.items():
        if rest:
            hits = sum(all(start + n in rest[n - 1].get((doc, column), ()) for n in range(1, len(stems)))
                       for start in starts)  # fmt: skip
        else:
            hits = len(starts)
        if hits:
            out[doc] = out.get(doc, 0.0) + COLUMN_WEIGHTS.get(column, 0.0) * hits
    return out


def _lengths(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, int]:
    marks = ", ".join(str(int(r)) for r in rowids)
    rows = conn.execute(f"SELECT id, sz FROM search_index_docsize WHERE id IN ({marks})")
    return {rowid: row_length(blob) for rowid, blob in rows}


def row_length(blob: bytes) -> int:
    """A row's tokens from its docsize record (one varint per column)."""
    # Column sizes under 128 are one byte each (all bytes ASCII), the common case.
    return sum(blob) if blob.isascii() else sum(_varints(blob))


def _mean_length(conn: sqlite3.Connection) -> float:
    """Tokens per row over the whole index, from FTS5's averages record (row count, then per column)."""
    row = conn.execute("SELECT block FROM search_index_data WHERE id = 1").fetchone()
    values = _varints(row[0]) if row else []
    if not values or values[0] <= 0:
        return 1.0
    return max(1.0, sum(values[1:]) / values[0])


def _varints(blob: bytes) -> list[int]:
    """SQLite's big-endian varints (the 9th byte carries 8 bits), as FTS5 writes its records."""
    out, pos = [], 0
    while pos < len(blob):
        value = 0
        for n in range(9):
            byte = blob[pos]
            pos += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def stem(word: str) -> str:
    """``word``'s stem under the index's tokenizer (the word itself if it yields no token)."""
    return _first(_tokens([word])[word], word)


def _first(tokens: tuple[str, ...], word: str) -> str:
    return tokens[0] if tokens else word


_TOKENS: dict[str, tuple[str, ...]] = {}
_TOKENS_KEPT = 4096


def _tokens(words: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Each word's tokens under the index's tokenizer, in order; the words not seen before are
    tokenized together, in one statement (a query's words used to cost a statement each)."""
    seen = {word: _TOKENS.get(word) for word in words}  # one lookup each: another thread may clear it
    known = {word: tokens for word, tokens in seen.items() if tokens is not None}
    missing = [word for word in dict.fromkeys(words) if word not in known]
    if not missing:
        return known
    db = getattr(_local, "db", None)
    if db is None:
        db = sqlite3.connect(":memory:")
        db.execute(f"CREATE VIRTUAL TABLE words USING fts5(word, content = '', tokenize = '{TOKENIZER}')")
        db.execute("CREATE VIRTUAL TABLE stems USING fts5vocab(words, instance)")
        _local.db = db
    fresh: dict[str, list[str]] = {word: [] for word in missing}
    with db:
        db.execute("INSERT INTO words (words) VALUES ('delete-all')")  # contentless: empties it at once
        db.executemany("INSERT INTO words (rowid, word) VALUES (?, ?)", enumerate(missing, 1))
        for doc, term in db.execute("SELECT doc, term FROM stems ORDER BY doc, offset"):
            fresh[missing[doc - 1]].append(str(term))
    if len(_TOKENS) > _TOKENS_KEPT:
        _TOKENS.clear()
    for word, found in fresh.items():
        known[word] = _TOKENS[word] = tuple(found)
    return known
