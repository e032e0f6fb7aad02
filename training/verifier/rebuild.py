"""`make models`: rebuild the shipped verifier from ../shared/data, end to end.

    python -m training.verifier.rebuild [--out build/verifier] [--install]

1. build the train / dev / fit sets (training/verifier/build.py);
2. fine-tune the MiniLM (training/finetune.py) with the settings below: the top three layers
   and a mean-pooling head over cached bottom layers, two epochs (the run f3 of
   benchmarks/results/verifier_training_2026-12-02.md peaked at epoch 2);
3. export to ONNX and quantize to int8 (training/export.py);
4. fit the policy threshold and the high-confidence score (training/verifier/fit.py);
5. write MODEL_CARD.md beside the weights (training/verifier/card.py).

With `--install` the result is copied to `src/citebound/models/verifier/` (the folder the
package data rule `models/*/*` ships); the fitted threshold and high-confidence score are
printed. One thread: the result is the same on every
machine up to float rounding, and on a shared 2-core host one thread trained faster than two.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from training.common import REPO
from training.export import export
from training.finetune import parser as finetune_parser
from training.finetune import train
from training.verifier import build, card, fit

SETTINGS = [
    "--epochs", "2", "--batch", "16", "--lr", "1e-4", "--warmup", "0.06",
    "--max-length", "192", "--evals-per-epoch", "2", "--curve-pairs", "600",
    "--threads", "1", "--written-repeat", "2", "--seed", "20261202", "--head", "mean",
    "--freeze-layers", "3",
]  # fmt: skip
SHIPPED = REPO / "src" / "citebound" / "models" / "verifier"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "build" / "verifier")
    ap.add_argument("--install", action="store_true", help="replace the shipped model")
    args = ap.parse_args()
    t0 = time.time()
    counts = build.build(args.out)
    model_dir = args.out / "model"
    summary = train(finetune_parser().parse_args(
        ["--data", str(args.out), "--out", str(model_dir), *SETTINGS]
    ))  # fmt: skip
    onnx_dir = args.out / "onnx"
    exported = export(model_dir, onnx_dir, args.out, sample=400)
    fitted = fit.fit(onnx_dir, args.out, None, 0.02)
    card.write(onnx_dir, counts=counts, training=summary, exported=exported, fitted=fitted,
               command="make models", seconds=time.time() - t0)  # fmt: skip
    if args.install:
        SHIPPED.mkdir(parents=True, exist_ok=True)
        for name in ("model.onnx", "tokenizer.json", "config.json", "MODEL_CARD.md"):
            shutil.copy(onnx_dir / name, SHIPPED / name)
    print(f"verifier_threshold = {fitted['threshold']}")
    print(f"high_confidence_support = {fitted['high_confidence_support']}")


if __name__ == "__main__":
    main()
