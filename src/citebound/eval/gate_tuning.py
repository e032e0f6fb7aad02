"""Offline sweep of the gate thresholds over outcomes recorded with the gate open.

Why offline: the gate is a pure function of the similarities it sees (`apply_gate`), and the
evidence a lower threshold would select is a prefix-by-similarity of what the open gate selected
(assembly walks rows in rank order, which is similarity order with the passthrough reranker, so
rows below a floor are all after the rows above it and never change how those were treated).
One pipeline run per question therefore prices every (min_score, min_chunks, floor).

Criterion (`choose_gate`): maximize the mean of the out-of-corpus refusal rate and the
in-corpus evidence hit rate (balanced accuracy of "should this reach the LLM?"); ties go to the
higher min_score (refuse more), then to the smaller min_chunks. `choose_floor` then picks the
highest per-row floor ≤ min_score that costs at most `max_hit_loss` of evidence hit rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import Field

from citebound.contracts.base import Contract
from citebound.eval.end_to_end import QuestionOutcome
from citebound.gate.rule import apply_gate
from citebound.policy import GatePolicy


class GateSetting(Contract):
    """One point of the sweep."""

    min_score: float = Field(description="policy.gate.min_score (= min_top_similarity).")
    min_chunks: int = Field(description="policy.gate.min_chunks.")
    floor: float = Field(default=0.0, description="min_similarity_floor.")


class SweepPoint(Contract):
    """Simulated rates of one setting."""

    setting: GateSetting = Field(description="Thresholds.")
    refusal_rate: float = Field(description="Out-of-corpus refused by the gate.")
    hit_rate: float = Field(description="In-corpus answerable with gold in the evidence.")

    @property
    def score(self) -> float:
        """The selection criterion: mean of refusal and hit rate."""
        return (self.refusal_rate + self.hit_rate) / 2


def grid(start: float, stop: float, step: float) -> list[float]:
    """Inclusive, rounded grid, e.g. grid(0.3, 0.5, 0.1) == [0.3, 0.4, 0.5]."""
    n = round((stop - start) / step)
    return [round(start + i * step, 4) for i in range(n + 1)]


def passes(sims: Sequence[float], setting: GateSetting) -> bool:
    """The real gate's decision for `setting` (same function the pipeline uses)."""
    return apply_gate(
        sims, GatePolicy(min_score=setting.min_score, min_chunks=setting.min_chunks)
    ).passed


def hit(outcome: QuestionOutcome, setting: GateSetting) -> bool:
    """Gold in the evidence this setting would keep (gate passes, rows at/above the floor)."""
    return passes(outcome.gate_similarities, setting) and any(
        e.has_gold and e.similarity >= setting.floor for e in outcome.evidence
    )


def simulate(outcomes: Iterable[QuestionOutcome], setting: GateSetting) -> SweepPoint:
    """Refusal and hit rate of `setting`; ValueError without both kinds of question."""
    items = list(outcomes)
    out = [o for o in items if not o.in_corpus]
    inn = [o for o in items if o.in_corpus]
    if not out or not inn:
        raise ValueError("the sweep needs out-of-corpus and in-corpus questions")
    refused = sum(not passes(o.gate_similarities, setting) for o in out)
    hits = sum(hit(o, setting) for o in inn)
    return SweepPoint(setting=setting, refusal_rate=refused / len(out), hit_rate=hits / len(inn))


def sweep(
    outcomes: Sequence[QuestionOutcome],
    scores: Sequence[float],
    chunks: Sequence[int] = (1, 2, 3),
) -> list[SweepPoint]:
    """Every (min_score, min_chunks) pair, floor 0, in (min_chunks, min_score) order."""
    return [
        simulate(outcomes, GateSetting(min_score=s, min_chunks=c)) for c in chunks for s in scores
    ]


def choose_gate(points: Sequence[SweepPoint], *, min_chunks: int | None = None) -> SweepPoint:
    """Best point by the module's criterion, optionally at a fixed `min_chunks`."""
    pool = [p for p in points if min_chunks is None or p.setting.min_chunks == min_chunks]
    if not pool:
        raise ValueError("no sweep point to choose from")
    # Tie-break: rounded score desc, then higher min_score, then fewer min_chunks.
    return min(
        pool,
        key=lambda p: (-round(p.score, 9), -p.setting.min_score, p.setting.min_chunks),
    )


def choose_floor(
    outcomes: Sequence[QuestionOutcome],
    setting: GateSetting,
    floors: Sequence[float],
    *,
    max_hit_loss: float = 0.01,
) -> SweepPoint:
    """Highest floor in `floors` (≤ min_score) whose hit rate is within `max_hit_loss` of the
    floor-0 hit rate at the same gate; the returned point carries that floor."""
    base = simulate(outcomes, setting.model_copy(update={"floor": 0.0}))
    best = base
    for f in sorted(floors):
        if f > setting.min_score:
            break
        point = simulate(outcomes, setting.model_copy(update={"floor": f}))
        if base.hit_rate - point.hit_rate <= max_hit_loss + 1e-12:
            best = point
    return best
