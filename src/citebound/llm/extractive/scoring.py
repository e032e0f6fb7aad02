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
from citebound.text.markup import QuestionType
from citebound.text.terms import STOPWORDS, stem, terms

from .candidates import Candidate

_DEFINING = re.compile(
    r"^[\w`´' -]{1,40}:\s+\S|"  # glossary style: "Queued component: has no thread ..."
    r"\b(is|are)\s+(a|an|the|one|used|responsible|made|called|defined)\b|\bmeans\b|"
    r"\brefers? to\b|\brepresents?\b|\bprovides?\b|\bdefines?\b|\bconsists? of\b",
    re.IGNORECASE,
)
_WORDS = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")
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


def type_bonus(qtype: QuestionType, c: Candidate, policy: AnswererPolicy) -> float:
    """Small score shifts for what the question asks for (coverage stays the main signal)."""
    bonus = 0.0
    if c.intro and qtype not in ("procedure", "list"):
        bonus -= policy.intro_penalty  # "... the following rules:" announces; an item states
    if qtype == "definition" and _DEFINING.search(c.text):
        bonus += policy.type_bonus
    elif qtype == "quantity":
        bonus += policy.type_bonus if _DIGIT.search(c.text) else -policy.missing_number_penalty
    elif qtype == "reason" and _REASONING.search(c.text):
        bonus += policy.type_bonus
    elif qtype in ("procedure", "list") and is_step(qtype, c):
        bonus += policy.step_bonus
    return bonus


# "Queued component: has no thread ...", "`BufferManager` is a passive ISF component.": the
# subject, then the defining verb (or a glossary colon).
_SUBJECT = re.compile(
    r"^(?P<subject>[^.:;!?]{1,80}?)\s*(:|\b(is|are|has|have|provides?|represents?|consists?|"
    r"defines?|means|refers?)\b)",
    re.IGNORECASE,
)


# "What is a queued component?", "What does the ActiveRateGroup component do?"; not "What is
# it cleaned with?" (a pronoun, a trailing preposition: something is asked *about* X).
_WHAT_IS = re.compile(
    r"^(what|who) (is|are|was|were|does|do) (?!(it|they|them|this|that|these|those)\b)"
    r"(?P<x>[^?]+?)( (do|mean|provide))?\s*\??$"
)
_TRAILING_PREPOSITION = re.compile(r"\b(with|by|for|of|to|in|on|from|at|about|into)$")


def definition_subject(question: str) -> frozenset[str]:
    """The terms of X in "What is X?" (empty when the question is not of that form)."""
    q = " ".join(question.casefold().split())
    m = _WHAT_IS.match(q)
    if m is None or _TRAILING_PREPOSITION.search(m.group("x").rstrip(" ?")):
        return frozenset()
    return frozenset(t for t in terms(m.group("x")) if len(t) > 1 or t.isdigit())


def defines_subject(subject: frozenset[str], c: Candidate, qualifiers: int) -> bool:
    """Whether the sentence defines the question's subject: it names every subject term before
    its defining verb ("A queued component has ..."), not in passing ("... used by queued
    components")."""
    m = _SUBJECT.match(c.text)
    if not subject or m is None:
        return False
    named = terms(m.group("subject"))
    # The subject phrase is X with at most `qualifiers` more terms ("`Svc::ComStub`", "A
    # queued component"), not a longer phrase that mentions X ("The pure virtual function to
    # implement a port call is ...").
    return subject <= named and len(named - subject) <= qualifiers


# A sentence that goes on about the subject just defined ("It allocates a set of buffers.").
_CONTINUES = re.compile(r"^(it|its|they|their|this (component|class|module|port|service))\b", re.I)


def continues(c: Candidate) -> bool:
    """Whether the sentence carries on about the previous sentence's subject."""
    return _CONTINUES.match(c.text) is not None


@lru_cache(maxsize=16_384)  # evidence sentences recur across questions
def pairs(text: str) -> frozenset[tuple[str, str]]:
    """Neighbouring content terms of `text` ("battle hasting"): a phrase the question names."""
    words = [stem(w) for w in _WORDS.findall(text.casefold()) if w not in STOPWORDS]
    return frozenset(itertools.pairwise(words))


def answers_type(qtype: QuestionType, c: Candidate) -> bool:
    """Whether the sentence has what a quantity or definition question asks for (a number, a
    defining phrase): then a near-tie adds nothing the lead lacks."""
    if qtype == "quantity":
        return _DIGIT.search(c.text) is not None
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
