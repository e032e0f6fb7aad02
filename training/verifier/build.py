"""Build the verifier's train / dev / fit sets from ../shared/data and training/written/.

    python -m training.verifier.build [--out build/verifier] [--limit N]

Writes train.jsonl, dev.jsonl (curve and model card), fit.jsonl (the policy threshold) and
counts.json (pairs per split, source, kind and label). Deterministic: the same data and seed
give byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

from training.common import REPO, Pair, base_model_dir, dedupe, roc_auc, shared_data, write_jsonl
from training.verifier import sources, synth

SEED = 20261202


def length_cue(pairs: list[Pair]) -> dict[str, float]:
    """ROC AUC of the claim's word count alone as a "supported" score, per source.

    About 0.5 means the label cannot be read off the claim's length. The written pairs of
    2026-12 score about 0.69 on dev (supported claims 3-4 words longer), a cue a model learns
    instead of paraphrase (benchmarks/results/verifier_training_2026-12-07.md). Sources with
    one label only are left out. Ties count half (Mann-Whitney)."""
    out: dict[str, float] = {}
    for source in sorted({p.source for p in pairs}):
        rows = [p for p in pairs if p.source == source]
        if len({p.label for p in rows}) == 2:
            lengths = [float(len(p.claim.split())) for p in rows]
            out[source] = round(roc_auc(lengths, [p.label for p in rows]), 3)
    return out


def balance_length(pairs: list[Pair], seed: int = SEED) -> list[Pair]:
    """Per source, keep as many supported as unsupported claims of each word count (a seeded
    choice within the count), so that no source's label can be read off the claim's length."""
    groups: dict[tuple[str, int, int], list[Pair]] = {}
    for p in pairs:
        groups.setdefault((p.source, len(p.claim.split()), p.label), []).append(p)
    rng = random.Random(seed)
    keep: list[Pair] = []
    for (source, n, label), group in sorted(groups.items(), key=lambda kv: kv[0]):
        other = len(groups.get((source, n, 1 - label), []))
        keep.extend(rng.sample(group, min(len(group), other)))
    return keep


def build(
    out: Path, *, limit: int | None = None, written: Path | None = None, balance: bool = False
) -> dict[str, object]:
    data = shared_data()
    count = sources.token_counter(base_model_dir() / "tokenizer.json")
    splits: dict[str, list[Pair]] = {"train": [], "dev": [], "fit": []}
    streams = [
        sources.halueval_qa(data, count),
        sources.halueval_summaries(data, count),
        sources.halueval_dialogue(data, count),
        sources.scifact_claims(data, count),
        sources.written_pairs(written or REPO / "training" / "written", count),
        synth.synthetic_pairs(synth.build_docs(data), count, per_sentence=1.0, seed=SEED),
    ]
    for stream in streams:
        for i, (split, pair) in enumerate(stream):
            if limit is not None and i >= limit:
                break
            splits["dev" if split == "dev" else split].append(pair)
    counts: dict[str, object] = {}
    for name, pairs in splits.items():
        pairs = dedupe(pairs)
        if balance and name != "fit":  # the threshold is fitted on the data as it comes
            pairs = balance_length(pairs)
        random.Random(SEED).shuffle(pairs)
        write_jsonl(out / f"{name}.jsonl", pairs)
        by = Counter(f"{p.source}/{p.kind}/{p.label}" for p in pairs)
        counts[name] = {"pairs": len(pairs), "supported": sum(p.label for p in pairs),
                        "by_source_kind_label": dict(sorted(by.items())),
                        "claim_length_auc": length_cue(pairs)}  # fmt: skip
    (out / "counts.json").write_text(json.dumps(counts, indent=1, sort_keys=True) + "\n")
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "build" / "verifier")
    ap.add_argument("--limit", type=int, default=None, help="pairs per source (smoke runs)")
    ap.add_argument("--written", type=Path, default=None)
    ap.add_argument("--balance-length", action="store_true",
                    help="train/dev: equal supported and unsupported claims per source and word count")  # fmt: skip
    args = ap.parse_args()
    counts = build(args.out, limit=args.limit, written=args.written, balance=args.balance_length)
    for name, c in counts.items():
        assert isinstance(c, dict)
        print(f"{name}: {c['pairs']} pairs, {c['supported']} supported")
        cues = c["claim_length_auc"]
        assert isinstance(cues, dict)
        for source, auc in cues.items():
            if abs(auc - 0.5) > 0.1:
                print(f"  warning: {source}: claim length alone scores AUC {auc} (a length cue)")


if __name__ == "__main__":
    main()
