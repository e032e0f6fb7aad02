"""Content terms of a question or a text, shared by the gate and the extractive answerer.

A term is a lower-cased word minus the question stopwords (`lexicon.QUESTION_STOPWORDS`),
stemmed with the lexicon's suffix stripper (plural, -ed/-ing, final e: "classified" ~
"classifying"), so the gate, the answerer and the support check see the same words.
`key_terms` are the terms that say what a question is about, `framing` the words that say what
kind of answer it asks for; the gate's measures over ranked rows (coverage, names, rarity) are
in `citebound.gate.measures`.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from citebound.text.confusables import fold_skeleton

# The lexicon's suffix stripper, the support check's (plural, -ed/-ing, final e):
# "classified" ~ "classifying", "ruled" ~ "rules", so a question and the sentence that answers
# it match as the support check will see them (SQuAD tune split: answerer refusals 10 -> 8 of
# 293).
from citebound.text.lexicon import QUESTION_STOPWORDS, WORD, stem

# Where an identifier joins words: an underscore, a lower-case letter or digit before a capital
# ("cruiseRatio", "Rate2Group"), a capital run before a capitalised word ("HTTPServer").
# snake_case: an underscore joins words (`minimum_cruise_ratio`); a hyphen is no word
# character, so `minimum-cruise-ratio` is three words already.
_JOINT = re.compile(r"_+")


def split_identifiers(text: str) -> str:
    """`text` with snake_case identifiers cut into their words, so `minimum_cruise_ratio`,
    `minimum-cruise-ratio` and "minimum cruise ratio" are the same `terms`.

    >>> split_identifiers("minimum_cruise_ratio of rate__group")
    'minimum cruise ratio of rate group'
    """
    return _JOINT.sub(" ", text)


@lru_cache(maxsize=16_384)  # evidence sentences recur across questions
def terms(text: str) -> frozenset[str]:
    """Content terms of `text`: lower-cased words minus stopwords, plural-folded; identifiers
    count as their words (`split_identifiers`)."""
    # Look-alike letters are the word they imitate ("ZQ-7 sеal" with a Cyrillic е is "seal").
    folded = unicodedata.normalize("NFKD", fold_skeleton(split_identifiers(text)))
    if not folded.isascii():  # "fiancée" ~ "fiancee": accents do not change the word
        folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return frozenset(stem(w) for w in WORD.findall(folded) if w not in QUESTION_STOPWORDS)


# Words that frame what a question asks rather than say what it is about: the evidence that
# answers it rarely repeats them (docs/gate.md "Words that frame the question count only when
# held"). Measured on the
# answerable SQuAD 2.0 dev tune questions (articles 1-2 and 5-6): absent from every row holding
# the gold answer in 20 of 27 questions saying "type", 13 of 14 "name", 14 of 19 "year", 14 of
# 23 "country", 8 of 9 "entity", 15 of 15 "commonly"/"typically". Chosen as
# classes of English words, not from the questions refused:
# - the kind of answer asked for (a generic noun: "What type of company ...?", "In which year
#   ...?", "Which entity ...?", "Name a model ...");
# - hedges and sentence adverbs ("commonly", "typically", "generally", "according to");
# - verb particles ("kicked ... out");
# - the measure of "how long / how old / how far ...?" (only after "how": "long-range" is content).
_ANSWER_KINDS = """
    type types kind kinds sort sorts name names entity entities year years country countries
    example examples
"""
_HEDGES = """
    according approximately broadly commonly currently especially eventually generally
    initially largely mainly mostly often originally particularly primarily roughly
    specifically typically ultimately usually
"""
# Verb particles ("Who kicked Ethelred out?", "What set it off?"): the verb carries the sense.
_PARTICLES = "out off"
FRAMING = frozenset(f"{_ANSWER_KINDS} {_HEDGES} {_PARTICLES}".split())
_MEASURES = "long old far big large small tall high fast wide deep heavy early late soon"
# "how long", "how old", "how far" ("how many / much" are stopwords; "Describe how pumps fail"
# keeps "pumps": only a measure word after "how" frames).
_HOW_MEASURE = re.compile(rf"\bhow\s+({'|'.join(_MEASURES.split())})\b", re.IGNORECASE)


@lru_cache(maxsize=4_096)
def framing(question: str) -> frozenset[str]:
    """The question's words that frame what it asks (`FRAMING`, the measure after "how"),
    lower-cased.

    >>> sorted(framing("How long did the invasion typically last, according to the reports?"))
    ['according', 'long', 'typically']
    """
    words = {w.casefold() for w in WORD.findall(question)}
    measure = {m.casefold() for m in _HOW_MEASURE.findall(question)}
    return frozenset(words & FRAMING | measure)


@lru_cache(maxsize=4_096)
def key_terms(question: str) -> frozenset[str]:
    """The question's terms that can say what it is about: one-letter words ("F" of "F´",
    "L and P") match too much to count, digits always count, `framing` words never do.

    >>> sorted(key_terms("In which year did the Normans typically conquer England?"))
    ['conquer', 'england', 'norman']
    """
    framed = framing(question)
    own = [w for w in WORD.findall(question) if w.casefold() not in framed]
    return frozenset(t for t in terms(" ".join(own)) if len(t) > 1 or t.isdigit())


@lru_cache(maxsize=4_096)
def framing_terms(question: str) -> frozenset[str]:
    """Terms of the question's `framing` words that are not also key terms: they count when a
    text holds them ("What type of reduction ...?" next to "the type of reduction used"), they
    are never required.

    >>> sorted(framing_terms("What type of reduction is most frequently used?"))
    ['typ']
    """
    return terms(" ".join(sorted(framing(question)))) - key_terms(question)
