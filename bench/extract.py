"""Extraction on labelled real transcripts: per-kind recall and precision, records per 100 messages,
import throughput with and without the extraction stage, and the share of brief tokens that carry a
labelled memory.

    python bench/extract.py [--json] [--fixtures DIR] [--labels FILE] [--messages 20000] [--no-briefs]

The labelled files (bench/extract/labels.json, written by the rules in bench/extract/GUIDE.md) are
imported into a fresh database through the real `recall import` path, extraction included. A label
is found when an extracted record of its kind has the quoted message among its sources or carries
the quote; precision is the share of extracted records of a kind that carry at least one label of
that kind. Records that carry none are listed ("unmatched") so a person can read them and count the
true memories among them (the manual precision the issue asks for).

Throughput uses bench/import_bench.py's generated corpus: one import as recall runs it, and one with
the extraction stage replaced by a no-op, on fresh databases, embeddings off.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH.parent), str(BENCH)]

KINDS = ("decision", "learning", "breadcrumb")


def quality(fixtures: Path, labels_path: Path) -> dict[str, Any]:
    from labelled import carries, import_files, label_messages, load

    from recall.store import Store

    data = load(labels_path)
    with tempfile.TemporaryDirectory(prefix="recall-extract-bench-") as tmp:
        store = Store(Path(tmp) / "bench.db")  # the store embeds nothing; the import's budget is 0
        messages = import_files(store, fixtures, data.files)
        resolved = [(label, label_messages(store, fixtures, label)) for label in data.labels]
        unresolved = [label.statement for label, found in resolved if not found]
        records = _extracted(store)
        store.close()
    per_kind: dict[str, Any] = {}
    unmatched = []
    for kind in KINDS:
        labels = [(label, found) for label, found in resolved if label.kind == kind]
        ours = [r for r in records if r["kind"] == kind]
        hit_labels = [
            label
            for label, found in labels
            if any(carries(label, found, kind, r["content"], r["sources"]) for r in ours)
        ]
        matched = [
            r
            for r in ours
            if any(carries(label, found, kind, r["content"], r["sources"]) for label, found in labels)
        ]
        unmatched += [r for r in ours if r not in matched]
        per_kind[kind] = {
            "labels": len(labels),
            "found": len(hit_labels),
            "recall": _ratio(len(hit_labels), len(labels)),
            "extracted": len(ours),
            "matching_a_label": len(matched),
            "precision": _ratio(len(matched), len(ours)),
            "missed": [label.statement for label, _ in labels if label not in hit_labels],
        }
    return {
        "messages": messages,
        "records": len(records),
        "records_per_100_messages": round(100 * len(records) / messages, 2) if messages else 0.0,
        "per_kind": per_kind,
        "by_rule": dict(Counter(r["rule"] for r in records).most_common()),
        "unresolved_labels": unresolved,
        "unmatched": [
            {k: r[k] for k in ("kind", "rule", "confidence", "session", "content")} for r in unmatched
        ],
    }


def _extracted(store: Any) -> list[dict[str, Any]]:
    rows = []
    for code, kind in enumerate(KINDS, start=1):
        sql = (
            f"SELECT r.id, r.content, l.rule, l.confidence, s.external_id FROM {kind}s r "
            f"JOIN extraction_lineage l ON l.kind_code = {code} AND l.record_id = r.id "
            "LEFT JOIN sessions s ON s.id = l.session_id"
        )
        for row in store.connection.execute(sql):
            sources = [
                m[0]
                for m in store.connection.execute(
                    "SELECT message_id FROM record_sources WHERE kind_code = ? AND record_id = ?",
                    (code, row[0]),
                )
            ]
            rows.append({"kind": kind, "id": row[0], "content": row[1], "rule": row[2], "confidence": row[3],
                         "session": row[4], "sources": sources})  # fmt: skip
    return rows


def throughput(messages: int, sessions: int) -> dict[str, Any]:
    from import_bench import generate

    from adapters import get_adapter
    from recall.extract import stage
    from recall.ingest import run_import
    from recall.store import Store

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="recall-extract-throughput-") as tmp:
        root = Path(tmp)
        lines = generate(root / "claude", messages, sessions)
        real = stage.extract_sessions
        for label in ("with_extraction", "without_extraction"):
            # The stage replaced by a no-op in the importing process, everything else as shipped; a
            # read-ahead worker still runs the rules on new sessions for it (adr/0045).
            if label == "without_extraction":
                stage.extract_sessions = lambda *args, **kwargs: stage.ExtractionReport()
            store = Store(root / f"{label}.db")
            started, cpu = time.perf_counter(), time.process_time()
            summary = run_import(
                store, [get_adapter("claude")], paths=[root / "claude"], embed_budget_seconds=0
            )
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
            store.close()
            results[label] = {
                "messages": summary.messages_added,
                "seconds": round(seconds, 2),
                "messages_per_second": round(summary.messages_added / seconds),
                # CPU time of this process: steadier than wall time when the machine is shared.
                "cpu_seconds": round(cpu, 2),
                "messages_per_cpu_second": round(summary.messages_added / cpu),
            }
        stage.extract_sessions = real
    return {"lines_generated": lines, **results}


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def main() -> None:
    from labelled import FIXTURES, LABELS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--fixtures", type=Path, default=FIXTURES, help="the folder label paths are relative to"
    )
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--messages", type=int, default=20_000, help="size of the throughput corpus")
    parser.add_argument("--sessions", type=int, default=80)
    parser.add_argument(
        "--no-briefs", action="store_true", help="skip the brief measurement (loads the model)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result: dict[str, Any] = {
        "quality": quality(args.fixtures, args.labels),
        "throughput": throughput(args.messages, args.sessions),
    }
    if not args.no_briefs:
        from brief_share import run as brief_run

        result["briefs"] = brief_run(args.fixtures, args.labels, 1500)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    _print(result)


def _print(result: dict[str, Any]) -> None:
    q = result["quality"]
    print(
        f"{q['records']} records from {q['messages']:,} messages: {q['records_per_100_messages']} per 100 (target ≤ 6)"
    )
    for kind, row in q["per_kind"].items():
        recall = "n/a" if row["recall"] is None else f"{row['recall']:.0%}"
        precision = "n/a" if row["precision"] is None else f"{row['precision']:.0%}"
        print(f"  {kind:10} recall {recall:>5} ({row['found']}/{row['labels']})  precision {precision:>5} "
              f"({row['matching_a_label']}/{row['extracted']})")  # fmt: skip
        for statement in row["missed"]:
            print(f"      missed: {statement}")
    for record in q["unmatched"]:
        print(
            f"  unmatched {record['kind']} [{record['rule']} {record['confidence']}] {record['content'][:150]}"
        )
    t = result["throughput"]
    for label in ("with_extraction", "without_extraction"):
        row = t[label]
        print(f"import {label.replace('_', ' ')}: {row['messages']:,} messages in {row['seconds']} s = "
              f"{row['messages_per_second']:,}/s ({row['messages_per_cpu_second']:,} per CPU second)")  # fmt: skip
    if "briefs" in result:
        b = result["briefs"]
        print(f"briefs: {b['labelled_share']:.1%} of {b['tokens']:,} tokens carry a labelled memory")


if __name__ == "__main__":
    main()
