"""How often a brief for a task that names a file carries that file's decisions and learnings.

The corpus is built from the real transcripts (spotter, and the pi-mono sessions rewritten as Claude
Code lines; tests/fixtures): they are imported, and for every file a session edited, the sentences
that people and agents wrote about it (messages that mention it) become its records (up to
``--per-file``, decisions and learnings in turn). Sentences that name no file become distractor
records (``--distractors``). Each task
names one such file by its base name (``Fix a bug in session_live.ex``, ``Refactor ...``, ``Add
tests for ...``). ``context_for_agent`` is asked for each task with the real embedding model, once
with connections switched off (search alone, as before adr/0019) and once with them on, and the share
of the file's records found in the brief is reported for both.

    python bench/connections_brief.py [--per-file 2] [--distractors 150] [--max-tokens 1500] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SOURCES = [
    REPO / "tests" / "fixtures" / "transcripts" / "claude-code" / "real" / "spotter",
    REPO / "tests" / "fixtures" / "connections" / "pi-reshaped",
]
TASKS = ("Fix a bug in {name}", "Refactor {name}", "Add tests for {name}")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if 30 <= len(s.strip()) <= 300]


def corpus(
    store, per_file: int, distractors: int
) -> tuple[list[tuple[str, str, list[tuple[str, int]]]], int]:  # type: ignore[no-untyped-def]
    """(project, file, its records as (kind, id)) for each edited file that people wrote about, and
    how many distractor records there are (fewer than asked when the transcripts run out)."""
    from recall.models import RecordKind
    from recall.store import NewRecord

    conn = store.connection
    edited = conn.execute(
        "SELECT DISTINCT e.id, e.project, e.name FROM entities e JOIN entity_links l ON l.entity_id = e.id "
        "WHERE e.type = 'file' AND l.relation = 'edited' AND e.name NOT LIKE '/%' ORDER BY e.id"
    ).fetchall()
    files = []
    used: set[str] = set()
    for entity_id, project, name in edited:
        base = name.rsplit("/", 1)[-1]
        said = conn.execute(
            "SELECT DISTINCT m.content FROM entity_links l JOIN messages m ON m.id = l.message_id "
            "WHERE l.entity_id = ? AND l.relation = 'mentions' ORDER BY m.id",
            (entity_id,),
        ).fetchall()
        lines = list(dict.fromkeys(s for (content,) in said for s in sentences(content) if base in s))
        records = []
        for number, line in enumerate([line for line in lines if line not in used][:per_file]):
            kind = (RecordKind.DECISION, RecordKind.LEARNING)[number % 2]
            used.add(line)
            records.append((kind.value, store.add(NewRecord(kind, line, project))))
        if records:
            files.append((project, name, records))
    spare = conn.execute(
        "SELECT project, content FROM messages WHERE origin = 'agent' AND kind = 'text' ORDER BY id"
    ).fetchall()
    added = 0
    for project, content in spare:
        for line in sentences(content):
            if added < distractors and line not in used and not re.search(r"\w\.\w{1,5}\b", line):
                kind = RecordKind.DECISION if added % 2 else RecordKind.LEARNING
                store.add(NewRecord(kind, line, project))
                used.add(line)
                added += 1
    return files, added


def measure(store, files, max_tokens: int, connected: bool, embedder) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """``embedder`` is the real model: the briefs are hybrid, as recall builds them."""
    import recall.brief

    original = recall.brief._connected
    if not connected:
        recall.brief._connected = lambda *args: []  # search alone, as before connections
    try:
        found = wanted = complete = 0
        for number, (project, name, records) in enumerate(files):
            task = TASKS[number % len(TASKS)].format(name=name.rsplit("/", 1)[-1])
            brief = recall.brief.context_for_agent(
                store, task, project, max_tokens=max_tokens, embedder=embedder
            )
            shown = {(item.kind, item.id) for item in brief.items}
            hits = sum(record in shown for record in records)
            found, wanted, complete = found + hits, wanted + len(records), complete + (hits == len(records))
    finally:
        recall.brief._connected = original
    return {
        "records_in_brief": round(found / wanted, 3),
        "tasks_with_every_record": round(complete / len(files), 3),
        "records": wanted,
    }


def main() -> None:
    from adapters import get_adapter
    from recall.ingest import run_import
    from recall.search.embedder import get_embedder
    from recall.search.semantic import embed_pending
    from recall.store import Store

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-file", type=int, default=2)
    parser.add_argument("--distractors", type=int, default=150)
    parser.add_argument("--max-tokens", type=int, default=1500)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="recall-brief-bench-") as tmp, Store(Path(tmp) / "b.db") as store:
        run_import(store, [get_adapter("claude")], paths=SOURCES, embed_budget_seconds=0)
        files, distractors = corpus(store, args.per_file, args.distractors)
        embedder = get_embedder()
        embed_pending(store, embedder)
        result = {
            "tasks": len(files),
            "per_file": args.per_file,
            "distractors": distractors,
            "max_tokens": args.max_tokens,
            "before": measure(store, files, args.max_tokens, connected=False, embedder=embedder),
            "after": measure(store, files, args.max_tokens, connected=True, embedder=embedder),
        }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{result['tasks']} tasks naming a file, {result['before']['records']} records about those files "
        f"(up to {args.per_file} each), {result['distractors']} distractor records, {args.max_tokens} tokens"
    )
    for label in ("before", "after"):
        r = result[label]
        print(
            f"{label:<6} records in the brief {r['records_in_brief']:.1%}, "
            f"tasks with every record {r['tasks_with_every_record']:.1%}"
        )


if __name__ == "__main__":
    main()
