"""The subject of "What is X?" / "What does X do?" and the sentences that define it.

Shared by retrieval (which brings the chunk defining X into the bundle, `retrieve.definitions`)
and the extractive answerer (which leads with that sentence, `llm.extractive.scoring`), so both
agree on what "a sentence defining X" is.

    >>> sorted(definition_subject("What does the ActiveRateGroup component do?"))
    ['activerategroup', 'component']
    >>> defines(frozenset({"dpwriter"}), "`Svc::DpWriter` is an active component.", 2)
    True
    >>> defines(frozenset({"dpwriter"}), "Buffers reach DpWriter through DpManager.", 2)
    False
"""

from __future__ import annotations

import re

from citebound.text.markup import question_type
from citebound.text.terms import terms

# "Queued component: has no thread ...", "`BufferManager` is a passive ISF component.": the
# subject, then the defining verb (or a glossary colon).
# A code name's "::" (`Svc::ComStub`) is part of the subject, not a glossary colon. The 80
# characters bound the subject phrase (grammar, set by hand, not fitted on a benchmark): longer
# leading text is a clause, not a name, and the bound keeps the lazy match short.
_SUBJECT = re.compile(
    r"^(?P<subject>(?:::|[^.:;!?]){1,80}?)\s*(:(?!:)|\b(is|are|has|have|provides?|represents?|"
    r"consists?|defines?|means|refers?)\b)",
    re.IGNORECASE,
)
# A glossary definition states something after its colon ("Queued component: has no thread");
# 3 words (set by hand from F´ glossary lines, not fitted) tell a statement from a label
# ("Note: see below").
_GLOSSARY_MIN_WORDS = 3
# "Active components must have at least one asynchronous input port": a rule about X, not
# what X is. A modal right before the verb marks it.
# Nor is a phrase that opens with a preposition or a condition, or runs past a comma ("For
# queued and active components, the queue size is passed.": the subject is the queue size).
_NOT_A_SUBJECT = re.compile(
    r"\b(must|shall|should|may|might|can|cannot|could|will|would)\s*$|,|"
    r"^(for|in|on|at|with|by|from|to|as|after|before|when|if|once|while|during|unlike|like)\b",
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


# "What is a hub in the hub pattern?", "What is a topology in F´?": X, then where it lives.
# The setting is not part of what is defined: "The Hub pattern is a way to ..." defines the
# pattern, "A hub is a component with ..." the hub.
# Y is a setting only when it opens with a determiner or a name / code ("in the hub pattern",
# "in F´", "in `Svc::ComStub`", "in Python"): after a bare noun "in" joins one noun phrase
# ("the drop in pressure across the filter", "the change in torque").
_IN_SETTING = re.compile(
    r"^(?P<x>.+?)\s+(in|within|inside)\s+(?P<setting>"
    r"(?:(?i:the|a|an|this|that|these|those|its)\s|[A-Z`]|[^\s]*(?:::|´)).+)$"
)
_WHAT_IS_ANY_CASE = re.compile(_WHAT_IS.pattern, re.IGNORECASE)


def subject_in_setting(question: str) -> tuple[frozenset[str], frozenset[str]]:
    """X of "What is X in Y?" and the terms of Y that X lacks ((X, empty) for "What is X?";
    both empty when the question is not of that form). One-letter terms (the F of F´) are in
    neither, as in `definition_subject`.

    >>> [sorted(t) for t in subject_in_setting("What is a hub in the hub pattern?")]
    [['hub'], ['pattern']]
    >>> subject_in_setting("What is the drop in pressure across the filter?")[1]
    frozenset()
    """
    whole = definition_subject(question)
    # The question's own case: a capital opens a name ("in Python", not "in pressure").
    m = _WHAT_IS_ANY_CASE.match(" ".join(question.split()))
    split = _IN_SETTING.match(m.group("x")) if m is not None and whole else None
    if split is None:
        return whole, frozenset()
    subject = frozenset(t for t in terms(split.group("x")) if len(t) > 1 or t.isdigit())
    if not subject:
        return whole, frozenset()
    return subject, whole - subject


def named_subject(question: str, max_terms: int) -> frozenset[str]:
    """X of a definition question naming a subject of at most `max_terms` terms, else empty:
    the "What is X?" that retrieval promotes definitions for and the answerer's lead rules
    apply to (not "What is the name of the river that runs through the city?")."""
    if question_type(question) != "definition":
        return frozenset()
    subject = definition_subject(question)
    return subject if len(subject) <= max_terms else frozenset()


def defines(
    subject: frozenset[str], sentence: str, qualifiers: int, setting: frozenset[str] = frozenset()
) -> bool:
    """Whether `sentence` defines the subject: it names every subject term before its defining
    verb ("A queued component has ..."), not in passing ("... used by queued components").
    With `setting` (the Y of "What is X in Y?", `subject_in_setting`), a subject phrase that
    also names Y defines Y, not X: "The Hub pattern is ..." for "What is a hub in the hub
    pattern?"."""
    m = _SUBJECT.match(sentence) if setting else None
    if m is not None and terms(m.group("subject")) & setting:
        return False
    return defining_verb(subject, sentence, qualifiers) is not None


def defining_verb(
    subject: frozenset[str], sentence: str, qualifiers: int, *, genus: bool = False
) -> str | None:
    """The verb (lower-cased; ":" for a glossary colon) by which `sentence` defines the
    subject, or None when it does not define it (see `defines`).

    With `genus`, a subject term the phrase lacks may instead follow the verb within
    `_GENUS_WORDS` words: "`Svc::ActiveRateGroup` is an active component that ..." defines
    "the ActiveRateGroup component" (the kind is stated as the genus). At least one subject
    term must still be named before the verb."""
    m = _SUBJECT.match(sentence)
    if not subject or m is None or _NOT_A_SUBJECT.search(m.group("subject")) is not None:
        return None
    rest = sentence[m.end() :].split()
    if m.group(2).startswith(":") and len(rest) < _GLOSSARY_MIN_WORDS:
        return None  # "Queued Component: Yes; No" is a table cell, not a definition
    named = terms(m.group("subject"))
    # The subject phrase is X with at most `qualifiers` more terms ("`Svc::ComStub`", "A
    # queued component"), not a longer phrase that mentions X ("The pure virtual function to
    # implement a port call is ...").
    if len(named - subject) > qualifiers:
        return None
    missing = subject - named
    if missing and genus and missing != subject:
        missing -= terms(" ".join(rest[:_GENUS_WORDS]))
    return None if missing else m.group(2).casefold()


# "is an active component": the genus follows the verb within its first 4 words (article,
# up to two modifiers, noun: English noun-phrase shape, set by hand, not fitted).
_GENUS_WORDS = 4
