"""A random sample of entities read from the real transcripts, each with its evidence, to check by hand.

Imports the real transcripts in tests/fixtures (Claude Code: spotter, agent-history; the pi-mono
sessions rewritten as Claude Code lines; Codex: agent-history, localpush, whose text is redacted)
into a fresh database, then draws ``--count`` entities uniformly at random (seeded) from every
entity those imports produced, and prints for each its type, name, relation and the line it was read
from: the link's own detail (a command line, an error line) or the start of the message text around
the name. A person marks each line right or wrong; adr/0019 records the result.

    python bench/entity_sample.py [--count 100] [--seed 19] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

FIXTURES = REPO / "tests" / "fixtures"
REAL = {
    "claude": [
        FIXTURES / "transcripts" / "claude-code" / "real",
        FIXTURES / "connections" / "pi-reshaped",
    ],
    "codex": [FIXTURES / "transcripts" / "codex" / "real"],
}
EXCERPT = 160


def sample(count: int, seed: int) -> list[dict[str, object]]:
    from adapters import get_adapter
    from recall.ingest import run_import
    from recall.store import Store

    with (
        tempfile.TemporaryDirectory(prefix="recall-entity-sample-") as tmp,
        Store(Path(tmp) / "sample.db") as store,
    ):
        for host, paths in REAL.items():
            run_import(store, [get_adapter(host)], paths=paths, embed_budget_seconds=0)
        conn = store.connection
        ids = [row[0] for row in conn.execute("SELECT id FROM entities ORDER BY id")]
        chosen = sorted(random.Random(seed).sample(ids, min(count, len(ids))))
        return [_evidence(conn, entity_id) for entity_id in chosen] + [{"population": len(ids)}]


def _evidence(conn, entity_id: int) -> dict[str, object]:  # type: ignore[no-untyped-def]
    entity = conn.execute("SELECT project, type, name FROM entities WHERE id = ?", (entity_id,)).fetchone()
    link = conn.execute(
        "SELECT l.relation, l.detail, m.content, v.name FROM entity_links l "
        "LEFT JOIN messages m ON m.id = l.message_id LEFT JOIN entities v ON v.id = l.via_id "
        "WHERE l.entity_id = ? ORDER BY l.id LIMIT 1",
        (entity_id,),
    ).fetchone()
    relation, detail, content, via = link
    source = detail or _around(content or "", entity["name"])
    return {
        "project": entity["project"],
        "type": entity["type"],
        "name": entity["name"],
        "relation": relation,
        "via": via,
        "evidence": " ".join(str(source).split())[:EXCERPT],
    }


def _around(text: str, name: str) -> str:
    """The text near where ``name`` (or its base name) appears, else the text's start."""
    for needle in (name, name.rsplit("/", 1)[-1], name.split(":", 1)[0]):
        at = text.find(needle)
        if at >= 0:
            return text[max(0, at - 60) : at + len(needle) + 60]
    return text[:EXCERPT]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = sample(args.count, args.seed)
    population = rows.pop()["population"]
    if args.json:
        print(json.dumps({"population": population, "sample": rows}, indent=2, ensure_ascii=False))
        return
    print(f"{len(rows)} of {population} entities (seed {args.seed})")
    for number, row in enumerate(rows, start=1):
        via = f" via {row['via']}" if row["via"] else ""
        print(f"{number:3}. [{row['type']}] {row['name']}  ({row['relation']}{via}, {row['project']})")
        print(f"     {row['evidence']}")


if __name__ == "__main__":
    main()
