"""Offline gate sweep and the choice of defaults, on hand-made outcomes."""

from __future__ import annotations

import pytest
from e2e_helpers import outcome

from citebound.eval.end_to_end import latency, summarize
from citebound.eval.gate_tuning import (
    GateSetting,
    choose_floor,
    choose_gate,
    grid,
    hit,
    passes,
    simulate,
    sweep,
)

# Two in-corpus questions (strong top hit, gold in evidence) and two out-of-corpus ones.
OUTCOMES = [
    outcome("i1", in_corpus=True, sims=[0.8, 0.5, 0.3], evidence=[(0.8, True), (0.5, False)]),
    outcome("i2", in_corpus=True, sims=[0.6, 0.55], evidence=[(0.6, False), (0.55, True)]),
    outcome("o1", in_corpus=False, sims=[0.45, 0.44], evidence=[(0.45, False)]),
    outcome("o2", in_corpus=False, sims=[0.3], evidence=[(0.3, False)]),
]


def test_grid_is_inclusive_and_rounded() -> None:
    assert grid(0.3, 0.5, 0.1) == [0.3, 0.4, 0.5]
    assert grid(0.0, 1.0, 0.01)[-1] == 1.0 and len(grid(0.0, 1.0, 0.01)) == 101


def test_passes_uses_the_real_gate_rules() -> None:
    assert passes([0.5, 0.4], GateSetting(min_score=0.5, min_chunks=1))  # at threshold passes
    assert not passes([0.5, 0.4], GateSetting(min_score=0.5, min_chunks=2))
    assert not passes([], GateSetting(min_score=0.0, min_chunks=1))


def test_hit_needs_the_gate_and_gold_at_or_above_the_floor() -> None:
    i2 = OUTCOMES[1]
    assert hit(i2, GateSetting(min_score=0.5, min_chunks=2, floor=0.55))
    assert not hit(i2, GateSetting(min_score=0.5, min_chunks=2, floor=0.56))
    assert not hit(i2, GateSetting(min_score=0.61, min_chunks=1))


def test_simulate_rates() -> None:
    p = simulate(OUTCOMES, GateSetting(min_score=0.5, min_chunks=1))
    assert (p.refusal_rate, p.hit_rate, p.score) == (1.0, 1.0, 1.0)
    p = simulate(OUTCOMES, GateSetting(min_score=0.4, min_chunks=1))
    assert (p.refusal_rate, p.hit_rate) == (0.5, 1.0)
    with pytest.raises(ValueError, match="out-of-corpus and in-corpus"):
        simulate(OUTCOMES[:2], GateSetting(min_score=0.5, min_chunks=1))


def test_choose_gate_prefers_best_mean_then_higher_threshold() -> None:
    points = sweep(OUTCOMES, grid(0.3, 0.7, 0.05), chunks=(1, 2))
    best = choose_gate(points)
    # 0.46..0.60 all score 1.0 at min_chunks 1 (only 0.5 at 2: i1's second row); highest wins.
    assert best.score == 1.0
    assert (best.setting.min_score, best.setting.min_chunks) == (0.6, 1)
    fixed = choose_gate(points, min_chunks=2)
    assert fixed.setting.min_chunks == 2 and fixed.setting.min_score == 0.5
    with pytest.raises(ValueError, match="no sweep point"):
        choose_gate(points, min_chunks=5)


def test_choose_floor_stays_within_the_allowed_hit_loss() -> None:
    setting = GateSetting(min_score=0.5, min_chunks=1)
    # i2's gold sits at 0.55: any floor above it loses half the hits.
    best = choose_floor(OUTCOMES, setting, grid(0.0, 0.5, 0.05), max_hit_loss=0.01)
    assert best.setting.floor == 0.5 and best.hit_rate == 1.0
    strict = choose_floor(OUTCOMES, setting.model_copy(update={"min_score": 0.6}), [0.56, 0.6])
    assert strict.setting.floor == 0.0  # every candidate floor drops i2's gold
    loose = choose_floor(
        OUTCOMES, setting.model_copy(update={"min_score": 0.6}), [0.56, 0.6], max_hit_loss=0.5
    )
    assert loose.setting.floor == 0.6


def test_summarize_counts_refusals_before_the_llm_only() -> None:
    refused = OUTCOMES[2].model_copy(
        update={"status": "NO_EVIDENCE", "llm_attempts": 0, "refused_before_llm": True}
    )
    model_refused = OUTCOMES[3].model_copy(update={"status": "NO_EVIDENCE"})  # LLM was called
    s = summarize([OUTCOMES[0], OUTCOMES[1], refused, model_refused])
    assert (s.n_in, s.n_out, s.refusal_rate, s.out_llm_calls, s.failed) == (2, 2, 0.5, 1, 0)
    assert (s.evidence_hit_rate, s.answered_rate, s.answer_hit_rate) == (1.0, 1.0, 0.0)
    assert summarize([]).refusal_rate is None


def test_latency_median_and_nearest_rank_p99() -> None:
    lat = latency([float(x) for x in range(1, 101)])
    assert (lat.n, lat.median_ms, lat.p99_ms) == (100, 50.5, 99.0)
    assert latency([3.0]).p99_ms == 3.0
    with pytest.raises(ValueError):
        latency([])
    assert OUTCOMES[0].overhead_ms == 9.0
