"""How often the reader puts a sentence that states the answer first, per source.

    python -m training.reader.evaluate --model build/reader/onnx [--data build/reader]

For every dev question with at least one positive and one negative candidate, the candidates
are scored with the exported ONNX model (the run-time scorer, `validate.nli.OnnxNLIModel`,
over `(passage, question)` as trained) and two baselines: the cosine of the shipped MiniLM
embedder (the base the reader is fine-tuned from, as dense retrieval uses it) and word
overlap (shared words of four letters or more: what a lexical ranking sees; a floor, not a fair
rival, since the builder chose the other-paragraph negatives by that same overlap). Reported
per source: questions, P@1 (the top candidate states the answer) and MRR.
Writes eval.json beside the model.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from citebound.index.embedder import default_embedder
from citebound.validate.nli import OnnxNLIModel
from training.common import REPO, Pair, read_jsonl
from training.reader.sources import words

Scorer = Callable[[Sequence[Pair]], list[float]]


def groups(pairs: Sequence[Pair]) -> dict[tuple[str, str], list[Pair]]:
    """Candidates per (source, question), in file order; only those with both labels."""
    by: dict[tuple[str, str], list[Pair]] = defaultdict(list)
    for p in pairs:
        by[(p.source, p.claim)].append(p)
    return {k: v for k, v in by.items() if len({p.label for p in v}) == 2}


def overlap(cands: Sequence[Pair]) -> list[float]:
    return [float(len(words(p.claim) & words(p.premise))) for p in cands]


def ranks(scores: list[float], labels: list[int]) -> int:
    """1-based rank of the best positive; ties are broken against the positive."""
    best = max(s for s, y in zip(scores, labels, strict=True) if y)
    return 1 + sum(s >= best for s, y in zip(scores, labels, strict=True) if not y)


def evaluate(by: dict[tuple[str, str], list[Pair]], scorer: Scorer) -> dict[str, dict[str, float]]:
    per: dict[str, list[int]] = defaultdict(list)
    for (source, _), cands in sorted(by.items()):
        per[source].append(ranks(scorer(cands), [p.label for p in cands]))
    per["all"] = [r for source in sorted(per) for r in per[source]]
    return {
        s: {
            "questions": len(r),
            "p_at_1": round(sum(x == 1 for x in r) / len(r), 4),
            "mrr": round(sum(1 / x for x in r) / len(r), 4),
        }
        for s, r in per.items()
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--model", type=Path, required=True, help="exported ONNX folder")
    ap.add_argument("--data", type=Path, default=REPO / "build" / "reader")
    ap.add_argument("--max-length", type=int, default=128)
    args = ap.parse_args()
    model = OnnxNLIModel(args.model, max_length=args.max_length)
    by = groups(list(read_jsonl(args.data / "dev.jsonl")))

    def reader(cands: Sequence[Pair]) -> list[float]:
        return model.entailment_probabilities([(p.premise, p.claim) for p in cands])

    embedder = default_embedder()

    def cosine(cands: Sequence[Pair]) -> list[float]:
        vectors = embedder.embed([cands[0].claim] + [p.premise for p in cands])
        return [float(v @ vectors[0]) for v in vectors[1:]]  # rows are unit length

    result = {
        "reader": evaluate(by, reader),
        "minilm_cosine": evaluate(by, cosine),
        "word_overlap": evaluate(by, overlap),
    }
    (args.model / "eval.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print("| source | questions | P@1 reader / MiniLM cosine / overlap | MRR, same order |")
    print("|---|---|---|---|")
    for s, r in result["reader"].items():
        c, o = result["minilm_cosine"][s], result["word_overlap"][s]
        print(
            f"| {s} | {r['questions']} | {r['p_at_1']:.3f} / {c['p_at_1']:.3f} / "
            f"{o['p_at_1']:.3f} | {r['mrr']:.3f} / {c['mrr']:.3f} / {o['mrr']:.3f} |"
        )


if __name__ == "__main__":
    main()
