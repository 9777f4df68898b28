"""How much of a brief carries a labelled memory: context_for_agent for tasks written for the labelled
fixture sessions, and the start-of-session brief of their project.

Each brief's lines are grouped by the record they show (``- [<kind> #<id>, ...]`` and its quoted
continuation lines); a group carries a labelled memory when its record does (bench/labelled.py). The
share is the tokens of carrying groups over the brief's tokens (recall.brief.estimate_tokens),
headings and the sufficiency line included.

    python bench/brief_share.py [--json] [--fixtures DIR] [--labels FILE]
    python bench/brief_share.py --code /path/to/older/checkout   # the same briefs from another recall

``--code`` imports recall from another checkout (one from before extraction, say) and measures its
briefs the same way; the script only uses what such a checkout has.
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

BENCH = Path(__file__).resolve().parent
# ``decision#3`` since adr/0020, ``decision #3`` before it (``--code`` may point at such a checkout).
_ITEM = re.compile(r"^- \[(decision|learning|breadcrumb|session_summary|message) ?#(\d+)")

if TYPE_CHECKING:
    from labelled import Label

    from recall.search.embedder import Embedder
    from recall.store import Store


def measure(
    store: Store,
    root: Path,
    labels: list[Label],
    tasks: list[dict[str, str]],
    budget: int,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    """``embedder`` makes the task briefs hybrid (meaning and keywords), as recall builds them."""
    from labelled import label_messages

    from recall.brief import context_for_agent, session_start_brief

    # A checkout from before adr/0020 has no ``embedder`` argument: its briefs took the store's own.
    given = {"embedder": embedder} if "embedder" in inspect.signature(context_for_agent).parameters else {}
    resolved = [(label, label_messages(store, root, label)) for label in labels]
    briefs = []
    for task in tasks:
        text = context_for_agent(store, task["task"], task["project"], max_tokens=budget, **given).text
        briefs.append({"task": task["task"], **_share(store, text, resolved)})
    for project in sorted({task["project"] for task in tasks}):
        text = session_start_brief(store, project, max_tokens=budget)
        briefs.append({"task": f"(session start: {project})", **_share(store, text, resolved)})
    total = sum(b["tokens"] for b in briefs)
    carrying = sum(b["labelled_tokens"] for b in briefs)
    return {
        "budget": budget,
        "briefs": briefs,
        "tokens": total,
        "labelled_tokens": carrying,
        "labelled_share": round(carrying / total, 3) if total else 0.0,
    }


def _share(store: Store, text: str, resolved: list[tuple[Label, set[int]]]) -> dict[str, Any]:
    from labelled import carries, record_sources

    from recall.brief import estimate_tokens

    groups: list[tuple[str, int, list[str]]] = []
    for line in text.splitlines():
        match = _ITEM.match(line)
        if match:
            groups.append((match.group(1), int(match.group(2)), [line]))
        elif groups and line.startswith("  "):
            groups[-1][2].append(line)
    labelled_tokens, carried = 0, []
    for kind, row_id, lines in groups:
        content, sources = ("", [row_id]) if kind == "message" else record_sources(store, kind, row_id)
        hits = [
            label
            for label, messages in resolved
            if carries(label, messages, kind, content or "\n".join(lines), sources)
        ]
        if hits:
            labelled_tokens += sum(estimate_tokens(line + "\n") for line in lines)
            carried.append({"item": f"{kind} #{row_id}", "labels": [h.statement for h in hits]})
    tokens = estimate_tokens(text)
    return {
        "tokens": tokens,
        "items": len(groups),
        "labelled_tokens": labelled_tokens,
        "labelled_share": round(labelled_tokens / tokens, 3) if tokens else 0.0,
        "carried": carried,
    }


def run(fixtures: Path, labels_path: Path, budget: int) -> dict[str, Any]:
    from labelled import import_files, load

    from recall.search.embedder import get_embedder
    from recall.search.semantic import embed_pending
    from recall.store import Store

    data = load(labels_path)
    embedder = get_embedder()
    with tempfile.TemporaryDirectory(prefix="recall-brief-share-") as tmp:
        store = Store(Path(tmp) / "bench.db")
        import_files(store, fixtures, data.files)
        embed_pending(store, embedder)
        result = measure(store, fixtures, data.labels, data.tasks, budget, embedder)
        store.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=None, help="the folder label paths are relative to")
    parser.add_argument("--labels", type=Path, default=BENCH / "extract" / "labels.json")
    parser.add_argument("--budget", type=int, default=1500, help="max_tokens of each brief")
    parser.add_argument("--code", type=Path, default=BENCH.parent, help="the recall checkout to measure")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sys.path[:0] = [str(args.code.resolve()), str(BENCH)]
    from labelled import FIXTURES

    result = run(args.fixtures or FIXTURES, args.labels, args.budget)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    for brief in result["briefs"]:
        print(
            f"{brief['labelled_share']:6.1%}  {brief['labelled_tokens']:5} of {brief['tokens']:5} tokens  {brief['task']}"
        )
    print(
        f"overall: {result['labelled_share']:.1%} of {result['tokens']:,} brief tokens carry a labelled memory"
    )


if __name__ == "__main__":
    main()
