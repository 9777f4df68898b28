"""Single-turn message vectors mixed with their session neighbours in the index (adr/0011)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from recall.migrations import latest_version, migrate
from recall.models import KIND_CODES, RecordKind
from recall.search import hybrid, semantic
from recall.search.embedder import Embedder, FakeEmbedder
from recall.search.neighbours import MIX_WEIGHTS, mix_turns
from recall.search.vectors import VectorIndex, quantize
from recall.store import NewRecord, Store
from recall.transcript import MessageKind, Origin, Role, Transcript, TranscriptMessage

if TYPE_CHECKING:
    from recall.results import Hit

MESSAGE = KIND_CODES[RecordKind.MESSAGE]
DECISION = KIND_CODES[RecordKind.DECISION]
TOPICS = [
    "alpha cache warmup",
    "bravo index rebuild",
    "charlie deploy rollback",
    "delta schema upgrade",
    "echo queue backpressure",
    "foxtrot lint config",
    "golf retry budget",
    "hotel thread pool",
]


# -- helpers ------------------------------------------------------------------------------------


def session(external_id: str, turns: int, *, tool_after: int | None = None) -> Transcript:
    """The first ``turns`` text turns of a session; a tool result (never embedded) after ``tool_after``."""
    messages: list[TranscriptMessage] = []
    for n in range(turns):
        human = n % 2 == 0
        messages.append(
            TranscriptMessage(
                key=f"{external_id}-{n}",
                role=Role.USER if human else Role.ASSISTANT,
                text=f"{external_id} {TOPICS[n % len(TOPICS)]} number{n}",
                origin=Origin.HUMAN if human else Origin.AGENT,
            )
        )
        if n == tool_after:
            messages.append(
                TranscriptMessage(
                    key=f"{external_id}-tool",
                    role=Role.TOOL,
                    text="exit code 0 and a long listing",
                    origin=Origin.TOOL,
                    kind=MessageKind.TOOL_RESULT,
                )
            )
    return Transcript(host="test", external_id=external_id, messages=tuple(messages))


def message_ids(store: Store, external_id: str) -> list[int]:
    """Ids of a session's embedded messages, in turn order."""
    rows = store.connection.execute(
        "SELECT m.id FROM messages m JOIN sessions s ON s.id = m.session_id "
        "JOIN embeddings e ON e.kind_code = ? AND e.row_id = m.id "
        "WHERE s.external_id = ? ORDER BY m.ordinal",
        (MESSAGE, external_id),
    ).fetchall()
    return [row[0] for row in rows]


def stored(store: Store, code: int, row_id: int) -> np.ndarray:
    """The dequantised vector SQLite holds for a row."""
    scale, blob = store.connection.execute(
        "SELECT scale, vector FROM embeddings WHERE kind_code = ? AND row_id = ?", (code, row_id)
    ).fetchone()
    return np.frombuffer(blob, dtype=np.int8).astype(np.float32) * np.float32(scale)


def position(index: VectorIndex, code: int, row_id: int) -> int:
    """Where the live (not hidden) copy of a row sits in the index."""
    found = np.flatnonzero((index.codes == code) & (index.ids == row_id))
    assert found.size == 1, (code, row_id, found)
    return int(found[0])


def vector(index: VectorIndex, code: int, row_id: int) -> np.ndarray:
    p = position(index, code, row_id)
    return index.vectors[p].astype(np.float32) * index.scales[p]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def loaded(store: Store, embedder: Embedder) -> VectorIndex:
    """A new index, fully loaded from the store."""
    index = VectorIndex(semantic.model_key(store, embedder), embedder.dim)
    index.refresh(store.connection)
    return index


# -- mix_turns ----------------------------------------------------------------------------------


def test_a_row_gets_the_weighted_sum_of_its_same_session_neighbours() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(7, 5)).astype(np.float32)
    sessions = np.array([1, 1, 1, 1, 2, 2, 2], dtype=np.int64)
    weights = {-2: 0.1, -1: 0.3, 1: 0.3}

    mixed = mix_turns(vectors, sessions, weights)

    v = vectors.astype(np.float64)
    expected = np.stack(
        [
            v[0] + 0.3 * v[1],  # first turn of session 1: no earlier turns
            v[1] + 0.3 * v[0] + 0.3 * v[2],
            v[2] + 0.1 * v[0] + 0.3 * v[1] + 0.3 * v[3],
            v[3] + 0.1 * v[1] + 0.3 * v[2],  # last turn of session 1: row 4 belongs to session 2
            v[4] + 0.3 * v[5],  # first of session 2: rows 2 and 3 are another session's
            v[5] + 0.3 * v[4] + 0.3 * v[6],
            v[6] + 0.1 * v[4] + 0.3 * v[5],
        ]
    )
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert mixed.dtype == np.float32 and mixed.shape == vectors.shape
    np.testing.assert_allclose(mixed, expected, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(mixed, axis=1), 1.0, atol=1e-6)


def test_rows_of_another_session_never_contribute() -> None:
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(6, 8)).astype(np.float32)
    sessions = np.array([4, 4, 4, 9, 9, 9], dtype=np.int64)
    changed = vectors.copy()
    changed[3:] = rng.normal(size=(3, 8))  # session 9 becomes something else entirely

    before = mix_turns(vectors, sessions)
    after = mix_turns(changed, sessions)

    np.testing.assert_array_equal(before[:3], after[:3])
    assert not np.allclose(before[3:], after[3:])
    # Control: had the two sessions been one, session 4's last turn would have changed.
    joined = np.zeros(6, dtype=np.int64)
    assert not np.allclose(mix_turns(vectors, joined)[2], mix_turns(changed, joined)[2])


def test_the_default_weights_are_the_chosen_ones_and_no_weights_only_normalise() -> None:
    rng = np.random.default_rng(5)
    vectors = (rng.normal(size=(5, 4)) * 3).astype(np.float32)
    sessions = np.zeros(5, dtype=np.int64)

    alone = mix_turns(vectors, sessions, {})

    np.testing.assert_allclose(alone, vectors / np.linalg.norm(vectors, axis=1, keepdims=True), atol=1e-6)
    np.testing.assert_array_equal(mix_turns(vectors, sessions), mix_turns(vectors, sessions, MIX_WEIGHTS))
    assert not np.allclose(mix_turns(vectors, sessions), alone)
    assert MIX_WEIGHTS == {-2: 0.1, -1: 0.3, 1: 0.3}


def test_a_zero_row_stays_zero_and_short_inputs_work() -> None:
    vectors = np.zeros((1, 3), dtype=np.float32)
    assert np.array_equal(mix_turns(vectors, np.zeros(1, dtype=np.int64)), vectors)
    empty = mix_turns(np.zeros((0, 3), dtype=np.float32), np.zeros(0, dtype=np.int64))
    assert empty.shape == (0, 3)


# -- the vector index ---------------------------------------------------------------------------


def test_messages_are_embedded_as_their_own_text_alone(store: Store) -> None:
    store.import_transcripts([session("s1", 4)], project="p")
    semantic.embed_pending(store, FakeEmbedder())

    ids = message_ids(store, "s1")
    texts = [
        store.connection.execute("SELECT content FROM messages WHERE id = ?", (i,)).fetchone()[0] for i in ids
    ]
    q, scales = quantize(FakeEmbedder().embed_documents(texts))
    expected = q.astype(np.float32) * scales[:, None]

    assert len(ids) == 4
    for row_id, want in zip(ids, expected, strict=True):
        np.testing.assert_allclose(stored(store, MESSAGE, row_id), want, atol=1e-6)


def test_an_incremental_refresh_remixes_earlier_turns_like_a_full_load(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = FakeEmbedder()
    store.import_transcripts([session("s1", 4, tool_after=1), session("other", 3)], project="p")
    semantic.embed_pending(store, embedder)
    index = loaded(store, embedder)
    first = message_ids(store, "s1")
    assert len(first) == 4
    last = first[-1]
    last_before = vector(index, MESSAGE, last)
    last_bits_before = index.bits[:, position(index, MESSAGE, last)].copy()
    last_stored_before = stored(store, MESSAGE, last)
    others = message_ids(store, "other")
    others_before = np.stack([vector(index, MESSAGE, i) for i in others])

    outcome = store.import_transcripts([session("s1", 7, tool_after=1)], project="p")
    assert (outcome.added, outcome.updated) == (3, 0)
    assert semantic.embed_pending(store, embedder).embedded >= 3
    resets: list[int] = []
    reset = VectorIndex._reset
    monkeypatch.setattr(VectorIndex, "_reset", lambda self: (resets.append(1), reset(self))[1])
    index.refresh(store.connection)
    assert resets == []  # the rows were appended, not reloaded: the incremental path ran
    monkeypatch.undo()
    fresh = loaded(store, embedder)

    ids = message_ids(store, "s1")
    assert ids[:4] == first and len(ids) == 7
    assert len(index) == len(fresh)
    for row_id in ids + others:
        a, b = position(index, MESSAGE, row_id), position(fresh, MESSAGE, row_id)
        got = index.vectors[a].astype(np.float32) * index.scales[a]
        want = fresh.vectors[b].astype(np.float32) * fresh.scales[b]
        assert cosine(got, want) > 0.999, row_id
        assert index.scales[a] == pytest.approx(fresh.scales[b], rel=1e-3), row_id
        assert np.abs(index.vectors[a].astype(int) - fresh.vectors[b].astype(int)).max() <= 1, row_id
        np.testing.assert_array_equal(index.bits[:, a], fresh.bits[:, b], err_msg=str(row_id))
    # The old last turn now has a successor: its search vector moved, its stored vector did not.
    last_after = vector(index, MESSAGE, last)
    assert cosine(last_before, last_after) < 0.99
    np.testing.assert_array_equal(stored(store, MESSAGE, last), last_stored_before)
    assert not np.array_equal(index.bits[:, position(index, MESSAGE, last)], last_bits_before)
    # A session that received nothing new keeps its vectors exactly.
    np.testing.assert_array_equal(np.stack([vector(index, MESSAGE, i) for i in others]), others_before)
    # And the re-mixed vector is what mixing the stored single-turn vectors gives.
    hand = mix_turns(np.stack([stored(store, MESSAGE, i) for i in ids]), np.zeros(len(ids), dtype=np.int64))
    assert cosine(last_after, hand[3]) > 0.999


def test_the_cached_index_lets_an_old_turn_be_found_by_its_new_successor(store: Store) -> None:
    """Searching the words of a turn imported later also finds the turn before it, already in memory."""
    embedder = FakeEmbedder()
    store.import_transcripts([session("s1", 3)], project="p")
    semantic.embed_pending(store, embedder)
    index = semantic.vector_index(store, embedder)
    query = embedder.embed_query(f"{TOPICS[3]} number3")  # the words of turn 3 only
    old_last = message_ids(store, "s1")[2]
    before = index.cosines_for(query, [(MESSAGE, old_last)])[(MESSAGE, old_last)]

    store.import_transcripts([session("s1", 6)], project="p")
    semantic.embed_pending(store, embedder)
    assert semantic.vector_index(store, embedder) is index  # the cached object, refreshed in place

    ids = message_ids(store, "s1")
    hits = {row_id: score for _, row_id, score in index.search(query, k=6, kinds=[MESSAGE])}
    assert abs(before) < 0.05
    assert max(hits, key=hits.__getitem__) == ids[3]
    assert hits[old_last] > 0.15  # 0.3 of its successor's vector joined it
    assert hits[ids[0]] < 0.05  # three turns away: no share of turn 3


def test_mixing_never_crosses_sessions_in_the_index(store: Store) -> None:
    embedder = FakeEmbedder()
    decision = store.add(NewRecord(RecordKind.DECISION, "use sqlite for storage", "p"))
    second = store.add(NewRecord(RecordKind.DECISION, "pin numpy in the lock file", "p"))
    store.import_transcripts([session("A", 3, tool_after=0), session("B", 3)], project="p")
    semantic.embed_pending(store, embedder)
    incremental = loaded(store, embedder)
    store.import_transcripts([session("A", 6, tool_after=0), session("B", 6)], project="p")
    semantic.embed_pending(store, embedder)
    incremental.refresh(store.connection)
    fresh = loaded(store, embedder)

    a, b = message_ids(store, "A"), message_ids(store, "B")
    assert len(a) == len(b) == 6
    # The two sessions' rows interleave in the index, so a mix by position alone would cross them.
    order = np.argsort([position(fresh, MESSAGE, i) for i in a + b])
    assert sorted(order[:6].tolist()) != list(range(6))
    for ids in (a, b):
        hand = mix_turns(
            np.stack([stored(store, MESSAGE, i) for i in ids]), np.zeros(len(ids), dtype=np.int64)
        )
        for index in (incremental, fresh):
            for row_id, want in zip(ids, hand, strict=True):
                assert cosine(vector(index, MESSAGE, row_id), want) > 0.999, row_id
    # Control: mixing the same rows in index order as one session gives other vectors for A.
    by_position = sorted(a + b, key=lambda i: position(fresh, MESSAGE, i))
    crossed = mix_turns(
        np.stack([stored(store, MESSAGE, i) for i in by_position]), np.zeros(12, dtype=np.int64)
    )
    assert min(cosine(vector(fresh, MESSAGE, i), crossed[by_position.index(i)]) for i in a) < 0.99
    # Records are never mixed, not even with the record next to them.
    for row_id in (decision, second):
        for index in (incremental, fresh):
            np.testing.assert_allclose(vector(index, DECISION, row_id), stored(store, DECISION, row_id))


# -- the session lift in hybrid ranking ---------------------------------------------------------


def msg(row_id: int) -> int:
    return row_id * 8 + MESSAGE


def test_the_lift_is_the_stretched_best_score_of_the_group() -> None:
    record = 10 * 8 + DECISION  # its id is also the best session's id: still its own group
    fused = {msg(1): 0.9, msg(2): 0.4, msg(3): 0.4, msg(4): 0.1, record: 0.4, msg(5): 0.4}
    sessions = {msg(1): 10, msg(2): 10, msg(3): 20, msg(4): 20}  # message 5: session unknown

    lifted = hybrid.lift_by_session(fused, sessions, 0.3)

    # group bests: session 10 → 0.9, session 20 → 0.4, record → 0.4, message 5 → 0.4; stretched 1, 0, 0, 0
    assert lifted == pytest.approx(
        {
            msg(1): (0.9 + 0.3) / 1.3,
            msg(2): (0.4 + 0.3) / 1.3,
            msg(3): 0.4 / 1.3,
            msg(4): 0.1 / 1.3,
            record: 0.4 / 1.3,
            msg(5): 0.4 / 1.3,
        }
    )
    ranked = sorted(lifted, key=lambda r: -lifted[r])
    assert ranked.index(msg(2)) < ranked.index(msg(3))  # equal before; its session holds the best turn
    assert lifted[msg(2)] > lifted[record]


def test_a_record_is_lifted_by_its_own_score_only() -> None:
    record = 7 * 8 + DECISION
    fused = {msg(7): 1.0, record: 0.2, msg(8): 0.0}
    lifted = hybrid.lift_by_session(fused, {msg(7): 1, msg(8): 2}, 0.5)
    # bests: session 1 → 1.0, record → 0.2, session 2 → 0.0; stretched 1.0, 0.2, 0.0
    assert lifted == pytest.approx({msg(7): 1.0, record: (0.2 + 0.5 * 0.2) / 1.5, msg(8): 0.0})


def test_lifted_scores_stay_between_zero_and_one() -> None:
    rng = np.random.default_rng(17)
    for trial in range(50):
        n = int(rng.integers(1, 40))
        scores = rng.random(n)
        scores[rng.random(n) < 0.1] = 0.0
        scores[rng.random(n) < 0.1] = 1.0
        fused = {msg(i) if i % 3 else i * 8 + DECISION: float(s) for i, s in enumerate(scores)}
        sessions = {r: int(rng.integers(0, 4)) for r in fused if r % 8 == MESSAGE}
        for weight in (0.3, 1.0, 5.0):
            lifted = hybrid.lift_by_session(fused, sessions, weight)
            assert lifted.keys() == fused.keys()
            assert all(0.0 <= s <= 1.0 + 1e-12 for s in lifted.values()), (trial, weight)
            top = max(fused, key=fused.__getitem__)
            # the best row of all gets the full lift of 1.0
            assert lifted[top] == pytest.approx((fused[top] + weight) / (1 + weight))


def test_weight_zero_leaves_scores_unchanged() -> None:
    fused = {msg(1): 0.9, msg(2): 0.4, 3 * 8 + DECISION: 0.2}
    sessions = {msg(1): 1, msg(2): 1}
    assert hybrid.lift_by_session(fused, sessions, 0.0) == fused
    assert hybrid.lift_by_session({}, sessions, 0.3) == {}
    assert hybrid.lift_by_session(fused, sessions, 0.3) != fused


def test_sessions_of_maps_messages_only(store: Store) -> None:
    store.import_transcripts([session("A", 2), session("B", 1)], project="p")
    rows = store.connection.execute(
        "SELECT m.id, m.session_id, s.external_id FROM messages m JOIN sessions s ON s.id = m.session_id "
        "ORDER BY m.id"
    ).fetchall()
    a1, a2, b1 = rows
    assert a1[1] == a2[1] != b1[1]

    found = hybrid.sessions_of(store.connection, [msg(a1[0]), msg(a2[0]), b1[0] * 8 + DECISION, msg(10_000)])

    # a decision whose id is also a message's id has no session; an unknown message neither
    assert found == {msg(a1[0]): a1[1], msg(a2[0]): a2[1]}
    assert hybrid.sessions_of(store.connection, [msg(b1[0])]) == {msg(b1[0]): b1[1]}


# -- with the real model ------------------------------------------------------------------------


def rowid_of(hit: Hit) -> int:
    return hit.id * 8 + KIND_CODES[RecordKind(hit.kind)]


def chat(external_id: str, texts: list[str]) -> Transcript:
    messages = tuple(
        TranscriptMessage(
            key=str(n),
            role=Role.USER if n % 2 == 0 else Role.ASSISTANT,
            text=text,
            origin=Origin.HUMAN if n % 2 == 0 else Origin.AGENT,
        )
        for n, text in enumerate(texts)
    )
    return Transcript(host="test", external_id=external_id, messages=messages)


@pytest.mark.slow
def test_hybrid_search_with_the_session_lift_keeps_scores_in_range(
    real_store: Store, minilm: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_store.import_transcripts(
        [
            chat(
                "db",
                [
                    "Why did last night's database migration fail?",
                    "The disk filled up while the schema upgrade ran.",
                    "Can we add an alert before storage runs out?",
                    "Yes, I added a disk usage alert at eighty percent.",
                ],
            ),
            chat(
                "ui",
                [
                    "The login button is misaligned on the settings page.",
                    "Fixed the CSS flexbox rule for the button row.",
                    "Did the database tests also pass?",
                ],
            ),
        ],
        project="p",
    )
    real_store.add(NewRecord(RecordKind.DECISION, "Move the database to a larger disk", "p"))
    semantic.embed_pending(real_store, minilm)
    calls: list[tuple[dict[int, float], float, dict[int, float]]] = []
    lift = hybrid.lift_by_session

    def spy(fused: dict[int, float], sessions: dict[int, int], weight: float) -> dict[int, float]:
        out = lift(fused, sessions, weight)
        calls.append((dict(fused), weight, out))
        return out

    monkeypatch.setattr(hybrid, "lift_by_session", spy)
    query = "storage ran out during the database upgrade"

    lifted = hybrid.search(real_store, query, mode="hybrid", project="p", limit=50, embedder=minilm)
    plain = hybrid.search(
        real_store, query, mode="hybrid", project="p", limit=50, session_weight=0, embedder=minilm
    )

    assert len(calls) == 2
    (fused_on, weight_on, out_on), (fused_off, weight_off, out_off) = calls
    assert (weight_on, weight_off) == (hybrid.SESSION_WEIGHT, 0)
    positive_on = {rowid: score for rowid, score in out_on.items() if score > 0}
    positive_off = {rowid: score for rowid, score in fused_off.items() if score > 0}
    assert len(lifted) == len(positive_on) >= 7 and len(plain) == len(positive_off) >= 7
    assert all(0.0 < h.score <= 1.0 for h in lifted + plain)  # a zero is no match: never listed
    assert fused_on == pytest.approx(fused_off) and out_off == fused_off
    assert out_on != pytest.approx(fused_on)  # the lift did change something
    assert {rowid_of(h): h.score for h in lifted} == pytest.approx(positive_on)
    assert {rowid_of(h): h.score for h in plain} == pytest.approx(positive_off)
    db_turns = set(message_ids(real_store, "db"))
    assert lifted[0].kind == RecordKind.MESSAGE.value and lifted[0].id in db_turns


# -- the migration ------------------------------------------------------------------------------


def test_the_migration_drops_message_vectors_and_keeps_the_others(db_path: Path) -> None:
    fake = FakeEmbedder()
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path, isolation_level=None)
    migrate(conn, target=4)
    now = "2026-01-01T00:00:00+00:00"
    common = (now, now)
    conn.execute(
        "INSERT INTO embedding_models (model_id, model_hash, dim, created_at) VALUES (?, ?, ?, ?)",
        (fake.model_id, fake.model_hash, fake.dim, now),
    )
    conn.execute(
        "INSERT INTO sessions (id, project, created_at, updated_at, provenance, host, external_id) "
        "VALUES (1, 'p', ?, ?, 'verbatim', 'test', 's1')",
        common,
    )
    texts = ["how do we cache builds", "with a shared cache directory"]
    for n, text in enumerate(texts):
        conn.execute(
            "INSERT INTO messages (id, project, created_at, updated_at, provenance, session_id, "
            "external_id, ordinal, role, origin, kind, content, content_hash) "
            "VALUES (?, 'p', ?, ?, 'verbatim', 1, ?, ?, 'user', 'human', 'text', ?, 'h')",
            (n + 1, *common, str(n), n, text),
        )
    conn.execute(
        "INSERT INTO decisions (id, project, created_at, updated_at, provenance, content) "
        "VALUES (1, 'p', ?, ?, 'user_authored', 'cache builds in CI')",
        common,
    )
    q, scales = quantize(fake.embed_documents(["windowed text 1", "windowed text 2", "cache builds in CI"]))
    rows = [(MESSAGE, 1), (MESSAGE, 2), (DECISION, 1)]
    for (code, row_id), vec, scale in zip(rows, q, scales, strict=True):
        conn.execute(
            "INSERT INTO embeddings (kind_code, row_id, model_key, project, content_hash, scale, vector) "
            "VALUES (?, ?, 1, 'p', 'x', ?, ?)",
            (code, row_id, float(scale), vec.tobytes()),
        )
    decision_vector = q[2].tobytes()
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 4
    conn.close()

    with Store(db_path) as store:
        version = store.connection.execute("PRAGMA user_version").fetchone()[0]
        left = store.connection.execute("SELECT kind_code, row_id, vector FROM embeddings").fetchall()
        key = semantic.model_key(store, fake)
        pending = semantic.count_pending(store, key)
        semantic.embed_pending(store, fake)
        again = stored(store, MESSAGE, 2)

    assert version == latest_version() >= 5
    assert [(r[0], r[1], bytes(r[2])) for r in left] == [(DECISION, 1, decision_vector)]
    assert key == 1  # the model row survived: the decision vector is still this model's
    assert pending[RecordKind.MESSAGE.value] == 2 and pending[RecordKind.DECISION.value] == 0
    q_new, s_new = quantize(fake.embed_documents([texts[1]]))
    np.testing.assert_allclose(again, q_new[0].astype(np.float32) * s_new[0], atol=1e-6)
