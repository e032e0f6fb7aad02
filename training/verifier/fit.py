"""Fit a decision threshold and a high-confidence score for a verifier model.

    python -m training.verifier.fit --model build/verifier/onnx [--data build/verifier]

Scored with the run-time code (the validator's sentence split, `validate/premise.py` windows,
`validate/nli.py` scores), never on training data:

- HaluEval answers of the threshold-fit split (dev items with index % 8 == 6): an answer is
  flagged when a hard check fails it (the validator with no support floor) or its weakest
  cited sentence scores below the threshold: what the benchmark measures;
- the dev pairs (held-out SciFact claims, written pairs, synthetic documents), pair by pair;
- every answer the built-in extractive provider gives on SQuAD and F´ (they quote the evidence,
  so each must pass: the threshold stays below the lowest of them, by `--margin`).

The threshold maximises the mean balanced accuracy over those sources with HaluEval QA right
answers passed >= 0.95; `high_confidence_support` is the lowest score at which at least 90% of
the fit answers whose weakest sentence reaches it are right answers. Writes fit.json beside the
model's build data and prints the two TOML lines.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from citebound.eval.grounding import SPLITS, cited, fprime_cases, load_split, squad_cases
from citebound.policy import Policy, load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.text.sanitize import safe_normalize_v1
from citebound.validate import validate_text
from citebound.validate.analysis import cited_sentences
from citebound.validate.nli import OnnxNLIModel
from citebound.validate.premise import window
from citebound.validate.support import is_quotation
from citebound.validate.view import EvidenceView
from training.common import REPO, read_jsonl, shared_data
from training.verifier.sources import PREMISE_BUDGET, halueval_split

GRID = [round(0.02 + 0.01 * i, 2) for i in range(97)]


def judge(model: OnnxNLIModel, claims: Sequence[tuple[str, str]]) -> list[float]:
    """P(supported) of (sentence, cited evidence) pairs, each over the window training used.

    A sentence that quotes its evidence word for word scores 1.0 without a model call, as in
    the validator: the extractive answerer's quotations must not set the threshold's ceiling.
    """
    asked = [i for i, (s, e) in enumerate(claims) if not is_quotation(s, e)]
    windows = [
        window(claims[i][0], claims[i][1], count=model.token_count, budget=PREMISE_BUDGET)
        for i in asked
    ]
    got = model.entailment_probabilities(
        [(w, claims[i][0]) for w, i in zip(windows, asked, strict=True)]
    )
    scores = [1.0] * len(claims)
    for i, score in zip(asked, got, strict=True):
        scores[i] = score
    return scores


def _answer_min(
    model: OnnxNLIModel, evidence: Sequence[str], question: str, answer: str, policy: Policy
) -> tuple[bool, float]:
    """(a hard check fails it, lowest verifier score of its cited sentences)."""
    texts = [safe_normalize_v1(t) for t in evidence if t.strip()]
    bundle = make_answer_bundle(texts, question=question, policy=policy)
    hard = validate_text(bundle, answer, policy).validation_status.value == "FAILED"
    pairs = cited_sentences(EvidenceView.from_bundle(bundle), answer)
    scores = judge(model, pairs) if pairs else [1.0]
    return hard, min(scores)


def halueval_answers(
    model: OnnxNLIModel, limit: int | None
) -> dict[str, list[tuple[int, bool, float]]]:
    """split -> [(1 right / 0 hallucinated, hard failure, weakest score)] on the fit split."""
    policy = load_policy("strict-v1")
    # Only the hard checks: no support score fails a sentence.
    hard_only = policy.evolve(
        validation=policy.validation.model_copy(update={"min_sentence_support": 0.0})
    )
    out: dict[str, list[tuple[int, bool, float]]] = {}
    folder = shared_data() / "halueval-dev"
    for split in SPLITS:
        rows = []
        items = [it for i, it in enumerate(load_split(folder, split)) if halueval_split(i) == "fit"]
        for item in items[:limit]:
            for answer, label in ((item.right, 1), (item.hallucinated, 0)):
                hard, low = _answer_min(
                    model, [item.knowledge], item.question, cited(answer), hard_only
                )
                rows.append((label, hard, low))
        out[split] = rows
        print(f"halueval {split}: {len(rows)} answers", file=sys.stderr)
    return out


def extractive_scores(model: OnnxNLIModel, limit: int | None) -> list[float]:
    """Weakest sentence score of every extractive answer on SQuAD and F´."""
    from citebound.llm.extractive import ExtractiveProvider

    policy = load_policy("strict-v1")
    provider = ExtractiveProvider()
    data = shared_data()
    cases: Iterable[object] = itertools.chain(
        squad_cases(data / "squad2-dev", limit), fprime_cases(data / "fprime-docs", limit)
    )
    lows = []
    for case in cases:
        texts = [safe_normalize_v1(t) for t in case.texts if t.strip()]  # type: ignore[attr-defined]
        bundle = make_answer_bundle(texts, question=case.question, policy=policy)  # type: ignore[attr-defined]
        answer = provider.answer(bundle, policy.refusal.model_text)
        if answer == policy.refusal.model_text:
            continue
        pairs = cited_sentences(EvidenceView.from_bundle(bundle), answer)
        if pairs:
            lows.append(min(judge(model, pairs)))
    print(f"extractive: {len(lows)} answers", file=sys.stderr)
    return lows


def balanced(rows: Sequence[tuple[int, bool, float]], t: float) -> tuple[float, float, float]:
    """(caught, passed, balanced) of answers: flagged = hard failure or weakest < t."""
    neg = [r for r in rows if r[0] == 0]
    pos = [r for r in rows if r[0] == 1]
    caught = sum(h or s < t for _, h, s in neg) / max(1, len(neg))
    passed = sum(not (h or s < t) for _, h, s in pos) / max(1, len(pos))
    return caught, passed, (caught + passed) / 2


def fit(model_dir: Path, data: Path, limit: int | None, margin: float) -> dict[str, object]:
    model = OnnxNLIModel(model_dir)
    sources: dict[str, list[tuple[int, bool, float]]] = {
        f"halueval-{k}": v for k, v in halueval_answers(model, limit).items()
    }
    dev = list(read_jsonl(data / "dev.jsonl"))[: limit or None]
    scores = model.entailment_probabilities([(p.premise, p.claim) for p in dev])
    by_source: dict[str, list[tuple[int, bool, float]]] = defaultdict(list)
    for p, s in zip(dev, scores, strict=True):
        group = "written" if p.source.startswith("written-") else p.source
        by_source[f"dev-{group}"].append((p.label, False, s))
    sources.update(sorted(by_source.items()))
    lows = extractive_scores(model, limit)
    ceiling = (min(lows) - margin) if lows else 1.0
    best: tuple[float, float] = (-1.0, 0.5)
    table = {}
    for t in GRID:
        if t > ceiling:
            break
        if balanced(sources["halueval-qa"], t)[1] < 0.95:
            continue
        mean = sum(balanced(rows, t)[2] for rows in sources.values()) / len(sources)
        table[t] = mean
        if mean > best[0]:
            best = (mean, t)
    threshold = best[1]
    fitrows = [r for k, rows in sources.items() if k.startswith("halueval") for r in rows]
    high = 1.0
    for h in sorted({round(s, 3) for _, _, s in fitrows if s >= threshold}):
        above = [r for r in fitrows if r[2] >= h and not r[1]]
        if above and sum(r[0] for r in above) / len(above) >= 0.9:
            high = h
            break
    report = {
        "threshold": threshold,
        "high_confidence_support": high,
        "mean_balanced": round(best[0], 4),
        "extractive_answers": len(lows),
        "extractive_lowest": round(min(lows), 4) if lows else None,
        "per_source": {
            k: dict(
                zip(
                    ("caught", "passed", "balanced"),
                    (round(x, 4) for x in balanced(rows, threshold)),
                    strict=True,
                )
            )
            | {"n": len(rows)}
            for k, rows in sources.items()
        },
        "grid": table,
    }
    (data / "fit.json").write_text(json.dumps(report, indent=1) + "\n")
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=REPO / "build" / "verifier")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--margin", type=float, default=0.02)
    args = ap.parse_args()
    r = fit(args.model, args.data, args.limit, args.margin)
    print(json.dumps({k: v for k, v in r.items() if k != "grid"}, indent=1))
    print(
        f"verifier_threshold = {r['threshold']}\nhigh_confidence_support = {r['high_confidence_support']}"
    )


if __name__ == "__main__":
    main()
