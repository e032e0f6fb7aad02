"""Lexical support: the share of a sentence's content words that a text holds.

A word-overlap heuristic that the validator reports (`validate.lexical_support`) and the
condensed context checks its lines with (`prompt.condense`). Words are the lexicon's: stemmed,
look-alike letters read as Latin, `SUPPORT_STOPWORDS` dropped.
"""

from __future__ import annotations

from functools import lru_cache

from citebound.text.confusables import fold_skeleton
from citebound.text.lexicon import ALL_WORDS, SUPPORT_STOPWORDS, stem


# Memoized: the same evidence texts are compared against every answer sentence and again on
# the next question about the same documents.
@lru_cache(maxsize=16_384)
def content_words(text: str) -> frozenset[str]:
    """Stemmed lowercase words of `text` without stopwords (digits kept as words)."""
    return frozenset(
        stem(w)
        for w in ALL_WORDS.findall(fold_skeleton(text))  # look-alike letters read as Latin
        if w not in SUPPORT_STOPWORDS and (len(w) > 1 or w.isdigit())
    )


def lexical_support(sentence: str, evidence: str) -> float:
    """|content words of sentence ∩ content words of evidence| ÷ |content words of sentence|.

    A sentence without content words has nothing to support and scores 1.0.

    >>> lexical_support("Torque the bolts to 40 Nm.", "Tighten each bolt to 40 Nm.")
    0.75
    """
    words = content_words(sentence)
    if not words:
        return 1.0
    return len(words & content_words(evidence)) / len(words)
