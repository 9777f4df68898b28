"""A message's search vector: its own vector mixed with those of the turns around it (adr/0011).

An answer rarely repeats the words of the question it answers, so a turn alone is a poor target;
embedding each turn together with the turns before it fixed that on LoCoMo but cost three times
the model time per message (89-118 messages/s on 2 cores). Mixing gets most of the window's lift
from single-turn vectors: each message is embedded alone (one model pass per turn, ~300/s) and the
vector index searches ``normalise(v_i + Σ w_d · v_{i+d})`` over the embedded turns next to it in
its session. The stored vectors stay the plain vectors of each message's own text, so the weights
are a search setting: changing them needs no re-embedding, and a turn's successor that arrives in
a later import re-mixes it when the index picks the new vector up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

# Offset from the message (negative: earlier turns) → weight. Chosen by 5-fold cross-validation over
# LoCoMo conversations (bench/locomo.py --cv): two turns back, one ahead, decaying by distance.
MIX_WEIGHTS: dict[int, float] = {-2: 0.1, -1: 0.3, 1: 0.3}


def mix_turns(
    vectors: NDArray[np.float32], sessions: NDArray[np.int64], weights: dict[int, float] | None = None
) -> NDArray[np.float32]:
    """Unit rows of ``vectors`` mixed with their neighbours; rows must be in (session, turn) order.

    Neighbours are the rows ``d`` places away that belong to the same session, so the first and last
    turns of a session simply have fewer of them.
    """
    weights = MIX_WEIGHTS if weights is None else weights
    out = vectors.astype(np.float32, copy=True)
    for offset, weight in weights.items():
        distance = abs(offset)
        if weight == 0 or distance == 0 or distance >= len(out):
            continue
        if offset < 0:  # row i takes row i - d
            target, source = out[distance:], vectors[:-distance]
        else:  # row i takes row i + d
            target, source = out[:-distance], vectors[distance:]
        # Sessions are long runs of rows: add everywhere, then put back the few rows whose neighbour
        # lies in another session (2.5x faster than masking every row).
        crossings = np.flatnonzero(sessions[distance:] != sessions[:-distance])
        kept = target[crossings]
        target += weight * source
        target[crossings] = kept
    norms = np.sqrt(np.einsum("ij,ij->i", out, out))[:, None]
    out /= np.where(norms > 0, norms, 1.0)
    return out
