"""What kind of answer a factoid question expects, and whether a sentence carries one.

"Who ruled Cyprus in 1191?" asks for a person, "In what year did Dyrrachium fall?" for a date,
"How many judges sit on the court?" for a number, "Which country left the embargo?" for a
place, "What treaty replaced it?" for a name: the question's wh-word and head noun say so
(`expected`). A sentence *carries* such an answer when it holds one the question does not
already hold (`carries`): a capitalised name at least half of whose words are not the
question's, a year / month / century the question does not write, a number it does not write.
"The fleet reached Cyprus in 1191." repeats the question; "... the despot Isaac Komnenos."
carries a person.

No tagger, no model: a name is what English capitalises, a date or a number is what digits and
a few words write. So the rules that rely on it are scoped by the policy (`[answerer]`
`answer_types`, `answer_type_firm`): the provider (provider.py) adds `answer_type_bonus`
to a sentence that carries the expected kind (`shape_bonus`), and a lead that lacks it takes
the sentence next to it that has it (`completion`) - never a sentence otherwise (no padding).

Digits that name rather than count are neither a number nor a date: inside an identifier
("SDD-0012", "x86_64", "CD4017") or a reference ("Section 4.2", "Figure 3", "Table 2"), and a
year-like number with a unit after it measures ("1024 bytes"): "When was the buffer resized?"
is not answered by "It now holds 1024 bytes."
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from citebound.policy import AnswererPolicy
from citebound.policy.answerer import AnswerKind
from citebound.text.lexicon import (
    HYPHENATED_WORD,
    MAGNITUDE_WORDS,
    MULTIPLIER_WORDS,
    QUESTION_STOPWORDS,
    UNITS,
    number_words,
)
from citebound.text.terms import terms

from .candidates import Candidate

__all__ = [
    "HEAD_NOUNS",
    "AnswerType",
    "answered",
    "asked",
    "carries",
    "completion",
    "expected",
    "has_number",
    "shape_bonus",
]

# The policy's kinds (`AnswerKind`), or "none": the question's words name no kind of answer.
AnswerType = AnswerKind | Literal["none"]

# Head nouns after "which / what" naming the kind of thing asked for. Small, general lists
# (not fitted to any article): people, places, named things (what English capitalises).
_PERSON_NOUNS = (
    r"person|people|man|woman|men|women|king|queen|prince|princess|emperor|empress|pope|"
    r"president|leader|ruler|duke|duchess|lord|lady|commander|admiral|"
    r"chancellor|minister|governor|mayor|senator|author|writer|poet|painter|artist|"
    r"composer|architect|scientist|philosopher|inventor|explorer|founder|player|coach|"
    r"singer|actor|actress|director|bishop|archbishop|saint|monk|knight|son|daughter|"
    r"father|mother|brother|sister|wife|husband|heir|successor|predecessor|individual|"
    r"mathematician|physicist|chemist|economist|historian|politician|dynasty|family|tribe"
)
# Not "port" nor "state": in technical text they are a software port and a state machine's
# state ("Which port does the dispatcher use?").
_PLACE_NOUNS = (
    r"country|countries|nation|city|cities|town|village|province|region|county|"
    r"island|continent|river|mountain|lake|sea|ocean|capital|territory|kingdom|"
    r"empire|district|place|location|site|area|colony|peninsula|valley|coast|bay"
)
_NAME_NOUNS = (
    r"treaty|treaties|company|companies|organization|organisation|institution|university|"
    r"college|school|team|club|party|church|religion|language|act|law|court|council|"
    r"agency|committee|office|ship|book|film|album|band|award|war|battle|army|"
    r"navy|newspaper|magazine|brand|station|network|airline|bank|program|programme|"
    r"project|mission|festival|holiday|movement|order|group|body|institute"
)
_DATE_NOUNS = r"year|years|century|centuries|decade|date|month|day|era|period|season"
_NUMBER_NOUNS = (
    r"percentage|percent|proportion|fraction|number|amount|size|population|length|"
    r"distance|temperature|speed|cost|price|height|age|total|sum|quantity|"
    r"weight|mass|volume|rate|ratio|value|score"
)
# Every head noun above, one word each (llm/extractive/asked.py reads where a wh-phrase ends).
HEAD_NOUNS = frozenset(
    "|".join((_PERSON_NOUNS, _PLACE_NOUNS, _NAME_NOUNS, _DATE_NOUNS, _NUMBER_NOUNS)).split("|")
)
# "what / which [adjective] NOUN", "what is the NOUN of", "in which NOUN", "name of the NOUN".
_WH_NOUN = r"(?:what|which)\s+(?:(?:is|was|are|were)\s+the\s+)?(?:\w+\s+)?(?:{nouns})(?:'s)?\b"

_RULES: tuple[tuple[AnswerType, re.Pattern[str]], ...] = (
    # "when" opening a question about an event ("When did X fall?"), not a clause ("When
    # American car companies rolled out ..., which policy ended?").
    (
        "date",
        re.compile(
            r"^when\s+(?:did|was|were|is|does|do|will|had|has|are|can|could|would)\b"
            r"|\bwhen\s*\??$|" + _WH_NOUN.format(nouns=_DATE_NOUNS)
        ),
    ),
    (
        "number",
        re.compile(
            r"\bhow\s+(?:many|much|long|far|old|large|big|tall|high|wide|deep|fast|heavy|"
            r"often|hot|cold)\b|" + _WH_NOUN.format(nouns=_NUMBER_NOUNS)
        ),
    ),
    (
        "person",
        re.compile(
            r"^(?:who|whom|whose)\b|\b(?:by|to|from|with|for|of)\s+whom\b|\bwho\s*\??$|"
            + _WH_NOUN.format(nouns=_PERSON_NOUNS)
        ),
    ),
    (
        "place",
        re.compile(
            r"^where\b|\bwhere\s*\??$|\bwhere\s+(?:did|was|were|is|does|do|are)\b|"
            + _WH_NOUN.format(nouns=_PLACE_NOUNS)
        ),
    ),
    (
        "name",
        re.compile(
            r"\b(?:what|which)\s+(?:is|was|are|were)\s+the\s+names?\b|\bname\s+of\s+the\b|"
            r"\bwhat\s+(?:is|was|are|were)\s+.{1,60}\s+called\??$|"
            + _WH_NOUN.format(nouns=_NAME_NOUNS)
        ),
    ),
)


# "How many years / centuries ...?" counts: a number, not a date.
_COUNT_OF_TIME = re.compile(r"\bhow\s+many\s+(?:years|centuries|decades)\b")


@lru_cache(maxsize=4096)
def expected(question: str) -> AnswerType:
    """The kind of answer `question` expects ("none" when its words do not say).

    The first matching rule wins: date before number ("In what year ...?" is a date, "How many
    years ...?" a number), person and place before name ("Which country ...?" is a place).

    >>> expected("Who ruled Cyprus in 1191?"), expected("In what year did Dyrrachium fall?")
    ('person', 'date')
    >>> expected("Which country is not badly hit?"), expected("What ruined the plans?")
    ('place', 'none')
    """
    q = " ".join(question.casefold().split())
    for kind, pattern in _RULES:
        if kind == "date" and _COUNT_OF_TIME.search(q):
            continue
        if pattern.search(q):
            return kind
    return "none"


# Units after a year-like number make it a quantity ("1024 bytes", "2000 h"): the validator's
# units (validate/swap.py) and data sizes, without "in" ("founded in 1947 in Paris").
_UNIT_WORDS = sorted((UNITS - {"in"}) | {"byte", "bytes", "bit", "bits", "kb", "mb", "gb"})
_NO_UNIT = r"(?!\s?°?\s?(?i:" + "|".join(_UNIT_WORDS) + r")\b)"
_YEAR = re.compile(
    r"\b(?:1\d{3}|20\d{2})s?\b"
    + _NO_UNIT
    + r"|\b\d{1,4}\s*(?:BC|BCE|AD|CE)\b|\b(?:AD|CE)\s*\d{1,4}\b|\b\d{2}s\b"
)
_MONTH = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\b"
)
_CENTURY = re.compile(
    r"\b(?:\d{1,2}(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|"
    r"ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|"
    r"eighteenth|nineteenth|twentieth|twenty-first)[\s-]+(?:century|centuries|millennium)\b",
    re.IGNORECASE,
)
# Number words: the lexicon's one list (two to ninety, the magnitudes with their plurals,
# "half / twice / thrice"), plus "double / triple", which say how many times as the
# multipliers do but which the validator need not compare.
_NUMBER_WORDS = (
    *number_words(2, 90),
    *(f"{w}s?" for w in MAGNITUDE_WORDS),
    *MULTIPLIER_WORDS,
    "double",
    "triple",
)
# Digits count when they start a token: not inside an identifier ("CD4017", "x86_64") nor after
# a capital-letter code and its hyphen ("SDD-0012"; "mid-1990s" keeps its number).
_NUMBER = re.compile(
    r"(?<![\w.])(?<!(?-i:[A-Z])-)\d+(?:[.,]\d+)*|\b(?:" + "|".join(_NUMBER_WORDS) + r")\b",
    re.IGNORECASE,
)
# References to a part of a document: their numbers say where, not how many or when.
_REFERENCE = re.compile(
    r"(?:\b(?:sections?|sect\.|chapters?|ch\.|figures?|figs?\.|tables?|pages?|pp?\.|"
    r"appendix|appendices|annex|clauses?|paragraphs?|para\.|equations?|eqs?\.)|§)"
    r"\s*[A-Z]?\d+(?:[.-]\d+)*[a-z]?\b",
    re.IGNORECASE,
)
# Digits right after letters ("CD4017", "x86_64", "ATmega328") or after a capital-letter code
# and a hyphen ("SDD-0012") make an identifier, removed before a year is looked for. Digits
# first stay ("10th", "1990s", "25Nm"), and so does a prefixed year ("mid-1990s", "post-1945").
_IDENTIFIER = re.compile(r"\b(?:[^\W\d_]+\d|[A-Z][A-Z0-9]*-\d)\w*")
# A run of capitalised words with the short function words names keep inside them ("Court
# of Justice of the European Union", "Isaac Komnenos", "UK").
_NAME_RUN = re.compile(
    r"(?<![\w'])[A-Z][\w'’-]*(?:\s+(?:(?:of|the|and|de|du|la|le|von|van|der|al|bin|ibn)\s+)*"
    r"[A-Z][\w'’-]*)*"
)
_OPENING = re.compile(r"^\W*")


def _new_names(text: str, asked: frozenset[str]) -> bool:
    """Whether `text` holds a capitalised name at least half of whose capitalised words are
    not the question's terms (`asked`). The sentence's first word counts only inside a run
    ("Isaac Komnenos ruled"), never alone ("However, ..."), and stopwords never do."""
    start = _OPENING.match(text)
    first = start.end() if start else 0
    for run in _NAME_RUN.finditer(text):
        words = [w for w in HYPHENATED_WORD.findall(run.group()) if w[:1].isupper()]
        if run.start() == first and len(words) == 1:
            continue  # a capital at the sentence start marks the start, not a name
        words = [w for w in words if w.casefold() not in QUESTION_STOPWORDS]
        if not words:
            continue
        fresh = [w for w in words if not (terms(w) & asked)]
        # "New" is a definition, not a fitted share: a name is new unless most of its words
        # are the question's ("Isaac Komnenos" is new to "Who ruled after Isaac?").
        if 2 * len(fresh) >= len(words):
            return True
    return False


def _quantities(text: str) -> str:
    """`text` without its references ("Section 4.2") and identifiers ("SDD-0012"): what is
    left of its digits counts or dates."""
    return _IDENTIFIER.sub(" ", _REFERENCE.sub(" ", text))


def has_number(text: str) -> bool:
    """Whether `text` writes a number outside references and identifiers, in digits or words:
    a quantity question's type cue (scoring.py). "Described in Section 4.2." has none, "up to
    six arguments" has one.

    >>> has_number("It takes 4 minutes."), has_number("See Section 4.2 and SDD-0012.")
    (True, False)
    """
    return _NUMBER.search(_quantities(text)) is not None


def _new_matches(pattern: re.Pattern[str], text: str, question: str) -> bool:
    """Whether `pattern` matches something in `text` that the question does not write
    (references and identifiers left out of both).

    >>> _new_matches(_NUMBER, "It is described in Section 4.2 and SDD-0012.", "How long?")
    False
    >>> [_new_matches(_YEAR, t, "When?") for t in ("It holds 1024 bytes.", "In 1024.")]
    [False, True]
    """
    said = {m.casefold() for m in pattern.findall(_quantities(question))}
    return any(m.casefold() not in said for m in pattern.findall(_quantities(text)))


@lru_cache(maxsize=65_536)  # evidence sentences recur across a question's candidates
def carries(kind: AnswerType, text: str, question: str) -> bool:
    """Whether sentence `text` holds an answer of `kind` that `question` does not hold.

    >>> q = "Who ruled Cyprus in 1191?"
    >>> carries("person", "He was taken by the despot Isaac Komnenos.", q)
    True
    >>> carries("person", "The fleet reached Cyprus in 1191.", q)
    False
    """
    if kind == "none":
        return False
    if kind == "date":
        return any(_new_matches(p, text, question) for p in (_YEAR, _MONTH, _CENTURY))
    if kind == "number":
        return _new_matches(_NUMBER, text, question)
    return _new_names(text, terms(question))


def asked(question: str, policy: AnswererPolicy) -> AnswerType:
    """The expected kind of answer when the policy applies its rules to it, else "none"."""
    kind = expected(question)
    return kind if kind != "none" and kind in policy.answer_types else "none"


def shape_bonus(kind: AnswerType, c: Candidate, question: str, policy: AnswererPolicy) -> float:
    """`answer_type_bonus` for a sentence carrying the expected kind of answer, minus
    `answer_type_penalty` for one lacking it (0 when the question expects no kind)."""
    if kind == "none":
        return 0.0
    return (
        policy.answer_type_bonus if carries(kind, c.text, question) else -policy.answer_type_penalty
    )


def answered(kind: AnswerType, lead: Candidate, question: str, policy: AnswererPolicy) -> bool:
    """Whether the lead holds a kind of answer whose test is firm (`answer_type_firm`: a date
    or a number the question does not write): then a near-tie adds nothing it lacks, as a
    number does for a quantity question (`scoring.answers_type`)."""
    return kind in policy.answer_type_firm and carries(kind, lead.text, question)


def completion(
    kind: AnswerType,
    lead: Candidate,
    after: Candidate | None,
    question: str,
    policy: AnswererPolicy,
) -> Candidate | None:
    """The sentence that completes a lead lacking the expected kind of answer, or None.

    * `answer_type_firm`: for these kinds, the sentence right after the lead (`after`,
      `following.follower`) joins when it carries one ("... the Lisbon Treaty was signed." /
      "It entered into force in 2009.").

    A lead that carries the kind already, a list intro (it only announces) and a lower-case
    list item (quoted only under its intro) never take or give a completion.
    """
    if kind == "none" or carries(kind, lead.text, question):
        return None
    if kind in policy.answer_type_firm and _completes(after, kind, question):
        return after
    return None


def _completes(c: Candidate | None, kind: AnswerType, question: str) -> bool:
    return (
        c is not None
        and not c.intro
        and not c.lower
        and bool(c.shared)
        and carries(kind, c.text, question)
    )
