"""Near-duplicate thresholds, measured on labelled pairs (bench/dedup/pairs.jsonl).

Each pair is two wordings of a decision, learning or breadcrumb, labelled the same memory or not.
Hard negatives share most words and differ in what matters (another library, version, endpoint,
a negation). For every pair this computes three signals:

* ``overlap``: recall's content-word overlap (Jaccard, or 0.9 x containment: recall.extract.text);
* ``bm25``: rank-bm25's BM25Okapi score of one wording against the other, over all the wordings as
  the corpus, divided by the wording's score against itself (0-1, symmetric by taking the mean);
* ``cosine``: all-MiniLM-L6-v2 (the shipped int8 model) between the two.

and reports precision, recall and F1 of each signal alone at its best threshold, and of the rule
recall uses (recall.near_duplicates). A false merge loses a memory, a missed one only costs a row,
so thresholds are chosen for precision first: the best recall at precision 1.0 on this set, when
there is one.

    python bench/near_duplicates.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

from recall.extract.text import content_words, stem
from recall.near_duplicates import COSINE_WITH_OVERLAP, OVERLAP_WITH_COSINE, keyword_overlap, likeness
from recall.search.embedder import get_embedder

PAIRS = Path(__file__).resolve().parent / "dedup" / "pairs.jsonl"
# Written after the thresholds were fixed on PAIRS, and never used to choose them: an honest check.
HELD_OUT = Path(__file__).resolve().parent / "dedup" / "heldout.jsonl"


def load(path: Path = PAIRS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def tokens(text: str) -> list[str]:
    return [stem(word) for word in content_words(text)]


def bm25_scores(pairs: list[dict]) -> list[float]:
    texts = sorted({p["a"] for p in pairs} | {p["b"] for p in pairs})
    index = {text: i for i, text in enumerate(texts)}
    model = BM25Okapi([tokens(text) for text in texts])

    def relative(query: str, doc: str) -> float:
        scores = model.get_scores(tokens(query))
        itself = scores[index[query]]
        return float(scores[index[doc]] / itself) if itself > 0 else 0.0

    return [(relative(p["a"], p["b"]) + relative(p["b"], p["a"])) / 2 for p in pairs]


def prf(predicted: list[bool], truth: list[bool]) -> tuple[float, float, float]:
    tp = sum(p and t for p, t in zip(predicted, truth, strict=True))
    fp = sum(p and not t for p, t in zip(predicted, truth, strict=True))
    fn = sum(t and not p for p, t in zip(predicted, truth, strict=True))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def best_threshold(values: list[float], truth: list[bool]) -> dict:
    """The threshold with the best recall at the highest precision reached, and the best-F1 one."""
    rows = []
    for threshold in sorted(set(np.round(values, 3))):
        p, r, f = prf([v >= threshold for v in values], truth)
        rows.append({"threshold": float(threshold), "precision": p, "recall": r, "f1": f})
    top = max(row["precision"] for row in rows)
    strict = max((row for row in rows if row["precision"] == top), key=lambda row: row["recall"])
    return {"precise": strict, "best_f1": max(rows, key=lambda row: row["f1"])}


def _two_signals(values: list[float], cosine: list[float], truth: list[bool]) -> dict:
    grid = []
    for k in np.arange(0.0, 0.8, 0.05):
        for c in np.arange(0.6, 0.96, 0.01):
            p, r, f = prf([v >= k and co >= c for v, co in zip(values, cosine, strict=True)], truth)
            grid.append({"keyword": round(float(k), 2), "cosine": round(float(c), 2),
                         "precision": p, "recall": r, "f1": f})  # fmt: skip
    top = max(row["precision"] for row in grid)
    return {
        "precise": max((row for row in grid if row["precision"] == top), key=lambda row: row["recall"]),
        "best_f1": max(grid, key=lambda row: row["f1"]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    pairs = load()
    truth = [bool(p["same"]) for p in pairs]
    overlap = [keyword_overlap(p["a"], p["b"]) for p in pairs]
    bm25 = bm25_scores(pairs)
    embedder = get_embedder()
    a = embedder.embed_documents([p["a"] for p in pairs])
    b = embedder.embed_documents([p["b"] for p in pairs])
    cosine = [float(np.dot(x, y)) for x, y in zip(a, b, strict=True)]
    report: dict = {"pairs": len(pairs), "duplicates": sum(truth)}
    for name, values in (("overlap", overlap), ("bm25", bm25), ("cosine", cosine)):
        report[name] = best_threshold(values, truth)
    # Two signals: a keyword signal at least K together with cosine at least C, for a grid of both.
    for name, values in (("overlap+cosine", overlap), ("bm25+cosine", bm25)):
        report[name] = _two_signals(values, cosine, truth)
    rule = [likeness(q["a"], q["b"], c).same_memory for q, c in zip(pairs, cosine, strict=True)]
    without_model = [likeness(q["a"], q["b"], None).same_memory for q in pairs]
    report["without_model"] = dict(zip(("precision", "recall", "f1"), prf(without_model, truth), strict=True))
    report["cosine_steps"] = [
        dict(
            zip(
                ("cosine", "precision", "recall", "f1"),
                (
                    round(float(step), 2),
                    *prf(
                        [
                            likeness(q["a"], q["b"], c).numbers_differ is False
                            and o >= OVERLAP_WITH_COSINE
                            and c >= step
                            for q, c, o in zip(pairs, cosine, overlap, strict=True)
                        ],
                        truth,
                    ),
                ),
                strict=True,
            )
        )
        for step in np.arange(0.70, 0.91, 0.02)
    ]
    held = load(HELD_OUT)
    held_a = embedder.embed_documents([q["a"] for q in held])
    held_b = embedder.embed_documents([q["b"] for q in held])
    held_rule = [
        likeness(q["a"], q["b"], float(np.dot(x, y))).same_memory
        for q, x, y in zip(held, held_a, held_b, strict=True)
    ]
    held_truth = [bool(q["same"]) for q in held]
    report["held_out"] = {
        "pairs": len(held), "duplicates": sum(held_truth),
        **dict(zip(("precision", "recall", "f1"), prf(held_rule, held_truth), strict=True)),
        "false_merges": [(q["a"], q["b"]) for q, x, t in zip(held, held_rule, held_truth, strict=True) if x and not t],
        "missed": [(q["a"], q["b"]) for q, x, t in zip(held, held_rule, held_truth, strict=True) if t and not x],
    }  # fmt: skip
    p, r, f = prf(rule, truth)
    report["recall_rule"] = {
        "overlap_with_cosine": OVERLAP_WITH_COSINE,
        "cosine_with_overlap": COSINE_WITH_OVERLAP, "precision": p, "recall": r, "f1": f,
        "false_merges": [(q["a"], q["b"]) for q, x, t in zip(pairs, rule, truth, strict=True) if x and not t],
        "missed": [(q["a"], q["b"]) for q, x, t in zip(pairs, rule, truth, strict=True) if t and not x],
    }  # fmt: skip
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    _print(report)
    return 0


def _print(report: dict) -> None:
    print(f"{report['pairs']} labelled pairs, {report['duplicates']} of them duplicates")
    for name in ("overlap", "bm25", "cosine", "overlap+cosine", "bm25+cosine"):
        for which in ("precise", "best_f1"):
            row = report[name][which]
            at = {k: v for k, v in row.items() if k not in ("precision", "recall", "f1")}
            print(
                f"{name:15} {which:8} at {at}: precision {row['precision']:.3f} "
                f"recall {row['recall']:.3f} F1 {row['f1']:.3f}"
            )
    rule_row = report["recall_rule"]
    print(
        f"recall's rule (no number differs, overlap >= {OVERLAP_WITH_COSINE}, cosine >= "
        f"{COSINE_WITH_OVERLAP}): precision {rule_row['precision']:.3f} recall {rule_row['recall']:.3f} "
        f"F1 {rule_row['f1']:.3f}"
    )
    for step in report["cosine_steps"]:
        print(
            f"  same rule at cosine >= {step['cosine']:.2f}: precision {step['precision']:.3f} "
            f"recall {step['recall']:.3f} F1 {step['f1']:.3f}"
        )
    alone = report["without_model"]
    print(
        f"without the model (overlap >= 0.9 alone): precision {alone['precision']:.3f} "
        f"recall {alone['recall']:.3f}"
    )
    for a_text, b_text in rule_row["false_merges"]:
        print(f"  false merge: {a_text!r} ~ {b_text!r}")
    for a_text, b_text in rule_row["missed"]:
        print(f"  missed: {a_text!r} ~ {b_text!r}")
    held_row = report["held_out"]
    print(
        f"held-out pairs ({held_row['pairs']}, {held_row['duplicates']} duplicates), same rule: precision "
        f"{held_row['precision']:.3f} recall {held_row['recall']:.3f} F1 {held_row['f1']:.3f}"
    )
    for a_text, b_text in held_row["false_merges"]:
        print(f"  false merge: {a_text!r} ~ {b_text!r}")
    for a_text, b_text in held_row["missed"]:
        print(f"  missed: {a_text!r} ~ {b_text!r}")


if __name__ == "__main__":
    sys.exit(main())
