"""Polarity: does a sentence flip what its cited evidence says (a negation the evidence lacks,
a negated evidence span restated plainly, an antonym whose partner the evidence has)?

Step 1 of the support check (`validate.support`): a flip scores the sentence 0.0 there.
"""

from __future__ import annotations

import re
from functools import lru_cache

from citebound.validate.evidence import NEGATIONS, EvidenceIndex, lemma

_NEGATION_RE = re.compile(r"\b(?:" + "|".join(sorted(NEGATIONS)) + r")\b|n['’]t\b")
_ANTONYM_PAIRS = (
    ("increase", "decrease"),
    ("always", "never"),
    ("open", "close"),
    ("above", "below"),
    ("before", "after"),
    ("maximum", "minimum"),
    ("high", "low"),
    ("higher", "lower"),
    ("enable", "disable"),
    ("allow", "forbid"),
    ("first", "last"),
    ("more", "less"),
    ("larger", "smaller"),
    ("win", "lose"),
    ("inside", "outside"),
    ("start", "stop"),
    ("true", "false"),
    ("accept", "reject"),
    ("include", "exclude"),
    ("older", "younger"),
    ("earlier", "later"),
    ("north", "south"),
    ("east", "west"),
    # Manuals: what a procedure or a part's place turns on.
    ("install", "remove"),
    ("clockwise", "counterclockwise"),
    ("clockwise", "anticlockwise"),
    ("inlet", "outlet"),
    ("upstream", "downstream"),
    ("connect", "disconnect"),
    ("tighten", "loosen"),
    ("engage", "disengage"),
    ("lock", "unlock"),
    ("energize", "deenergize"),
    ("charge", "discharge"),
    ("upper", "lower"),
    ("top", "bottom"),
    ("hot", "cold"),
    ("positive", "negative"),
    ("heat", "cool"),
)
_ANTONYMS: dict[str, str] = {}
for _a, _b in _ANTONYM_PAIRS:
    _ANTONYMS[lemma(_a)] = lemma(_b)
    _ANTONYMS[lemma(_b)] = lemma(_a)
# A leading "No," / "Yes." answers a yes/no question; it does not negate the evidence.
INTERJECTION = re.compile(r"^\W*(?:no|yes)\b[\s,.;:!-]*", re.IGNORECASE)


_ALL_WORDS = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=4096)
def _all_lemmas(text: str) -> frozenset[str]:
    """Every lemma of `text`, stopwords kept (for antonyms and negations)."""
    return frozenset(map(lemma, _ALL_WORDS.findall(text.casefold().replace("’", "'"))))


# "No. 1", "no. 3": the abbreviation of number, not a negation.
_NUMBER_ABBREVIATION = re.compile(r"\bno\.\s*(?=\d)")


def _polarity_text(text: str) -> str:
    return _NUMBER_ABBREVIATION.sub("# ", text.casefold().replace("’", "'"))


@lru_cache(maxsize=16_384)
def _negated(text: str) -> bool:
    return _NEGATION_RE.search(_polarity_text(text)) is not None


def polarity_flip(
    sentence: str, words: frozenset[str], index: EvidenceIndex, window: str, cover: float
) -> str:
    """Why the sentence flips the polarity of its evidence, or "" when it does not.

    Quotations never reach this check (`is_quotation`)."""
    negated = [index.span_words[i] for i in index.negated]
    if _negated(INTERJECTION.sub("", sentence)):
        # The negation must come from an evidence span about the same thing: one sharing at
        # least half of the sentence's supported lemmas (and at least one).
        need = max(1, (len(words & index.words) + 1) // 2)
        if not any(len(words & span) >= need for span in negated):
            return "negation absent from the cited evidence"
    else:
        # A plain sentence repeating a negated evidence span (`must not be started` ->
        # `must be started`), both ways: the sentence is that span without its negation, not
        # a longer sentence that happens to contain a short negated clause's words.
        for span in negated:
            shared = len(words & span)
            if span and words and min(shared / len(span), shared / len(words)) >= cover:
                return "the evidence negates what the sentence states"
    swapped = sorted((w, _ANTONYMS[w]) for w in _all_lemmas(sentence) if w in _ANTONYMS)
    swapped = [(w, other) for w, other in swapped if w not in index.all_words]
    if swapped:
        window_all = _all_lemmas(window)
        for _, other in swapped:
            if other in window_all:
                return f"antonym: evidence says {other!r}"
    return ""
