"""The fitted-lead-ranker study's instrument (`benchmarks/ranker_study.py`; not shipped).

`Grouper.group` turns one answered question into a `Group`: the sentences that may lead, each
with its feature vector (`rank_features`) and two labels, the sentence holds the gold and the
whole answer it leads (the shipped `choose` with that lead forced, then the shipped validator)
holds it. `fit` is the conditional logit the study fits over the groups (softmax over each
group, L2, full-batch gradient steps on standardized features; numpy float64, deterministic).

Example:
    >>> grouper = Grouper(load_policy("strict-v1"), "all", with_semantic=False)  # doctest: +SKIP
    >>> g = grouper.group(bundle, "q1", holds=lambda t: "1191" in t, good=...)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from unittest import mock

import numpy as np

import citebound.llm.extractive.provider as provider_module
from citebound.contracts.assembly import AnswerBundle
from citebound.eval import rank_features as rf
from citebound.llm.extractive import ExtractiveProvider, commands, semantic
from citebound.llm.extractive.choice import lead_pool, pick_lead
from citebound.llm.extractive.scoring import names_subject
from citebound.policy import Policy
from citebound.testing.bundles import make_llm_result
from citebound.text.markup import question_type
from citebound.text.terms import terms
from citebound.validate import validate_answer

STEPS = 3000
RATE = 0.5


@dataclass
class Group:
    """One answered question: its lead choices, features and labels."""

    xs: list[tuple[float, ...]]
    sentence: list[bool]  # the sentence holds the gold / a key fact
    answer: list[bool]  # the answer it leads holds the gold / is judged well
    rule: int  # index of the shipped rule's lead (`choice.pick_lead`)
    keys: list[tuple[float, int, int, int]]  # lexical score, evidence, line, sentence
    kind: str  # the kind of answer the question expects (answer_type.py; "none" for most)
    qid: str


class Grouper:
    """Builds groups with one preset's answerer (`scope`: see `rank_features.eligible`)."""

    def __init__(self, policy: Policy, scope: str, with_semantic: bool) -> None:
        self.policy = policy
        self.provider = ExtractiveProvider(policy.answerer)
        self.refusal = policy.refusal.model_text
        self.scope = scope
        self.sim_policy = (
            policy.answerer.model_copy(update={"semantic": True, "semantic_max_sentences": 40})
            if with_semantic
            else None
        )

    def group(
        self,
        bundle: AnswerBundle,
        qid: str,
        holds: Callable[[str], bool],
        good: Callable[[str], bool],
    ) -> Group | None:
        p = self.provider.settings
        question = bundle.user_question
        blocks = commands.blocks(bundle, self.refusal, terms(question), p)
        scored, cands = self.provider.rank(bundle, self.refusal, blocks=blocks)
        if not scored:
            return None
        qtype = question_type(question)
        named = names_subject(qtype, question, p.max_subject_terms)
        pool, _ = lead_pool(scored, cands, blocks, question, qtype, named, p)
        if not pool:
            return None
        choices = rf.eligible(pool, blocks, p, self.scope)
        rule_lead = pick_lead(pool, blocks, p)[1]
        rule = next(i for i, (_, c) in enumerate(choices) if c is rule_lead)
        q = rf.question_of(question, "", cands, p)
        xs = rf.vectors(q, choices, blocks, p)
        if self.sim_policy is not None:
            sims = self.provider.semantic.similarities(
                question, [c for _, c in choices], self.sim_policy
            )
            sv = [sims.get(semantic.key(c), 0.0) for _, c in choices]
            xs = [(*x, s, s - max(sv)) for x, s in zip(xs, sv, strict=True)]
        answers = [self._forced(bundle, sc) for sc in choices]
        return Group(
            xs=xs,
            sentence=[holds(c.text) for _, c in choices],
            answer=[a is not None and good(a) for a in answers],
            rule=rule,
            keys=[(s, c.ev, c.line, c.pos) for s, c in choices],
            kind=q.kind,
            qid=qid,
        )

    def _forced(self, bundle: AnswerBundle, lead: rf.Scored) -> str | None:
        """The validated answer the shipped `choose` gives with `lead` as its lead."""
        with mock.patch.object(provider_module, "pick_lead", lambda *_a: lead):
            text = self.provider.answer(
                bundle, self.refusal, max_tokens=self.policy.llm.max_output_tokens
            )
        if text == self.refusal:
            return None
        verdict = validate_answer(bundle, make_llm_result(bundle, text), self.policy)
        return text if verdict.validation_status.value == "PASSED" else None


def fit(data: list[tuple[list[tuple[float, ...]], list[bool]]], l2: float) -> tuple[float, ...]:
    """Conditional logit over the groups with a positive and a negative; raw-unit weights.

    Rows of one group are contiguous, so each group's softmax is a segment sum."""
    useful = [(x, y) for x, y in data if 0 < sum(y) < len(y)]
    x = np.array([v for xs, _ in useful for v in xs], dtype=np.float64)
    starts = np.cumsum([0] + [len(xs) for xs, _ in useful[:-1]])
    owner = np.repeat(np.arange(len(useful)), [len(xs) for xs, _ in useful])
    target = np.array([float(t) / sum(ys) for _, ys in useful for t in ys])
    mean, sd = x.mean(axis=0), x.std(axis=0)
    sd[sd == 0] = 1.0
    z = (x - mean) / sd
    w = np.zeros(x.shape[1])
    for _ in range(STEPS):
        s = z @ w
        e = np.exp(s - np.maximum.reduceat(s, starts)[owner])
        prob = e / np.add.reduceat(e, starts)[owner]
        w -= RATE * (l2 * w - z.T @ (target - prob) / len(useful))
    return tuple(round(float(v), 4) for v in w / sd)
