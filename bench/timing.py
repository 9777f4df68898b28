"""The latency summary every benchmark reports: median and 95th percentile, in milliseconds."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def percentiles(millis: Sequence[float]) -> dict[str, float]:
    """``{"p50_ms", "p95_ms"}`` of per-call milliseconds (p95 by ``statistics.quantiles``, n = 20)."""
    cuts = statistics.quantiles(millis, n=20)
    return {"p50_ms": round(statistics.median(millis), 2), "p95_ms": round(cuts[18], 2)}
