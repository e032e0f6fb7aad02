"""The fitted-lead-ranker study's instrument (`citebound.eval.lead_ranker`, `rank_features`).

The study is only as good as its two assumptions: forcing a lead reproduces what `choose`
would answer with it (so a group's labels are real answers), and the choices it ranks hold the
rule's own lead (so "keep the rule unless beaten" can always fall back). Plus the pieces a
result depends on: the margin rule and a fit that finds the separating signal.
"""

from __future__ import annotations

from llm_helpers import make_bundle

from citebound.eval import lead_ranker
from citebound.eval import rank_features as rf
from citebound.llm import ExtractiveProvider
from citebound.policy import load_policy

POLICY = load_policy("strict-v1")
REFUSAL = POLICY.refusal.model_text
QUESTION = "When did Richard's fleet reach Acre?"
EVIDENCE = [
    "Richard's fleet left Messina in April. The fleet reached Acre in June 1191.",
    "Acre was besieged by the crusaders, and Richard's fleet blockaded its harbour.",
]


def _grouper() -> lead_ranker.Grouper:
    return lead_ranker.Grouper(POLICY, "all", with_semantic=False)


def test_forcing_the_rule_lead_gives_the_shipped_answer() -> None:
    bundle = make_bundle(EVIDENCE, question=QUESTION)
    shipped = ExtractiveProvider(POLICY.answerer).answer(
        bundle, REFUSAL, max_tokens=POLICY.llm.max_output_tokens
    )
    g = _grouper().group(bundle, "q1", lambda t: "June 1191" in t, lambda t: t == shipped)
    assert g is not None
    # The rule's own lead, forced, answers exactly as the shipped answerer does; another lead
    # gives another answer (forcing is not a no-op).
    assert shipped != REFUSAL
    assert g.answer[g.rule] is True
    assert len(g.answer) >= 2 and not all(g.answer)


def test_choices_hold_the_rule_lead_with_one_vector_each() -> None:
    g = _grouper().group(
        make_bundle(EVIDENCE, question=QUESTION), "q1", lambda t: "1191" in t, lambda t: True
    )
    assert g is not None
    assert 0 <= g.rule < len(g.keys)
    assert all(len(x) == len(rf.FEATURES) for x in g.xs)
    assert len(g.xs) == len(g.sentence) == len(g.answer) == len(g.keys)
    # Only the sentence stating the date holds it; the others share question terms only.
    assert sum(g.sentence) == 1


def test_pick_keeps_the_rule_lead_unless_beaten_by_more_than_the_margin() -> None:
    keys = [(0.9, 0, 0, 0), (0.5, 1, 0, 0)]
    xs = [(1.0,), (2.0,)]
    assert rf.pick(keys, xs, (1.0,), rule=0, margin=0.5) == 1  # 2.0 - 1.0 > 0.5
    assert rf.pick(keys, xs, (1.0,), rule=0, margin=1.0) == 0  # not more than the margin
    assert rf.pick(keys, xs, (-1.0,), rule=1, margin=0.0) == 0  # the rule's lead is beaten
    # A tie on the fitted score goes to the higher lexical score.
    assert rf.pick(keys, [(1.0,), (1.0,)], (1.0,), rule=1, margin=float("-inf")) == 0


def test_fit_finds_the_feature_that_marks_the_positive() -> None:
    # In every group the positive is the sentence with the first feature set; the second is
    # noise. The fitted weight of the first must be positive and dominate; refits agree.
    groups = []
    for i in range(20):
        noise = [(i % 3) / 3.0, ((i + 1) % 3) / 3.0, ((i + 2) % 3) / 3.0]
        xs = [(1.0, noise[0]), (0.0, noise[1]), (0.0, noise[2])]
        groups.append((xs, [True, False, False]))
    groups.append(([(1.0, 0.0), (1.0, 1.0)], [True, True]))  # no negative: carries no signal
    w = lead_ranker.fit(groups, 0.05)
    assert w[0] > 0 and abs(w[0]) > 5 * abs(w[1])
    assert lead_ranker.fit(groups, 0.05) == w
