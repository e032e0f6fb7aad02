"""Fit the support rule's weights (`[validation] support_weights`) on the FIT half of HaluEval.

    PYTHONPATH=src python benchmarks/fit_support.py [--preset strict-v1] [--limit N]

Data: the even-numbered items of `../shared/data/halueval-dev` (QA, summarization, dialogue;
`eval.grounding.fit_half`) and the answers of the built-in extractive provider on SQuAD and
F´ (`eval.grounding.squad_cases`, `fprime_cases`). The odd items are never read here.

For every cited sentence the features of `validate.support.support_features` are computed once
(with the preset's `support_window` and `support_prefix`); an answer is flagged when its weakest
sentence scores below 0.5 (`min_sentence_support`), i.e. when `intercept + Σ weight × feature`
is negative for some sentence. Coordinate search over a fixed grid (weights ≥ 0: more coverage
never lowers support, a missing name never raises it) maximises

    0.45 × balanced(QA) + 0.45 × balanced(summarization) + 0.1 × balanced(dialogue)

subject to: right QA answers passed ≥ 0.95 and every extractive answer passing. The result is
printed as the TOML line to paste into the presets.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from citebound.eval.data import dataset_dir
from citebound.eval.grounding import (
    SPLITS,
    ExtractiveCase,
    cited,
    fit_half,
    fprime_cases,
    load_split,
    squad_cases,
)
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.text.sanitize import safe_normalize_v1
from citebound.validate.analysis import cited_sentences, support_params
from citebound.validate.support import SupportFeatures, SupportParams, support_features
from citebound.validate.view import EvidenceView

NAMES = (
    "intercept",
    "coverage",
    "window_coverage",
    "missing_words",
    "missing_names",
    "names_outside_window",
    "missing_numbers",
    "polarity_flip",
)
SIGNS = np.array([1, 1, 1, -1, -1, -1, -1, -1], dtype=np.float64)
GRID = {
    "intercept": [x / 2 for x in range(-24, 9)],
    "coverage": [x / 2 for x in range(0, 25)],
    "window_coverage": [x / 2 for x in range(0, 25)],
    "missing_words": [x / 4 for x in range(0, 17)],
    "missing_names": [x / 4 for x in range(0, 17)],
    "names_outside_window": [x / 4 for x in range(0, 17)],
    "missing_numbers": [x / 4 for x in range(0, 17)],
    "polarity_flip": [x / 2 for x in range(0, 21)],
}
SPLIT_WEIGHT = {"qa": 0.45, "summarization": 0.45, "dialogue": 0.1}


class Answers:
    """Feature rows of every scored sentence, grouped by answer; quotations pass."""

    def __init__(self) -> None:
        self.rows: list[list[float]] = []
        self.answer: list[int] = []
        self.fixed: list[float] = []  # +inf quotation, -inf new fact, 0 scored by the rule
        self.n = 0

    def add(self, feats: Iterable[SupportFeatures], new_facts_fail: bool = True) -> None:
        """One answer's sentences; with `new_facts_fail` (strict-v1's `new_facts = "fail"`) a
        sentence with a number or code absent from its evidence fails whatever its score."""
        for f in feats:
            self.rows.append(
                [
                    1.0,
                    f.coverage,
                    f.window_coverage,
                    f.missing_words,
                    len(f.missing_names),
                    len(f.names_outside_window),
                    len(f.missing_numbers),
                    float(bool(f.polarity_flip)),
                ]
            )
            self.answer.append(self.n)
            fails = new_facts_fail and bool(f.missing_numbers)
            self.fixed.append(-np.inf if fails else (np.inf if f.quotation else 0.0))
        self.n += 1

    def freeze(self) -> None:
        self.x = np.array(self.rows, dtype=np.float64).reshape(-1, len(NAMES)) * SIGNS
        self.idx = np.array(self.answer, dtype=np.int64)
        self.fix = np.array(self.fixed, dtype=np.float64)

    def flagged(self, w: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
        """Answers with a sentence scoring below 0.5 (z < 0); an answer without scored
        sentences passes."""
        z = np.where(self.fix == 0.0, self.x @ w, self.fix)
        low = np.full(self.n, np.inf)
        np.minimum.at(low, self.idx, z)
        return np.asarray(low < 0)


def _features(view: EvidenceView, answer: str, params: SupportParams) -> list[SupportFeatures]:
    return [
        support_features(body, ev, params, view.question)
        for body, ev in cited_sentences(view, answer)
    ]


def _halueval(params: SupportParams, limit: int | None) -> dict[str, tuple[Answers, Answers]]:
    folder = dataset_dir("halueval-dev")
    assert folder is not None, "../shared/data/halueval-dev is absent"
    policy = load_policy("strict-v1")
    out: dict[str, tuple[Answers, Answers]] = {}
    for split in SPLITS:
        right, wrong = Answers(), Answers()
        for item in fit_half(load_split(folder, split, limit)):
            bundle = make_answer_bundle(
                [safe_normalize_v1(item.knowledge)], question=item.question, policy=policy
            )
            view = EvidenceView.from_bundle(bundle)
            right.add(_features(view, cited(item.right), params))
            wrong.add(_features(view, cited(item.hallucinated), params))
        right.freeze()
        wrong.freeze()
        out[split] = (right, wrong)
        print(f"features: {split} {right.n} items", file=sys.stderr)
    return out


def _extractive(params: SupportParams, limit: int | None) -> Answers:
    from citebound.llm.extractive import ExtractiveProvider

    policy = load_policy("strict-v1")
    provider = ExtractiveProvider()
    answers = Answers()
    squad, fprime = dataset_dir("squad2-dev"), dataset_dir("fprime-docs")
    assert squad is not None and fprime is not None
    cases: Iterable[ExtractiveCase] = itertools.chain(
        squad_cases(squad, limit), fprime_cases(fprime, limit)
    )
    for case in cases:
        texts = [safe_normalize_v1(t) for t in case.texts if t.strip()]
        bundle = make_answer_bundle(texts, question=case.question, policy=policy)
        answer = provider.answer(bundle, policy.refusal.model_text)
        if answer != policy.refusal.model_text:
            answers.add(_features(EvidenceView.from_bundle(bundle), answer, params))
    answers.freeze()
    print(f"features: extractive {answers.n} answers", file=sys.stderr)
    return answers


def _evaluate(
    data: dict[str, tuple[Answers, Answers]], w: npt.NDArray[np.float64]
) -> dict[str, tuple[float, float]]:
    """(caught, passed) per split."""
    out = {}
    for split, (right, wrong) in data.items():
        out[split] = (float(wrong.flagged(w).mean()), float(1 - right.flagged(w).mean()))
    return out


def _objective(
    data: dict[str, tuple[Answers, Answers]], extractive: Answers, w: npt.NDArray[np.float64]
) -> float:
    if extractive.n and extractive.flagged(w).any():
        return -1.0
    ev = _evaluate(data, w)
    if ev["qa"][1] < 0.95:
        return -1.0
    return sum(SPLIT_WEIGHT[s] * (c + p) / 2 for s, (c, p) in ev.items())


def fit(
    data: dict[str, tuple[Answers, Answers]],
    extractive: Answers,
    start: list[float],
    samples: int = 4000,
    seed: int = 14,
) -> npt.NDArray[np.float64]:
    """Random search over GRID (seeded, `samples` draws plus `start`), then coordinate search
    from the best draw until no single change improves (ties keep the earlier value)."""
    rng = np.random.default_rng(seed)
    w = np.array(start, dtype=np.float64)
    best = _objective(data, extractive, w)
    for _ in range(samples):
        trial = np.array([rng.choice(GRID[n]) for n in NAMES], dtype=np.float64)
        score = _objective(data, extractive, trial)
        if score > best + 1e-9:
            best, w = score, trial
    improved = True
    while improved:
        improved = False
        for i, name in enumerate(NAMES):
            for value in GRID[name]:
                trial = w.copy()
                trial[i] = value
                score = _objective(data, extractive, trial)
                if score > best + 1e-9:
                    best, w, improved = score, trial, True
        print(f"objective {best:.4f}: {dict(zip(NAMES, w.tolist(), strict=True))}", file=sys.stderr)
    return w


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--preset", default="strict-v1")
    ap.add_argument("--limit", type=int, default=None, help="First N items/cases per source.")
    ap.add_argument("--no-extractive", action="store_true", help="Skip the SQuAD/F´ constraint.")
    args = ap.parse_args()
    params = support_params(load_policy(args.preset))
    data = _halueval(params, args.limit)
    extractive = Answers() if args.no_extractive else _extractive(params, args.limit)
    extractive.freeze()
    current = params.weights
    start = [getattr(current, n) for n in NAMES]
    print("current weights:", _evaluate(data, np.array(start)))
    w = fit(data, extractive, start)
    for split, (c, p) in _evaluate(data, w).items():
        print(f"fit half {split:<14} caught {c:.3f} passed {p:.3f} balanced {(c + p) / 2:.3f}")
    body = ", ".join(f"{n} = {v:g}" for n, v in zip(NAMES, w.tolist(), strict=True))
    print(f"support_weights = {{ {body} }}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
