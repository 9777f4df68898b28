"""The vector index's row positions (sorted arrays, issue 16) answer exactly as a dict would."""

from __future__ import annotations

import numpy as np

from recall.search.vectors import _key, _keys, _Positions


def test_positions_match_a_dict_through_resets_updates_and_repeated_keys() -> None:
    rng = np.random.default_rng(3)
    positions, expected = _Positions(), {}
    codes = rng.integers(0, 6, 2_000).astype(np.int8)
    ids = rng.integers(1, 400, 2_000).astype(np.int64)
    first = _keys(codes[:500], ids[:500])
    unique_first, where = np.unique(first, return_index=True)
    positions.reset(unique_first[::-1].copy(), where[::-1].astype(np.int64))
    expected.update(zip(unique_first.tolist(), where.tolist(), strict=True))
    for start in range(500, 2_000, 300):  # batches that repeat keys, inside and across batches
        keys = _keys(codes[start : start + 300], ids[start : start + 300])
        rows = np.arange(start, start + keys.size, dtype=np.int64)
        found = positions.find(keys)
        assert found.tolist() == [expected.get(k, -1) for k in keys.tolist()]
        positions.put(keys, rows)
        expected.update(zip(keys.tolist(), rows.tolist(), strict=True))
    probe = np.array([_key(c, i) for c in range(7) for i in range(0, 420, 7)], dtype=np.int64)
    assert positions.find(probe).tolist() == [expected.get(k, -1) for k in probe.tolist()]
    assert np.all(np.diff(positions.keys) > 0)


def test_an_empty_index_finds_nothing() -> None:
    assert _Positions().find(np.array([1, 2], dtype=np.int64)).tolist() == [-1, -1]
