"""Export a fine-tuned cross-encoder to ONNX, quantize it to int8, check the int8 model
against the float one, and write the folder the package ships.

    python -m training.export --model build/verifier/model --out build/verifier/onnx \
        --data build/verifier [--sample 400] [--max-length 192]

The int8 model is dynamic-quantized (MatMul/Gemm weights and the embedding table int8, one
scale per output channel, with reduce_range; activations
quantized per batch): reduce_range keeps the u8 x s8 products of onnxruntime's AVX2 kernel from
saturating, so machines with and without VNNI compute the same integers. Agreement = the share
of a fixed dev sample (the first `--sample` dev pairs) on which float and int8 give the same
verdict at 0.5, with the largest score difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from training.common import read_jsonl

TOKENIZER_FILES = ("tokenizer.json",)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def export_float(model_dir: Path, out: Path) -> Path:
    import torch

    from training import heads

    model = heads.Logits(heads.load(model_dir)).eval()
    ids = torch.ones((2, 16), dtype=torch.long)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "model-float.onnx"
    axes = {0: "batch", 1: "sequence"}
    with warnings.catch_warnings():  # the tracer's notes on shape-dependent Python branches
        warnings.simplefilter("ignore")
        _export(model, ids, path, axes)
    return path


def _export(model: Any, ids: Any, path: Path, axes: dict[int, str]) -> None:
    import torch

    torch.onnx.export(
        model,
        (ids, torch.ones_like(ids), torch.zeros_like(ids)),
        str(path),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={
            "input_ids": axes,
            "attention_mask": axes,
            "token_type_ids": axes,
            "logits": {0: "batch"},
        },
        opset_version=17,
        do_constant_folding=True,
        dynamo=False,
    )


def quantize(float_path: Path, out: Path) -> Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    path = out / "model.onnx"
    quantize_dynamic(
        str(float_path),
        str(path),
        weight_type=QuantType.QInt8,
        per_channel=True,  # per-tensor scales lost 1 verdict in 5 on the fine-tuned MiniLM
        reduce_range=True,
        op_types_to_quantize=["MatMul", "Gemm", "Gather"],  # Gather: the 30k x 384 embeddings
    )
    return path


def _scores(
    model: Path, tokenizer: Path, pairs: list[tuple[str, str]], max_length: int
) -> np.ndarray:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(str(tokenizer))
    tok.no_padding()
    tok.enable_truncation(max_length=max_length, strategy="longest_first")
    out = []
    for premise, claim in pairs:
        e = tok.encode(premise, claim)
        ids = np.array([e.ids], dtype=np.int64)
        feeds = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.array([e.type_ids], dtype=np.int64),
        }
        logits = sess.run(["logits"], feeds)[0][0].astype(np.float64)
        z = np.exp(logits - logits.max())
        out.append(z[1] / z.sum())
    return np.array(out)


def export(
    model_dir: Path, out: Path, data: Path, sample: int, max_length: int | None = None
) -> dict[str, object]:
    """Export `model_dir` to `out`. The token limit written to config.json is the one the
    run trained with (its training.json); a mid-run checkpoint has none yet, so `max_length`
    (the run's `--max-length`) or else 256."""
    work = out / "_float"
    float_path = export_float(model_dir, work)
    int8 = quantize(float_path, out)
    for name in TOKENIZER_FILES:
        shutil.copy(model_dir / name, out / name)
    config = json.loads((model_dir / "config.json").read_text("utf-8"))
    config.setdefault("id2label", {"0": "ungrounded", "1": "supported"})
    trained = model_dir / "training.json"
    if trained.is_file():
        max_length = int(json.loads(trained.read_text("utf-8"))["max_length"])
    max_length = max_length or 256
    (out / "config.json").write_text(
        json.dumps(
            {
                "id2label": config["id2label"],
                "model_type": config["model_type"],
                "max_length": max_length,
            },
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )
    pairs = [(p.premise, p.claim) for p in list(read_jsonl(data / "dev.jsonl"))[:sample]]
    t0 = time.perf_counter()
    f = _scores(float_path, out / "tokenizer.json", pairs, max_length)
    t1 = time.perf_counter()
    q = _scores(int8, out / "tokenizer.json", pairs, max_length)
    t2 = time.perf_counter()
    report = {
        "sample": len(pairs),
        "agreement_at_0.5": float(np.mean((f >= 0.5) == (q >= 0.5))) if pairs else None,
        "max_abs_score_difference": float(np.max(np.abs(f - q))) if pairs else None,
        "float_ms_per_pair": round(1000 * (t1 - t0) / max(1, len(pairs)), 2),
        "int8_ms_per_pair": round(1000 * (t2 - t1) / max(1, len(pairs)), 2),
        "float_bytes": float_path.stat().st_size,
        "int8_bytes": int8.stat().st_size,
        "sha256": sha256(int8),
        "tokenizer_sha256": sha256(out / "tokenizer.json"),
    }
    shutil.rmtree(work)
    (out / "export.json").write_text(json.dumps(report, indent=1) + "\n")
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--sample", type=int, default=400)
    ap.add_argument(
        "--max-length",
        type=int,
        default=None,
        help="the run's --max-length, for a checkpoint written before its training.json",
    )
    args = ap.parse_args()
    report = export(args.model, args.out, args.data, args.sample, args.max_length)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
