"""The names a question asks about, and whether the evidence states any of them.

"What is the default port of a PostgreSQL server?" shares "default" and "port" with F´'s
"0.0.0.0:50000: The default communication interface port.", but it asks about PostgreSQL,
which no evidence names: the words that match are about something else, so the extractive
answerer refuses (provider.py `rank`). One name stated is enough, and a name counts as stated
when the evidence writes it with another ending (a typo, an inflection) or spells out an
acronym, or with two neighbouring letters swapped in a word of at least `[answerer]
transposed_min_letters` letters and no digit: users misspell ("Raouliii", "Hatmanis") and
abbreviate ("AAA"), but "CD4071" / "CD4017", "ATmega238" / "ATmega328" and "Saab" / "Saba"
name different things, so a swapped pair never makes a code (a word with a digit) or a short
word stated.
"""

from __future__ import annotations

import re

from citebound.contracts.assembly import AnswerBundle
from citebound.text.lexicon import WORD
from citebound.text.terms import terms

__all__ = ["names", "stated"]

# A name is stated by a word it begins or that begins it ("Raouliii" / "Raoulii", "Europe" /
# "European"). Shorter stems match only exactly (set by hand: 5 letters keep "post" from
# matching "PostgreSQL").
_NAME_PREFIX = 5
# An acronym: 2-6 capitals ("AAA", "GDS", "TFEU").
_ACRONYM = re.compile(r"^[A-Z]{2,6}$")
# A run of capitalised words, with the short function words names keep inside them
# ("American Automobile Association", "Treaty on the Functioning of the European Union").
_CAPITALISED_RUN = re.compile(
    r"\b[A-Z][\w'-]*(?:\s+(?:(?:of|the|and|for|on|in|de|du|la)\s+)*[A-Z][\w'-]*)+"
)


def _transposed(a: str, b: str, min_letters: int) -> bool:
    """`a` is `b` with two neighbouring letters swapped, the commonest typo ("Gutneberg" for
    "Gutenberg"), for words of at least `min_letters` letters without a digit: in a part number
    or model code a swap names another part ("CD4071" is not a CD4017).

    >>> [_transposed("gutneberg", "gutenberg", 5), _transposed("tefu", "tfeu", 5)]
    [True, False]
    >>> [_transposed("cd4071", "cd4017", 5), _transposed("abcde", "badce", 5)]
    [False, False]
    """
    if len(a) != len(b) or len(a) < min_letters:
        return False
    if any(c.isdigit() for c in a + b):
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    if len(diff) != 2:
        return False
    i, j = diff
    return j == i + 1 and a[i] == b[j] and a[j] == b[i]


def _name_words(question: str) -> list[str]:
    """The question's words that hold a capital letter, one-letter words ("I", the "F" of
    "F´") left out. The first word is capitalised as a sentence start: it counts only when
    another word is a name too ("Harold Winston's ..."), never alone ("Describe the pump")."""
    every = WORD.findall(question)
    words = [w for w in every if len(w) > 1 and any(c.isupper() for c in w)]
    if words[:1] == every[:1] and len(words) == 1:
        return []
    return words


def _terms_of(words: list[str]) -> frozenset[str]:
    return frozenset().union(*(terms(w) for w in words))


def names(question: str) -> frozenset[str]:
    """Content terms of the names the question asks about (see `_name_words`)."""
    return _terms_of(_name_words(question))


def stated(bundle: AnswerBundle, question: str, transposed_min_letters: int) -> bool:
    """Whether the question names nothing, or an evidence text (its document title or heading
    path included) states one of its names: the same term, the same beginning of at least
    `_NAME_PREFIX` letters, the same letters with two neighbours swapped (words of at least
    `transposed_min_letters` letters, no digit), or an acronym's spelled-out words."""
    words = _name_words(question)
    asked = _terms_of(words)
    if not asked:
        return True
    texts = evidence_texts(bundle)
    said = frozenset().union(*(terms(t) for t in texts))
    if any(says(a, said, transposed_min_letters) for a in sorted(asked)):
        return True
    acronyms = [w for w in words if _ACRONYM.match(w)]
    if not acronyms:
        return False
    initials = [
        "".join(w[0] for w in run.split() if w[0].isupper())
        for t in texts
        for run in _CAPITALISED_RUN.findall(t)
    ]
    return any(a in i for a in acronyms for i in initials)


def evidence_texts(bundle: AnswerBundle) -> list[str]:
    """Each evidence's text with its document title and heading path: where a name counts as
    stated (`stated`, `compared.compared_stated`)."""
    return [
        " ".join(
            [e.sanitized_text, *([e.source.document, *e.source.heading_path] if e.source else [])]
        )
        for e in bundle.selected_evidence
    ]


def says(term: str, said: frozenset[str], transposed_min_letters: int) -> bool:
    """Whether the terms `said` state the name word `term`: the same term, a shared beginning
    of `_NAME_PREFIX` letters, or two neighbouring letters swapped (`_transposed`)."""
    return term in said or any(
        (min(len(term), len(t)) >= _NAME_PREFIX and (term.startswith(t) or t.startswith(term)))
        or _transposed(term, t, transposed_min_letters)
        for t in sorted(said)
    )
