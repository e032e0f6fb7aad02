"""End-to-end evaluation of `ask` on real data: refusal, evidence, gate tuning, latency.

    PYTHONPATH=src python benchmarks/bench_end_to_end.py [--parts squad,latency] [--work DIR]
        [--squad-sample N] [--scifact-queries N] [--demo-rounds N] [--json FILE] [--reuse]

SQuAD 2.0 (`../shared/data/squad2-dev`): the paragraphs of articles 1-4 are indexed (one
document per paragraph). Every question of articles 5-8 must be refused before any LLM call
(refusal rate); for every answerable question of articles 1-4 a gold answer must appear in the
selected evidence (evidence hit rate). Extractive provider, no network.

Gate tuning: one run per preset with the gate open records the similarities the gate sees and
the evidence it would select; `citebound.eval.gate_tuning` prices every threshold offline.
Thresholds are chosen on the tune split (in-corpus questions of articles 1-2, out-of-corpus
5-6) and reported on the held-out split (3-4 vs 7-8). Then the *shipped* presets are run for
real, so the headline numbers are measured, not simulated.

Latency: `Pipeline.run` (the whole `ask`, audit included) on the demo corpus and on SciFact,
interleaved question by question with LlamaIndex's CitationQueryEngine + MockLLM over the same
chunks, the same vectors, the same query embedder and the same top-k (variants default and
numpy), and with LlamaIndex embedding the question itself with HuggingFaceEmbedding on the same
MiniLM weights (variant hf). Reported apart: the provider (LLM) time and the query-embedding
time (identical work for citebound, default and numpy).

Sized for 2 shared cores: SQuAD uses every question by default (about 2,800, a few minutes per
preset), latency uses 200 SciFact claims and 20 rounds of the 11 demo questions. Every part
skips with a message when its data folder is absent.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _e2e_latency import run_latency
from _e2e_squad import run_squad

from citebound.eval.data import dataset_dir


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--parts", default="squad,latency", help="comma list: squad, latency")
    ap.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "citebound-bench-e2e",
        help="stores and caches (reused across runs)",
    )
    ap.add_argument("--squad-sample", type=int, default=0, help="questions per group (0 = all)")
    ap.add_argument("--scifact-queries", type=int, default=200, help="SciFact claims timed")
    ap.add_argument("--demo-rounds", type=int, default=20, help="rounds of the demo questions")
    ap.add_argument("--reuse", action="store_true", help="reuse cached open-gate outcomes")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args(argv)
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    random.seed(0)
    results: dict[str, Any] = {}
    if "squad" in parts:
        folder = dataset_dir("squad2-dev")
        if folder is None:
            print("SKIP squad: ../shared/data/squad2-dev is absent (set CITEBOUND_SHARED_DATA)")
        else:
            results["squad"] = run_squad(folder, args.work / "squad", args.squad_sample, args.reuse)
    if "latency" in parts:
        results["latency"] = run_latency(
            args.work, dataset_dir("scifact"), args.scifact_queries, args.demo_rounds
        )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2, sort_keys=True), encoding="utf-8")
        print(f"\nresults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
