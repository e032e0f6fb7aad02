"""How well one evidence sentence answers the question: terms, weights, type cues.

Everything here is a pure function of the question, the candidate sentences and the
`AnswererPolicy` values (policy.py `[answerer]`), so the same bundle always scores the same.
"""

from __future__ import annotations

import itertools
import math
import re
from functools import lru_cache

from citebound.policy import AnswererPolicy
from citebound.text.lexicon import QUESTION_STOPWORDS, WORD, stem
from citebound.text.markup import QuestionType
from citebound.text.subject import defines, named_subject
from citebound.text.subject import definition_subject as definition_subject
from citebound.text.terms import terms

from .answer_type import has_number
from .candidates import Candidate

_DEFINING = re.compile(
    r"^[\w`´' -]{1,40}:\s+\S|"  # glossary style: "Queued component: has no thread ..."
    r"\b(is|are)\s+(a|an|the|one|used|responsible|made|called|defined)\b|\bmeans\b|"
    r"\brefers? to\b|\brepresents?\b|\bprovides?\b|\bdefines?\b|\bconsists? of\b",
    re.IGNORECASE,
)
# A reference-list entry: a term, a colon, what it is ("`check`: Builds, ...").
_ENTRY = re.compile(r"^(`[^`]{1,40}`|[\w´' -]{1,40}):\s+\S")
_REASONING = re.compile(
    r"\b(because|due to|caused|causes|so that|in order to|reason|root cause|since|therefore)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    r"^(run|use|add|create|type|call|set|install|open|execute|navigate|build|define|edit|make|"
    r"copy|enter|change|remove|update|check|ensure|generate|configure|start|stop|tighten|"
    r"torque|inspect|replace|drain|fill|close|connect|disconnect|apply|clean|verify|select|"
    r"click|include|write|implement|register|invoke|send|place|mount|lock|unlock|measure)\b",
    re.IGNORECASE,
)


def is_step(qtype: QuestionType, c: Candidate) -> bool:
    """An item, row or list intro; for procedures also a command or an imperative."""
    if c.intro or c.kind != "prose":
        return True
    return qtype == "procedure" and (_IMPERATIVE.match(c.text) is not None or "`" in c.text)


def entry(c: Candidate) -> bool:
    """Whether the sentence opens a reference-list entry ("`term`: what it is")."""
    return _ENTRY.match(c.text) is not None


def weights(question: frozenset[str], cands: list[Candidate]) -> dict[str, float]:
    """Inverse document frequency of each question term over the candidate sentences.

    A term every sentence shares ("component" in component docs) says little about which
    sentence answers; a rare one ("round robin") says much. Smoothed so every weight > 0.
    """
    n = len(cands)
    df = dict.fromkeys(question, 0)
    for c in cands:
        for t in c.shared:
            df[t] += 1
    return {t: math.log(1.0 + (n + 1) / (df[t] + 0.5)) for t in sorted(question)}


def type_bonus(
    qtype: QuestionType, c: Candidate, policy: AnswererPolicy, *, named: bool = False
) -> float:
    """Small score shifts for what the question asks for (coverage stays the main signal).

    `named`: the question asks what a named subject is or does ("What is ComStub?",
    `names_subject`)."""
    bonus = 0.0
    if c.intro and qtype not in ("procedure", "list"):
        bonus -= policy.intro_penalty  # "... the following rules:" announces; an item states
    if qtype == "definition" and _DEFINING.search(c.text):
        bonus += policy.type_bonus
    elif qtype == "quantity":
        bonus += policy.type_bonus if has_number(c.text) else -policy.missing_number_penalty
    elif qtype == "reason" and _REASONING.search(c.text):
        bonus += policy.type_bonus
    elif qtype in ("procedure", "list") and is_step(qtype, c):
        bonus += policy.step_bonus
    if named and anaphoric(c):
        # "What does X do?" -> "In this case, this component ...": which component? Only for
        # a named subject: in narrative text ("It was built in 1850.") the sentence after
        # the one naming X often holds the answer (SQuAD tune gold 87.5% -> 86.1% when general).
        bonus -= policy.anaphora_penalty
    return bonus


# A sentence that leans on the one before it for its subject or its setting ("In this case,
# this component provides ...", "This directory specifies ...", "It does so by ..."): quoted
# alone, the reader cannot tell what it is about. Nouns after "this/these/that" are included
# on purpose: "this component" names no component.
_ANAPHORIC = re.compile(
    r"^(in (this|that|such a|these) (case|way|manner|example|configuration|mode|situation)s?\b|"
    r"(this|these|those|that|it|its|they|their|them|such|here|there)\b(?!\s*(is|are|was|were)"
    r"\s+(a|an|the|no|one|two|three|several|many)\b))",
    re.IGNORECASE,
)


def anaphoric(c: Candidate) -> bool:
    """Whether the sentence starts by pointing back at an earlier one (see `_ANAPHORIC`)."""
    return _ANAPHORIC.match(c.text) is not None


def weak_lead(qtype: QuestionType, c: Candidate, *, named: bool) -> bool:
    """Whether the sentence should not open an answer when another one qualifies: for "What
    is / does X?" (`named`), it points back at an earlier sentence or only announces a list
    ("X has the following ports:"); for quantity / yes-no / comparison / reason questions, it
    announces a list the question does not ask for."""
    if named:
        return anaphoric(c) or c.intro
    return c.intro and qtype not in ("procedure", "list", "other", "definition")


def names_subject(qtype: QuestionType, question: str, max_terms: int) -> bool:
    """Whether a definition question asks what a named subject is or does: "What is ComStub?",
    "What does the ActiveRateGroup component do?" (X of at most `max_terms` terms), not "What
    is the name of the river that runs through the city?" (a question in definition form)."""
    return qtype == "definition" and bool(named_subject(question, max_terms))


def defines_subject(subject: frozenset[str], c: Candidate, qualifiers: int) -> bool:
    """Whether the sentence defines the question's subject (`citebound.text.subject.defines`,
    shared with retrieval so both agree on it)."""
    return defines(subject, c.text, qualifiers)


# A sentence that goes on about the subject just defined ("It allocates a set of buffers.").
_CONTINUES = re.compile(r"^(it|its|they|their|this (component|class|module|port|service))\b", re.I)


# ... or names again, with a definite article, a thing the previous sentence spoke of ("...
# processes events from other components." / "The events are put in packets ...").
_DEFINITE = re.compile(r"^(the|these|those)\s+(\w+)\b", re.I)


def continues(c: Candidate, before: Candidate | None = None) -> bool:
    """Whether the sentence carries on about the previous sentence's (`before`) subject."""
    return _CONTINUES.match(c.text) is not None or (before is not None and names_again(c, before))


def names_again(c: Candidate, before: Candidate) -> bool:
    """Whether the sentence opens by naming again, with a definite article, a question term
    that `before` introduced after its own subject ("The logger processes events ..." / "The
    events are put in packets ..."): it goes on about what `before` brought in. One that names
    `before`'s subject again ("The pump seal kit is part 77." / "The pump seal kit ships
    boxed.") is another fact about the same thing, weighed like any other sentence."""
    named = _DEFINITE.match(c.text)
    if named is None:
        return False
    words = [stem(w) for w in WORD.findall(before.text.casefold()) if w not in QUESTION_STOPWORDS]
    return bool(terms(named[2]) & c.shared & (set(words[1:]) - set(words[:1])))


# "What is the disadvantage of X?" is not answered by "This has the advantage that ...": the
# sentence speaks of the opposite side (and the other way round).
_SIDES = (
    re.compile(r"\b(disadvantages?|drawbacks?|downsides?)\b", re.I),
    re.compile(r"\b(advantages?|benefits?|upsides?)\b", re.I),
)


def opposite_side(question: str, c: Candidate) -> bool:
    """Whether the question asks for one side (drawbacks / advantages) and the sentence names
    only the other."""
    for asked, other in (_SIDES, _SIDES[::-1]):
        if asked.search(question) and other.search(c.text) and not asked.search(c.text):
            return True
    return False


# "How does the Health component monitor the software?" asks for the mechanism; the sentence
# that names X and the verb ("... monitors the execution health of the software.") restates
# the question, and the one after it says how ("It does so by pinging active components ...").
# Present tense only: "How did X die?" asks about an event, "how do I" / "how many" are
# procedure and quantity questions.
_MANNER_QUESTION = re.compile(r"^how (does|do|is|are) (?!(i|we|you|one)\b)\S")
_MANNER = re.compile(
    r"\b(by|via|through|using|does so|do so|done by|in order to|so that|when|whenever|each|"
    r"every)\b",
    re.IGNORECASE,
)


def asks_manner(question: str) -> bool:
    """Whether the question asks how something works ("How does X monitor Y?")."""
    return _MANNER_QUESTION.match(" ".join(question.casefold().split())) is not None


def says_how(c: Candidate) -> bool:
    """Whether a sentence that continues about the subject says how ("It does so by ...")."""
    return continues(c) and _MANNER.search(c.text) is not None


@lru_cache(maxsize=16_384)  # evidence sentences recur across questions
def pairs(text: str) -> frozenset[tuple[str, str]]:
    """Neighbouring content terms of `text` ("battle hasting"): a phrase the question names."""
    words = [stem(w) for w in WORD.findall(text.casefold()) if w not in QUESTION_STOPWORDS]
    return frozenset(itertools.pairwise(words))


def answers_type(qtype: QuestionType, c: Candidate) -> bool:
    """Whether the sentence has what a quantity or definition question asks for (a number, a
    defining phrase): then a near-tie adds nothing the lead lacks."""
    if qtype == "quantity":
        return has_number(c.text)
    if qtype == "definition":
        return _DEFINING.search(c.text) is not None
    return False


def redundant(c: Candidate, quoted: list[Candidate], share: float) -> bool:
    """Whether at least `share` of the sentence's content terms are already quoted."""
    own = terms(c.text)
    if not own:
        return True
    seen = frozenset().union(*(terms(x.text) for x in quoted))
    return len(own & seen) >= share * len(own)
