"""Build the reader's train / dev sets from ../shared/data and the F´ question sets.

    python -m training.reader.build [--out build/reader] [--limit N] [--all-squad]

Writes train.jsonl and dev.jsonl (`training.common.Pair`: premise = the candidate passage,
claim = the question, label 1 when the passage states the answer) and counts.json (pairs per
split, source, kind and label). The pairs train with the same `training.finetune` as the
verifier. Deterministic: the same data give byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

from training.common import REPO, Pair, dedupe, shared_data, write_jsonl
from training.reader import sources

SEED = 20261207


def build(
    out: Path, *, limit: int | None = None, all_squad: bool = False, data: Path | None = None
) -> dict[str, object]:
    data = data or shared_data()
    splits: dict[str, list[Pair]] = {"train": [], "dev": []}
    streams = [
        sources.squad(data, all_train=all_squad),
        sources.halueval_qa(data),
        sources.scifact(data),
        sources.fprime(data, REPO / "benchmarks" / "data"),
    ]
    for stream in streams:
        for i, (split, pair) in enumerate(stream):
            if limit is not None and i >= limit:
                break
            splits[split].append(pair)
    counts: dict[str, object] = {
        "held_out_fprime_sets": list(sources.HELD_OUT),
        "squad_dev_articles": "all trained" if all_squad else "3, 4, 7, 8",
    }
    for name, pairs in splits.items():
        pairs = dedupe(pairs)
        random.Random(SEED).shuffle(pairs)
        write_jsonl(out / f"{name}.jsonl", pairs)
        by = Counter(f"{p.source}/{p.kind}/{p.label}" for p in pairs)
        counts[name] = {
            "pairs": len(pairs),
            "positive": sum(p.label for p in pairs),
            "questions": len({(p.source, p.claim) for p in pairs}),
            "by_source_kind_label": dict(sorted(by.items())),
        }
    (out / "counts.json").write_text(json.dumps(counts, indent=1, sort_keys=True) + "\n")
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "build" / "reader")
    ap.add_argument("--limit", type=int, default=None, help="pairs per source (smoke runs)")
    ap.add_argument(
        "--all-squad",
        action="store_true",
        help="train on all eight SQuAD articles (a final model; no SQuAD dev check left)",
    )
    args = ap.parse_args()
    counts = build(args.out, limit=args.limit, all_squad=args.all_squad)
    for name in ("train", "dev"):
        c = counts[name]
        assert isinstance(c, dict)
        print(f"{name}: {c['pairs']} pairs, {c['positive']} positive, {c['questions']} questions")


if __name__ == "__main__":
    main()
