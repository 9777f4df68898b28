"""Entity ids looked up many at a time (``Writer.entities``, adr/0046) are the ids ``Writer.entity``
gives one at a time: found when the project has the name, added once when it does not."""

from __future__ import annotations

from pathlib import Path

from recall.store import Store

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_many_at_once_are_the_ids_one_at_a_time_gives(tmp_path: Path) -> None:
    store = Store(tmp_path / "recall.db")
    with store.transaction() as writer:
        known = {f"src/m{i}.py": writer.entity("app", "file", f"src/m{i}.py") for i in range(0, 900, 3)}
        other_project = writer.entity("lib", "file", "src/m1.py")
        # 900 files (three queries' worth), a third known; a command; two names that scrub alike
        pairs = [("file", f"src/m{i}.py") for i in range(900)]
        pairs += [
            ("command", "pytest"),
            ("command", f"curl -H 'token: {SECRET}'"),
            ("command", "curl -H 'token: x'"),
        ]
        ids = writer.entities("app", pairs)
        assert all(ids["file", name] == found for name, found in known.items())
        assert other_project not in ids.values()
        for type_, name in pairs:
            assert writer.entity("app", type_, name) == ids[type_, name]
    count = store.connection.execute("SELECT count(*) FROM entities WHERE project = 'app'").fetchone()[0]
    names = [row[0] for row in store.connection.execute("SELECT name FROM entities WHERE type = 'command'")]
    assert SECRET not in "".join(names)
    assert count == 900 + len(names)
