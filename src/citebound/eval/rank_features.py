"""The feature vector of a candidate lead sentence, for `benchmarks/ranker_study.py`.

An evaluation instrument: the answerer never imports it (the fitted ranker is not shipped).

The extractive answerer's hand-set rules (`provider.rank`, `choice.lead_pool`) decide whether a
sentence may lead (qualification, weak leads, definitions, dangling intros) and so every
refusal; `choice.pick_lead` then takes the best sentence of the best-ranked evidence within
`rank_tolerance` of the best score. The study asks whether a fitted linear scorer over the
signals that score is built from (`FEATURES`, recomputed here with the answerer's own helpers,
so `src/` is untouched) picks a better lead among the sentences that may lead. It does not
(benchmarks/results/answers_measured.md "A fitted lead ranker (study, not shipped)").

Deterministic: pure functions of the bundle and the policy; the weighted sum runs in
`FEATURES` order over Python floats; ties are broken by the lexical score, then evidence order
(rank), line, sentence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from citebound.llm.extractive import commands
from citebound.llm.extractive.answer_type import AnswerType, asked, carries, has_number
from citebound.llm.extractive.candidates import Candidate
from citebound.llm.extractive.choice import pick_lead
from citebound.llm.extractive.scoring import anaphoric, names_subject, pairs, weights
from citebound.policy import AnswererPolicy
from citebound.text.markup import QuestionType, question_type
from citebound.text.subject import defines, subject_in_setting
from citebound.text.terms import terms

Scored = tuple[float, Candidate]

# The feature names, in the order the weighted sum runs.
FEATURES: tuple[str, ...] = (
    "score",  # the lexical score (`provider.rank`)
    "share_of_best",  # ... as a share of the best score among the sentences that may lead
    "coverage",  # IDF-weighted share of the question's terms in the sentence (+ its block)
    "context",  # ... in its document title / heading path only
    "terms_held",  # share of the question's terms held (unweighted)
    "phrases",  # pairs of neighbouring question terms also side by side in the sentence
    "answer_type",  # holds the name / date / number the question asks for (answer_type.py)
    "first_evidence",  # from the best-ranked evidence
    "evidence_rank",  # log(1 + evidence rank)
    "evidence_best",  # the best-scoring sentence of its evidence
    "unit_line",  # log(1 + its unit line within the evidence)
    "unit_first",  # the first sentence of its unit
    "defines",  # defines the subject of "What is X?" (text/subject.py)
    "anaphoric",  # opens by pointing back ("It ...", "This component ...")
    "intro",  # a list intro ("... the following:")
    "item",  # a list item or table row
    "titled",  # leaves its subject to the document title
    "length",  # log(1 + words)
    "new_terms",  # share of its content terms the question lacks (what it adds)
    "number",  # holds a number
)


@dataclass(frozen=True)
class Question:
    """What the features read about the question, computed once per answer."""

    text: str
    terms: frozenset[str]
    qtype: QuestionType
    named: bool
    kind: AnswerType
    phrases: frozenset[tuple[str, str]]
    subject: frozenset[str]
    setting: frozenset[str]
    weight: Mapping[str, float]
    total: float


def question_of(
    question: str, extra_terms: str, cands: list[Candidate], p: AnswererPolicy
) -> Question:
    """The question's side of the features (`weights`: IDF over `cands`, as `rank` uses)."""
    own = terms(question) | terms(extra_terms)
    weight = weights(own, cands)
    qtype = question_type(question)
    subject, setting = subject_in_setting(question)
    return Question(
        text=question,
        terms=own,
        qtype=qtype,
        named=names_subject(qtype, question, p.max_subject_terms),
        kind=asked(question, p),
        phrases=pairs(question),
        subject=subject,
        setting=setting,
        weight=weight,
        total=sum(weight.values()) or 1.0,
    )


def features(
    q: Question,
    c: Candidate,
    score: float,
    best: float,
    evidence_best: bool,
    blocks: commands.Blocks,
    p: AnswererPolicy,
) -> tuple[float, ...]:
    """The feature vector of candidate `c` (lexical `score`; `best`: the best score among the
    sentences that may lead; `evidence_best`: `c` scores best in its evidence), in `FEATURES`
    order."""
    block = commands.block_of(c, blocks)
    shared = c.shared | block.shared if block is not None else c.shared
    context = c.context - shared
    own = terms(c.text)
    words = len(c.text.split())
    coverage = sum(q.weight.get(t, 0.0) for t in sorted(shared)) / q.total
    held = sum(q.weight.get(t, 0.0) for t in sorted(context)) / q.total
    values = {
        "score": score,
        "share_of_best": score / best if best > 0 else 1.0,
        "coverage": coverage,
        "context": held,
        "terms_held": len(shared & q.terms) / max(1, len(q.terms)),
        "phrases": float(len(q.phrases & pairs(c.text))),
        "answer_type": float(q.kind != "none" and carries(q.kind, c.text, q.text)),
        "first_evidence": float(c.ev == 0),
        "evidence_rank": math.log1p(c.ev),
        "evidence_best": float(evidence_best),
        "unit_line": math.log1p(c.line),
        "unit_first": float(c.first),
        "defines": float(
            q.qtype == "definition"
            and bool(q.subject)
            and defines(q.subject, c.text, p.subject_qualifiers, q.setting)
        ),
        "anaphoric": float(anaphoric(c)),
        "intro": float(c.intro),
        "item": float(c.kind != "prose"),
        "titled": float(c.titled),
        "length": math.log1p(words),
        "new_terms": len(own - q.terms) / max(1, len(own)),
        "number": float(has_number(c.text)),
    }
    return tuple(values[name] for name in FEATURES)


def learned(x: tuple[float, ...], w: tuple[float, ...]) -> float:
    """The weighted sum, in feature order (fixed float operation order)."""
    total = 0.0
    for xi, wi in zip(x, w, strict=True):
        total += xi * wi
    return total


def eligible(
    pool: list[Scored], blocks: commands.Blocks, p: AnswererPolicy, scope: str = "all"
) -> list[Scored]:
    """The sentences of the lead pool (`choice.lead_pool`) the fitted scorer chooses among:
    those within `rank_tolerance` of the best score (`pick_lead`'s bar), from every evidence
    (`scope="all"`) or only from the evidence the rule leads from (`scope="evidence"`)."""
    best = pool[0][0]
    bar = min(best, p.rank_tolerance * best)
    if scope == "evidence":
        ev = pick_lead(pool, blocks, p)[1].ev
        return [sc for sc in pool if sc[0] >= bar and sc[1].ev == ev]
    return [sc for sc in pool if sc[0] >= bar]


def vectors(
    q: Question, choices: list[Scored], blocks: commands.Blocks, p: AnswererPolicy
) -> list[tuple[float, ...]]:
    """The feature vector of each of `choices` (the output of `eligible`), in order."""
    best = max(s for s, _ in choices)
    top: dict[int, float] = {}
    for s, c in choices:
        top[c.ev] = max(top.get(c.ev, s), s)
    return [features(q, c, s, best, s >= top[c.ev], blocks, p) for s, c in choices]


def pick(
    keys: list[tuple[float, int, int, int]],
    xs: list[tuple[float, ...]],
    w: tuple[float, ...],
    rule: int,
    margin: float,
) -> int:
    """Index of the lead among the choices (`keys`: lexical score, evidence, line, sentence;
    `xs`: feature vectors; `w`: weights): the rule's lead (index `rule`) unless another scores
    more than `margin` above it. Tie-break: the higher lexical score, then evidence order
    (rank), line, sentence."""
    scores = [learned(x, w) for x in xs]
    best = min(range(len(keys)), key=lambda i: (-scores[i], -keys[i][0], *keys[i][1:]))
    return best if scores[best] - scores[rule] > margin else rule
