"""The names a comparison compares, and whether the evidence states one of them in full.

"Which tennis player won more Grand Slam titles, Henri Leconte or Jonathan Stark?" names what
it compares: Henri Leconte and Jonathan Stark. `names.stated` lets it through when the
evidence states any of its names, and "Grand Slam" is stated by a paragraph on another
player, so the answerer quoted Barbara Jordan's Grand Slam titles. A comparison answered from
evidence that states neither compared name in full is about something else, so the extractive
answerer refuses it (provider.py `rank`, `[answerer] compared_stated`).

A comparison is two names joined by "or" ("..., Bella or Al Jamila?", "Did Charles Gounod or
Mikhail Glinka ...?"), or by "and" in a yes / no question ("Are Camassia and Chelone both
native to North America?"). A name is a run of capitalised words, with the short words names
keep inside them ("University of West Florida"); question words and a lone capitalised first
word are not names. It is stated in full when the evidence (its text, document title and
heading path) states every word of it as `names.stated` matches a word: the same term, a
shared beginning of `names._NAME_PREFIX` letters, or two neighbouring letters swapped. Every
word, not any: "King Shepherd" is not stated by "The Shiloh Shepherd", nor "La Plaza Mall" by
"Shangri-La Plaza"; a surname alone does not stand for a person either, since the evidence
that answers about one names them in full at least once. Measured on the HaluEval QA tune
set and SQuAD (docs/answers.md#questions-the-answerer-refuses; the measurements:
benchmarks/results/gate_tuning.md).
"""

from __future__ import annotations

import itertools
import re

from citebound.contracts.assembly import AnswerBundle
from citebound.policy import AnswererPolicy
from citebound.text.terms import terms

from .names import evidence_texts, says, stated

__all__ = ["compared_stated", "comparisons"]

# A word, a possessive or initials included ("Clinton's", "F.C.", "O'Quin"), or one mark.
_TOKEN = re.compile(r"[\w'’.-]+|[^\w\s]")
_POSSESSIVE = re.compile(r"['’]s$")
# The short words a name keeps inside it ("Bank of America", "Ateneo de Davao University").
_LINKS = frozenset(
    {"of", "the", "de", "du", "la", "le", "des", "del", "da", "di", "van", "von", "y", "el"}
    | {"al", "bin"}
)
# What may stand between the two sides of a comparison (quotes aside): "A or B", "A, or B",
# "A or the B"; "and" only in a yes / no question (`_YES_NO`).
_BETWEEN = {
    False: re.compile(r"\s*,?\s*or\s+(?:the\s+|an?\s+)?", re.IGNORECASE),
    True: re.compile(r"\s*,?\s*(?:or|and|&)\s+(?:the\s+|an?\s+)?", re.IGNORECASE),
}
_QUOTES = re.compile(r"[\"'“”‘’]")
_YES_NO = re.compile(r"\s*(?:are|were|is|was|do|did|does|have|has)\b", re.IGNORECASE)
_BOTH = re.compile(r"\bboth\b", re.IGNORECASE)


def _capitalised(token: str) -> bool:
    return token[:1].isupper() and len(token.strip(".'’-")) > 1


def _word_terms(word: str) -> frozenset[str]:
    """A name word's terms, its possessive and one-letter pieces ("F.C.") left out."""
    return frozenset(t for t in terms(_POSSESSIVE.sub("", word)) if len(t) > 1 or t.isdigit())


def _names(question: str) -> list[tuple[int, int, tuple[frozenset[str], ...]]]:
    """The question's names: (start, end) in the question and the terms of each word.

    >>> [q[s:e] for q in ["Are Camassia and Chelone both native to North America?"]
    ...  for s, e, _ in _names(q)]
    ['Camassia', 'Chelone', 'North America']
    """
    names: list[tuple[int, int, tuple[frozenset[str], ...]]] = []
    run: list[re.Match[str]] = []

    def close() -> None:
        words = list(run)
        while words and words[-1].group(0).lower() in _LINKS:
            words.pop()
        while words and not _word_terms(words[0][0]):
            words.pop(0)  # "Which", "Are", "The": a question word or an article, no name
        parts = tuple(t for t in (_word_terms(w.group(0)) for w in words) if t)
        lone_start = len(words) == 1 and words[0].start() == first
        if parts and not lone_start:  # a lone capitalised first word starts the sentence
            names.append((words[0].start(), words[-1].end(), parts))
        run.clear()

    tokens = list(_TOKEN.finditer(question))
    first = next((t.start() for t in tokens if t.group(0)[:1].isalnum()), -1)
    for tok in tokens:
        word = tok.group(0)
        if (word[:1].isalnum() and _capitalised(word)) or (run and word.lower() in _LINKS):
            run.append(tok)  # a capitalised word, or a short word inside a name
        elif run:
            close()
    if run:
        close()
    return names


def comparisons(question: str) -> list[tuple[tuple[frozenset[str], ...], ...]]:
    """The pairs of names the question compares, each name as the terms of its words.

    >>> len(comparisons("Which magazine is published in the United Kingdom, Bella or Al Jamila?"))
    1
    >>> comparisons("Who founded Bella and Al Jamila?")
    []
    """
    both = bool(_YES_NO.match(question) or _BOTH.search(question))
    between = _BETWEEN[both]
    names = _names(question)
    return [
        (a[2], b[2])
        for a, b in itertools.pairwise(names)
        if between.fullmatch(_QUOTES.sub("", question[a[1] : b[0]]))
    ]


def compared_stated(bundle: AnswerBundle, question: str, transposed_min_letters: int) -> bool:
    """Whether the question compares nothing, or, for each comparison it makes, an evidence
    text states one of the two names in full (every word of it; see the module docstring)."""
    pairs = comparisons(question)
    if not pairs:
        return True
    said = frozenset().union(*(terms(t) for t in evidence_texts(bundle)))

    def full(name: tuple[frozenset[str], ...]) -> bool:
        return all(any(says(t, said, transposed_min_letters) for t in w) for w in name)

    return all(full(a) or full(b) for a, b in pairs)


def names_held(bundle: AnswerBundle, question: str, p: AnswererPolicy) -> bool:
    """Whether the evidence can be about what the question names (the answerer refuses
    otherwise, before weighing any sentence). With `[answerer] names_stated`: a question that
    names what it asks about ("What is the default port of a PostgreSQL server?") needs an
    evidence stating one of its names, or whatever matches its other words is about something
    else (names.py). With `compared_stated`: a comparison ("..., Henri Leconte or Jonathan
    Stark?") needs one side stated in full; a generic name held ("Grand Slam") is another
    item's."""
    if p.names_stated and not stated(bundle, question, p.transposed_min_letters):
        return False
    return not p.compared_stated or compared_stated(bundle, question, p.transposed_min_letters)
