"""A PostgreSQL connection that speaks the part of ``sqlite3`` the store uses (adr/0024).

Why not a second store: every write must pass the one write path (``recall.store.writer``) and
every read the same code, or the two backends drift. So the store's SQL runs unchanged and is
rewritten here, once per statement text (cached), into PostgreSQL's dialect: ``?`` placeholders,
``INSERT OR IGNORE``/``OR REPLACE``, two-argument ``max``/``min``, ``json_each``, ``json_extract``,
``instr``, ``IS ?``, case-insensitive ``LIKE``, ``lastrowid`` and ``total_changes``, and the
``PRAGMA`` reads the store makes. Rows answer by position and by name, like ``sqlite3.Row``.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Any, Self

import psycopg
from psycopg.adapt import Loader

from recall.errors import StoreUnavailable

# Tables whose rows have an ``id`` the database hands out: an INSERT into them returns it.
_PLACEHOLDER = re.compile(
    r"'(?:[^']|'')*'|\?|%|\bIS\s+NOT\s+\?|\bIS\s+\?|\bLIKE\b|(?<![:\w]):[A-Za-z_]\w*|\bchar\(", re.IGNORECASE
)
_INSERT_OR = re.compile(r"^\s*INSERT\s+OR\s+(IGNORE|REPLACE)\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.IGNORECASE)
_INSERT_INTO = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)", re.IGNORECASE)
_PAIR_FUNCTION = re.compile(r"\b(max|min)\(\s*([\w.]+|%s)\s*,", re.IGNORECASE)
_JSON_IDS = re.compile(r"\bSELECT\s+value\s+FROM\s+json_each\(\s*%s\s*\)", re.IGNORECASE)
_JSON_COLUMN = re.compile(r"\bjson_each\((\w+)\)", re.IGNORECASE)
_JSON_EXTRACT = re.compile(r"\bjson_extract\((\w+),\s*'\$\.(\w+)'\)", re.IGNORECASE)
_BEGIN = re.compile(r"^\s*BEGIN(\s+(IMMEDIATE|DEFERRED|EXCLUSIVE))?\s*;?\s*$", re.IGNORECASE)
_PRAGMA = re.compile(r"^\s*PRAGMA\s+(\w+)", re.IGNORECASE)


class PgRow(tuple[Any, ...]):
    """A row that answers by position and by column name, as ``sqlite3.Row`` does."""

    _names: tuple[str, ...] = ()

    def __new__(cls, values: Iterable[Any], names: tuple[str, ...]) -> Self:
        row = super().__new__(cls, values)
        row._names = names
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._names.index(key))
            except ValueError:
                raise IndexError(f"no column named {key}") from None
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


class _NumericLoader(Loader):
    """``sum``/``avg`` answer NUMERIC in PostgreSQL; SQLite's answer is an int (or a float)."""

    def load(self, data: Any) -> int | float:
        value = Decimal(bytes(data).decode())
        return int(value) if value == value.to_integral_value() else float(value)


class PgCursor:
    """The answer to one statement: rows, ``rowcount`` and ``lastrowid``."""

    def __init__(self, rows: list[PgRow], rowcount: int, lastrowid: int | None) -> None:
        self._rows = rows
        self._next = 0
        self.rowcount = rowcount
        self.lastrowid = lastrowid

    def fetchone(self) -> PgRow | None:
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchall(self) -> list[PgRow]:
        rest = self._rows[self._next :]
        self._next = len(self._rows)
        return rest

    def fetchmany(self, size: int = 1) -> list[PgRow]:
        rest = self._rows[self._next : self._next + size]
        self._next += len(rest)
        return rest

    def __iter__(self) -> Iterator[PgRow]:
        while (row := self.fetchone()) is not None:
            yield row


class PgConnection:
    """One psycopg connection behind the ``sqlite3.Connection`` methods the store calls."""

    dialect = "postgresql"

    def __init__(
        self, url: str, conflict_keys: Mapping[str, Sequence[str]], id_tables: Iterable[str]
    ) -> None:
        try:
            self._raw = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise StoreUnavailable(describe_pg_error(exc, url)) from exc
        self._raw.adapters.register_loader("numeric", _NumericLoader)
        # A keyword search's bitmap of matching rows stays exact (not lossy pages rechecked row by row).
        self._raw.execute(b"SET work_mem = '32MB'")
        self.url = url
        self._keys = dict(conflict_keys)
        self._id_tables = frozenset(id_tables)
        self.total_changes = 0
        self.in_transaction = False
        self.lock = threading.RLock()

    @property
    def raw(self) -> psycopg.Connection[Any]:
        """The psycopg connection itself, for what has no SQLite spelling (COPY, full-text search)."""
        return self._raw

    def close(self) -> None:
        self._raw.close()

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> PgCursor:
        special = self._special(sql)
        if special is not None:
            return special
        text, returns_id = translate(sql, frozenset(self._keys), self._id_tables, _keys_tuple(self._keys))
        with self._errors():
            cursor = self._raw.execute(text.encode(), _params(params))
            rows: list[PgRow] = []
            lastrowid = None
            if cursor.description is not None:
                names = tuple(column.name for column in cursor.description)
                rows = [PgRow(values, names) for values in cursor.fetchall()]
                if returns_id:
                    lastrowid = rows[0][0] if rows else None
                    rows = []
            count = cursor.rowcount if cursor.rowcount is not None else -1
        if count > 0 and _is_change(text):
            self.total_changes += count
        return PgCursor(rows, count, lastrowid)

    def cursor(self) -> PgConnection:
        """Statements on this connection (PgRow is a tuple already, so ``row_factory`` changes nothing)."""
        return self

    row_factory: Any = None

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> PgCursor:
        text, _ = translate(sql, frozenset(self._keys), frozenset(), _keys_tuple(self._keys))
        batch = [_params(params) for params in seq]
        if not batch:
            return PgCursor([], 0, None)
        with self._errors(), self._raw.cursor() as cursor:
            cursor.executemany(text.encode(), batch)
            count = cursor.rowcount if cursor.rowcount is not None else -1
        if count > 0:
            self.total_changes += count
        return PgCursor([], count, None)

    def _special(self, sql: str) -> PgCursor | None:
        """Transaction control and PRAGMAs, which PostgreSQL spells differently or does not need."""
        word = sql.strip().rstrip(";").strip().upper()
        if _BEGIN.match(sql):
            with self._errors():
                self._raw.execute(b"BEGIN")
            self.in_transaction = True
            return PgCursor([], -1, None)
        if word in ("COMMIT", "ROLLBACK", "END"):
            with self._errors():
                self._raw.execute(b"COMMIT" if word != "ROLLBACK" else b"ROLLBACK")
            self.in_transaction = False
            return PgCursor([], -1, None)
        if word == "SELECT SQLITE_VERSION()":
            return PgCursor([PgRow(("0.0.0",), ("version",))], -1, None)  # no FTS5 options to set
        if "INTO SEARCH_INDEX (SEARCH_INDEX" in word:
            return PgCursor([], 0, None)  # an FTS5 command; the PostgreSQL index needs none
        pragma = _PRAGMA.match(sql)
        if pragma is None:
            return None
        name = pragma.group(1).lower()
        if name == "data_version":
            return PgCursor([PgRow((self._data_version(),), ("data_version",))], -1, None)
        if name == "wal_checkpoint":
            return PgCursor([PgRow((0, 0, 0), ("busy", "log", "checkpointed"))], -1, None)
        if name == "user_version":
            from recall.migrations import latest_version

            return PgCursor([PgRow((latest_version(),), ("user_version",))], -1, None)
        if name == "database_list":
            return PgCursor([PgRow((0, "main", self.url), ("seq", "name", "file"))], -1, None)
        return PgCursor([], -1, None)

    def _data_version(self) -> int:
        """A number that changes when any session commits a change to the vectors or the index."""
        row = self._raw.execute(
            b"SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_all_tables "
            b"WHERE relname IN ('embeddings', 'search_index')"
        ).fetchone()
        return int(row[0]) if row else 0

    def _errors(self) -> _ErrorMap:
        return _ErrorMap(self)


class _ErrorMap:
    """psycopg errors as the ``sqlite3`` errors the store's callers already handle."""

    def __init__(self, conn: PgConnection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc is None or not isinstance(exc, psycopg.Error):
            return
        if isinstance(exc, psycopg.errors.IntegrityError):
            raise sqlite3.IntegrityError(str(exc).strip()) from exc
        if isinstance(exc, psycopg.OperationalError) and not isinstance(
            exc, psycopg.errors.QueryCanceled | psycopg.errors.LockNotAvailable
        ):
            raise StoreUnavailable(describe_pg_error(exc, self._conn.url)) from exc


def describe_pg_error(exc: BaseException, url: str) -> str:
    """One line: what is wrong with the server, and what to do about it (no password in it)."""
    where = redact_url(url)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"cannot use the PostgreSQL database {where} ({text}); check that the server runs and the URL is right"


def redact_url(url: str) -> str:
    """The URL without its password, for messages and logs."""
    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", url)


def _params(params: Sequence[Any] | Mapping[str, Any]) -> Sequence[Any] | Mapping[str, Any]:
    if isinstance(params, Mapping):
        return {key: _value(value) for key, value in params.items()}
    return tuple(_value(value) for value in params)


def _value(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def _is_change(text: str) -> bool:
    return text.lstrip()[:6].upper() in ("INSERT", "UPDATE", "DELETE")


def _keys_tuple(keys: Mapping[str, Sequence[str]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(sorted((table, tuple(columns)) for table, columns in keys.items()))


@lru_cache(maxsize=4096)
def translate(
    sql: str,
    tables: frozenset[str],
    id_tables: frozenset[str],
    keys: tuple[tuple[str, tuple[str, ...]], ...],
) -> tuple[str, bool]:
    """The PostgreSQL text of a SQLite statement, and whether it was given ``RETURNING id``."""
    text = _PLACEHOLDER.sub(_placeholder, sql)
    text = _PAIR_FUNCTION.sub(
        lambda m: f"{'greatest' if m.group(1).lower() == 'max' else 'least'}({m.group(2)},", text
    )
    text = _JSON_COLUMN.sub(r"json_array_elements_text(\1::json) AS json_each(value)", text)
    text = _JSON_IDS.sub(
        "SELECT value::bigint FROM json_array_elements_text(%s::json) AS json_each(value)", text
    )
    text = _JSON_EXTRACT.sub(r"(\1::jsonb ->> '\2')", text)
    text = re.sub(r"\binstr\(", "strpos(", text, flags=re.IGNORECASE)
    text = _LATERAL.sub(_lateral, text)
    text = _alias_subqueries(text)
    text = _insert_or(text, dict(keys))
    text = _qualify_upsert(text)
    returns_id = False
    plain = _INSERT_INTO.match(text)
    if plain and plain.group(1) in id_tables and "RETURNING" not in text.upper():
        text = text.rstrip().rstrip(";") + " RETURNING id"
        returns_id = True
    return text, returns_id


_UPSERT = re.compile(r"^\s*INSERT\s+INTO\s+(\w+).*?\bDO\s+UPDATE\s+SET\s+", re.IGNORECASE | re.DOTALL)


def _qualify_upsert(text: str) -> str:
    """In ``ON CONFLICT DO UPDATE SET x = x + 1`` PostgreSQL wants the old row's ``x`` named by table."""
    match = _UPSERT.match(text)
    if match is None:
        return text
    table, head, tail = match.group(1), text[: match.end()], text[match.end() :]
    assigned = re.findall(r"(?:^|,)\s*(\w+)\s*=", tail)
    if not assigned:
        return text
    bare = re.compile(r"(?<![.\w])(" + "|".join(map(re.escape, assigned)) + r")\b(?!\s*=[^=])")
    return head + bare.sub(lambda m: f"{table}.{m.group(1)}", tail)


_LATERAL = re.compile(
    r"JOIN\s+(\w+)\s+(\w+)\s+ON\s+\2\.id\s+IN\s+\(\s*SELECT\s+(\w+)\.id\s+FROM\s+\1\s+\3\s+"
    r"(WHERE.*?ORDER\s+BY\s+\3\.(\w+)\s+LIMIT\s+\d+)\s*\)",
    re.IGNORECASE | re.DOTALL,
)


def _lateral(match: re.Match[str]) -> str:
    """``JOIN t n ON n.id IN (SELECT p.id FROM t p WHERE <correlated> ORDER BY p.x LIMIT k)``, the
    next rows of each row: PostgreSQL runs that subquery once per pair of rows (a fifth of a second
    for 50 search hits), a LATERAL join once per row."""
    table, alias, inner, body, order = match.groups()
    return f"JOIN LATERAL (SELECT {inner}.id, {inner}.{order} FROM {table} {inner} {body}) {alias} ON true"


_FROM_PAREN = re.compile(r"\bFROM\s*\(", re.IGNORECASE)
_ALIAS_NEEDED = re.compile(r"\s*($|\)|WHERE\b|ORDER\b|GROUP\b|LIMIT\b|UNION\b|;)", re.IGNORECASE)


def _alias_subqueries(text: str) -> str:
    """``FROM (SELECT ...)`` without a name, which SQLite allows and PostgreSQL 15 does not."""
    position = 0
    while (match := _FROM_PAREN.search(text, position)) is not None:
        end = _closing(text, match.end() - 1)
        position = match.end()
        if end is None:
            break
        if _ALIAS_NEEDED.match(text, end + 1):
            text = f"{text[: end + 1]} AS _sub{position}{text[end + 1 :]}"
    return text


def _closing(text: str, start: int) -> int | None:
    """The index of the parenthesis closing the one at ``start`` (quoted text skipped)."""
    depth, quoted = 0, False
    for index in range(start, len(text)):
        char = text[index]
        if char == "'":
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth -= 1
            if depth == 0:
                return index
    return None


def _placeholder(match: re.Match[str]) -> str:
    found = match.group(0)
    if found.startswith("'"):
        return found.replace("%", "%%")
    upper = found.upper()
    if found == "?":
        return "%s"
    if found == "%":
        return "%%"
    if found.startswith(":"):
        return f"%({found[1:]})s"
    if upper == "CHAR(":
        return "chr("
    if upper.startswith("IS") and "NOT" in upper:
        return "IS DISTINCT FROM %s"
    if upper.startswith("IS"):
        return "IS NOT DISTINCT FROM %s"
    return "ILIKE"


def _insert_or(text: str, keys: Mapping[str, tuple[str, ...]]) -> str:
    """``INSERT OR IGNORE`` skips a row that collides; ``INSERT OR REPLACE`` overwrites it (and a
    table with a ``seq`` gives the row a new one, as SQLite's delete-and-insert does)."""
    match = _INSERT_OR.match(text)
    if match is None:
        return text
    action, table, columns = match.group(1).upper(), match.group(2), match.group(3)
    head = f"INSERT INTO {table} ({columns})"
    body = head + text[match.end() :].rstrip().rstrip(";")
    if action == "IGNORE":
        return body + " ON CONFLICT DO NOTHING"
    target = keys.get(table)
    if not target:
        raise ValueError(f"no unique key known for INSERT OR REPLACE INTO {table}")
    names = [name.strip() for name in columns.split(",") if name.strip() not in target]
    sets = [f"{name} = excluded.{name}" for name in names]
    if table == "embeddings":
        sets.append("seq = nextval(pg_get_serial_sequence('embeddings', 'seq'))")
    return body + f" ON CONFLICT ({', '.join(target)}) DO UPDATE SET {', '.join(sets)}"
