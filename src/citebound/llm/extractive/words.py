"""Content terms: what a question or a sentence is about (stopwords out, plurals folded)."""

from __future__ import annotations

import re
from functools import lru_cache

from citebound.validate.checks import stem as _vstem

# Words that say what kind of question it is, not what it is about.
_STOPWORD_TEXT = """
    a about above after all also an and any are as at be been before being between both
    but by can could describe did do does during each explain for from give had has have
    he her his how i if in into is it its list many may me might more most much must my
    no not of on or our per please shall she should so some such tell than that the
    their them then there these they this those to under up was we were what when where
    which while who whom whose why will with would you your
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD = re.compile(r"\w+")


def stem(word: str) -> str:
    # The validator's suffix stripper (plural, -ed/-ing, final e): "classified" ~ "classifying",
    # "ruled" ~ "rules", so a question and the sentence that answers it match as the support
    # check will see them (SQuAD tune split: answerer refusals 10 -> 8 of 293).
    return _vstem(word)


@lru_cache(maxsize=16_384)  # evidence sentences recur across questions
def terms(text: str) -> frozenset[str]:
    """Content terms of `text`: lower-cased words minus stopwords, plural-folded."""
    return frozenset(stem(w) for w in _WORD.findall(text.casefold()) if w not in STOPWORDS)
