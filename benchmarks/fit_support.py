"""Fit the support rule's weights (`[validation] support_weights`) on the FIT half of HaluEval.

    PYTHONPATH=src python benchmarks/fit_support.py [--preset strict-v1] [--limit N]

Data: the even-numbered items of `../shared/data/halueval-dev` (QA, summarization, dialogue;
`eval.grounding.fit_half`) and the answers of the built-in extractive provider on SQuAD and
F´ (`eval.grounding.squad_cases`, `fprime_cases`). The odd items are never read here.

For every cited sentence the features of `validate.support.support_features` are computed once
(with the preset's `support_window` and `support_prefix`); an answer is flagged when its weakest
sentence scores below 0.5 (`min_sentence_support`), i.e. when `intercept + Σ weight × feature`
is negative for some sentence. Seeded random draws and coordinate search over a fixed grid
(weights ≥ 0: more coverage never lowers support, a missing name never raises it) maximise

    0.9 × balanced(summarization) + 0.1 × balanced(dialogue) − 5 × max(0, 0.91 − caught(QA))

subject to: right QA answers passed ≥ 0.96 and every extractive answer passing (the issue's QA
target, caught ≥ 0.90 with passed ≥ 0.95, as a constraint with a margin). The result is
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
    "missing_tokens",
    "echo_missing",
    "slot_swap",
    "word_swap",
    "echo_scattered",
)
SIGNS = np.array([1, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1], dtype=np.float64)
GRID = {
    "intercept": [x / 4 for x in range(-60, 61)],
    "coverage": [x / 4 for x in range(0, 81)],
    "window_coverage": [x / 4 for x in range(0, 61)],
    "missing_words": [x / 4 for x in range(0, 41)],
    # Not fitted either: a name, number word, number, date or code the evidence lacks fails the
    # sentence (an invented entity is what the check exists to stop).
    "missing_names": [60.0],
    "names_outside_window": [x / 4 for x in range(0, 41)],
    "missing_numbers": [60.0],
    # Not fitted: a negation or antonym flip fails the sentence whatever else it has (60 is
    # above the largest intercept + coverage + window_coverage of this grid, 15 + 20 + 15).
    "polarity_flip": [60.0],
    # Held at 0: chosen by two-fold cross-validation inside the fit half (fit on one half of
    # the even items, score the other, both ways): summarization 0.724 without it, 0.709 with
    # it; the words a sentence adds still count through `echo_missing`.
    "missing_tokens": [0.0],
    "echo_missing": [x / 4 for x in range(0, 161)],
    # Not fitted, as missing_names: a word in the slot of a specific evidence token (a number,
    # code, unit or name; validate/swap.py) is an invented entity. The objective rewards QA
    # caught only up to its floor, so a fitted weight would stay 0 whatever it catches.
    "slot_swap": [60.0],
    # Not fitted either: another content word in the slot of an evidence noun (`ammonia` for
    # `propane` refrigerant, `gate` for `ball` valve) is as invented as a name; plain adjectives
    # and general verbs never count (validate/swap.py PLAIN). Fitted on the grid 0-20 it chose
    # 4 (one swap alone passes): the objective does not reward catching these either.
    "word_swap": [60.0],
    # Fitted (r5-v4). Chosen by two-fold cross-validation inside the fit half: with function
    # words no longer counted as absent, QA caught is 0.879 without it and 0.908 with it
    # (summarization balanced 0.663 and 0.722: without it the fit buys QA with summaries).
    "echo_scattered": [x / 4 for x in range(0, 81)],
}
# The objective: summarization and dialogue balanced accuracy, with QA as constraints (the
# issue's targets: caught >= 0.90 with passed >= 0.95), each short of its floor costing
# QA_PENALTY per point.
SPLIT_WEIGHT = {"summarization": 0.9, "dialogue": 0.1}
QA_CAUGHT, QA_PASSED, QA_PENALTY = 0.91, 0.96, 5.0


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
                    f.missing_tokens,
                    f.echo * f.absent_tokens,
                    len(f.slot_swaps),
                    len(f.word_swaps),
                    f.echo * f.scattered,
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
    if ev["qa"][1] < QA_PASSED:
        return -1.0
    short = max(0.0, QA_CAUGHT - ev["qa"][0])
    return sum(SPLIT_WEIGHT[s] * sum(ev[s]) / 2 for s in SPLIT_WEIGHT) - QA_PENALTY * short


def fit(
    data: dict[str, tuple[Answers, Answers]],
    extractive: Answers,
    start: list[float],
    samples: int = 800,
    starts: int = 40,
    seed: int = 14,
) -> npt.NDArray[np.float64]:
    """Seeded random draws over GRID (plus `start`); from each of the `starts` best, coordinate
    search with steps of 16, 8, 4, 2 and 1 grid points until no single change improves (ties
    keep the earlier value); the best end point wins (earliest on ties)."""
    rng = np.random.default_rng(seed)
    grids = [np.array(GRID[n]) for n in NAMES]
    # `start` snapped onto the grid (a hand-set weight has one grid value).
    draws = [np.array([g[np.argmin(np.abs(g - v))] for g, v in zip(grids, start, strict=True)])]
    draws += [np.array([rng.choice(g) for g in grids]) for _ in range(samples)]
    scored = sorted(
        ((_objective(data, extractive, w), i) for i, w in enumerate(draws)), key=lambda t: -t[0]
    )
    best_w, best = draws[0], -np.inf
    for _, i in scored[:starts]:
        w = draws[i].copy()
        score = _objective(data, extractive, w)
        pos = [int(np.argmin(np.abs(g - v))) for g, v in zip(grids, w, strict=True)]
        for step in (16, 8, 4, 2, 1):
            improved = True
            while improved:
                improved = False
                for k, g in enumerate(grids):
                    for p in (pos[k] - step, pos[k] + step):
                        if not 0 <= p < len(g):
                            continue
                        trial = w.copy()
                        trial[k] = g[p]
                        s = _objective(data, extractive, trial)
                        if s > score + 1e-9:
                            score, w, improved = s, trial, True
                            pos[k] = p
        if score > best + 1e-9:
            best, best_w = score, w
            print(
                f"objective {best:.4f}: {dict(zip(NAMES, w.tolist(), strict=True))}",
                file=sys.stderr,
            )
    return best_w


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--preset", default="strict-v1")
    ap.add_argument("--limit", type=int, default=None, help="First N items/cases per source.")
    ap.add_argument("--no-extractive", action="store_true", help="Skip the SQuAD/F´ constraint.")
    ap.add_argument(
        "--check", action="store_true", help="Score the preset's weights only; fit nothing."
    )
    args = ap.parse_args()
    params = support_params(load_policy(args.preset))
    data = _halueval(params, args.limit)
    extractive = Answers() if args.no_extractive else _extractive(params, args.limit)
    extractive.freeze()
    current = params.weights
    start = [getattr(current, n) for n in NAMES]
    print("current weights:", _evaluate(data, np.array(start)))
    if args.check:
        failing = int(extractive.flagged(np.array(start)).sum()) if extractive.n else 0
        print(f"extractive answers failing: {failing} of {extractive.n}")
        return 0
    w = fit(data, extractive, start)
    for split, (c, p) in _evaluate(data, w).items():
        print(f"fit half {split:<14} caught {c:.3f} passed {p:.3f} balanced {(c + p) / 2:.3f}")
    body = ", ".join(f"{n} = {v:g}" for n, v in zip(NAMES, w.tolist(), strict=True))
    print(f"support_weights = {{ {body} }}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
