"""Notes on disk: one row per project and path, written through the Writer (scrubbed, user_authored).

Which text a note ends up with (a whole replacement, an append, an exact replacement of one passage)
is decided above the store (recall.notes); an edit reads and writes in one transaction, so two
agents appending at once both land.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from recall.errors import NotFound
from recall.models import Provenance

if TYPE_CHECKING:
    from recall.store import Store

_COLUMNS = "id, project, created_at, updated_at, provenance, path, content"


def write_note(
    store: Store, project: str, path: str, change: Callable[[str | None], str]
) -> tuple[int, bool]:
    """Set a note's content to ``change(current content or None)``; returns (id, whether it is new)."""
    with store.transaction() as writer:
        found = store.connection.execute(
            "SELECT id, content FROM notes WHERE project = ? AND path = ?", (project, path)
        ).fetchone()
        content = change(None if found is None else found["content"])
        if found is None:
            return writer.insert(
                "notes", {"project": project, "path": path, "content": content}, Provenance.USER_AUTHORED
            ), True
        writer.update("notes", int(found["id"]), {"content": content})
        return int(found["id"]), False


def note_id(store: Store, project: str, path: str) -> int:
    with store.reading() as conn:
        found = conn.execute(
            "SELECT id FROM notes WHERE project = ? AND path = ?", (project, path)
        ).fetchone()
    if found is None:
        raise NotFound(f"no note at {path} in project {project}; note_list shows the notes there are")
    return int(found[0])


def list_notes(store: Store, project: str | None, folder: str) -> list[dict[str, Any]]:
    """Notes under ``folder`` (every note for ""), by path; ``project=None`` for every project."""
    clauses: list[str] = []
    params: list[Any] = []
    if project is not None:
        clauses.append("project = ?")
        params.append(project)
    if folder:
        clauses.append("substr(path, 1, ?) = ?")
        params += [len(folder) + 1, folder + "/"]
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    with store.reading() as conn:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM notes {where} ORDER BY project, path", params).fetchall()
    return [dict(row) for row in rows]
