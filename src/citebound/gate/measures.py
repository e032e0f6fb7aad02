"""What the gate measures of a question over the ranked rows (docs/gate.md), besides the
similarities: one `GateMeasures`, counts not ratios.

`coverage` is the share of a question's key terms (`text.terms.key_terms`) that a text holds:
the retrieval gate's second signal next to the calibrated similarity. `names` are the key terms
the question writes as a name or a number ("Maastricht", "CJEU", "V8", "1974"): the gate's
found pass needs each of them in a ranked row, and every key term of a question whose case
cannot mark a name (`unmarked`). `weighted_rarity` weighs each key term by its idf in the
collection: the gate's rare pass needs the best row to hold the question's rare words.
`top_coverage` measures all of them at once, for the retrieval gate and assembly alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

from citebound.contracts.retrieval import GateMeasures

# THOUSANDS: "10,000" and "10000" are one number to the names check, as to the validator.
from citebound.text.lexicon import THOUSANDS, WORD
from citebound.text.terms import framing_terms, key_terms, terms

# CamelCase: a lower-case letter or digit before a capital ("CruiseRatio", "Rate2Group"), a
# capital run before a capitalised word ("HTTPServer").
_CAMEL_JOINT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def camel_parts(text: str) -> dict[str, frozenset[str]]:
    """Each CamelCase word of `text` as its term (`terms`) and the terms of its words:
    `ActiveRateGroup` -> `activerategroup`: {activ, rat, group}. Only the gate's key-term
    measures read a CamelCase word as its words (`held`): the answerer keeps `DpCatalog` one
    name, as "PostgreSQL" is one name that no "SQL" states.

    >>> sorted(camel_parts("The MinimumCruiseRatio of HTTPServer, not NASA")["minimumcruiseratio"])
    ['cruis', 'minimum', 'ratio']
    """
    out: dict[str, frozenset[str]] = {}
    for word in WORD.findall(text):
        split = _CAMEL_JOINT.sub(" ", word)
        if split != word:
            whole = terms(word)
            parts = terms(split)
            for t in whole:
                out[t] = parts
    return out


def said_terms(text: str) -> frozenset[str]:
    """`terms` of a text the gate measures, with the words of its CamelCase words too: a row
    saying `MinimumCruiseRatio` holds "minimum cruise ratio"."""
    parts = camel_parts(text)
    return terms(text).union(*parts.values()) if parts else terms(text)


def held(term: str, said: frozenset[str], parts: dict[str, frozenset[str]]) -> bool:
    """Whether `said` holds a question's `term`: itself, or every word of it when the question
    writes it in CamelCase (`parts`, from `camel_parts(question)`)."""
    return term in said or (term in parts and parts[term] <= said)


def held_terms(question: str, text_terms: frozenset[str]) -> tuple[int, int]:
    """How many of the question's key terms `text_terms` holds, and out of how many: a framing
    term counts on both sides only when held (`framing_terms`).

    >>> held_terms("What type of reduction is most frequently used?", terms("A type of reduction."))
    (2, 4)
    """
    asked = key_terms(question)
    framed = framing_terms(question) & text_terms
    parts = camel_parts(question)
    return sum(held(t, text_terms, parts) for t in asked) + len(framed), len(asked) + len(framed)


def coverage(question: str, text: str) -> float | None:
    """Share of the question's key terms found in `text`; None when it has none.

    >>> coverage("Who ruled Normandy?", "Rollo ruled the region of Normandy.")
    1.0
    >>> coverage("What is it?", "anything") is None
    True
    """
    if not key_terms(question):
        return None
    count, of = held_terms(question, said_terms(text))
    return count / of


def names(question: str) -> frozenset[str]:
    """Key terms of the words the question capitalises (after its first word) or writes with a
    digit: what it is specifically about. A question in title case or capitals marks only its
    numbers.

    >>> sorted(names("When was the Maastricht treaty signed in 1992?"))
    ['1992', 'maastricht']
    >>> names("What Is The Treaty?")
    frozenset()
    >>> sorted(names("Were 10,000 horsepower engines built?"))
    ['10000']
    """
    words = _later_words(question)
    capital = [] if _unmarked(question, words) else [w for w in words if w[0].isupper()]
    marked = {w for w in words if any(c.isdigit() for c in w)}.union(capital)
    return frozenset(t for w in marked for t in terms(w) if len(t) > 1 or t.isdigit())


def unmarked(question: str) -> bool:
    """The question's case cannot mark a name: most words after the first are capitalised
    ("What Is The Treaty?", "WHAT IS IT?") or none of its letters is ("what is the treaty?").

    >>> [unmarked(q) for q in ("What Is The Treaty?", "what is it?", "What is the Treaty?")]
    [True, True, False]
    """
    return _unmarked(question, _later_words(question))


def _later_words(question: str) -> list[str]:
    """The question's words after its first ("10,000" one number)."""
    return WORD.findall(THOUSANDS.sub("", question))[1:]


def _unmarked(question: str, words: list[str]) -> bool:
    """`unmarked`, on the question's `_later_words` (tokenised once for `names` too)."""
    capital = [w for w in words if w[0].isupper()]
    return 2 * len(capital) > len(words) or not any(ch.isupper() for ch in question)


class _Row(Protocol):
    @property
    def similarity(self) -> float: ...
    @property
    def rank(self) -> int: ...
    @property
    def chunk_id(self) -> str: ...
    @property
    def chunk_text(self) -> str: ...
    @property
    def source(self) -> _Source | None: ...


class _Source(Protocol):
    @property
    def document(self) -> str: ...
    @property
    def heading_path(self) -> tuple[str, ...]: ...


def row_text(row: _Row) -> str:
    """A row as a reader meets it: the document name and the headings above the chunk, then
    the chunk. A step of a procedure ("3. Remove the four gland nuts") does not repeat the
    procedure's subject; its headings do ("HP-220 Mechanical Seal Replacement Procedure")."""
    src = row.source
    if src is None:
        return row.chunk_text
    return "\n".join((src.document, *src.heading_path, row.chunk_text))


def top_coverage(
    question: str | None, rows: Sequence[_Row], rarity: Rarity | None = None
) -> GateMeasures | None:
    """What the retrieval gate and assembly's top-similarity check both weigh: how many key
    terms and framing terms the question has, how many of each the highest-similarity row
    holds (the first in rank order among equals; its `row_text`, so headings count), and how
    many of its `names` no row holds (a name the collection does not use: "Who conquered the
    Canary Islands?" against articles that never say "Canary"). With `rarity` (a question
    word's idf in the collection, `LexicalIndex.idf`), also the share of the key terms' rarity
    the best row holds (`weighted_rarity`). None without a question, rows or key terms."""
    if not question or not rows:
        return None
    asked = key_terms(question)
    if not asked:
        return None
    best = min(rows, key=lambda r: (-r.similarity, r.rank, r.chunk_id))
    # A question whose case cannot mark a name (title case, capitals, all lower case) does not
    # say which of its words is one: every key term counts as one, so "Which Engineer Founded
    # The Pump Company Grundfos?" passes only as its normal-case form would.
    marked = names(question) | (asked if unmarked(question) else frozenset())
    parts = camel_parts(question)
    stated = frozenset().union(*(said_terms(THOUSANDS.sub("", row_text(r))) for r in rows))
    marked = frozenset(t for t in marked if not held(t, stated, parts))
    framed = framing_terms(question)
    said = said_terms(row_text(best))
    return GateMeasures(
        key_terms=len(asked),
        key_terms_held=sum(held(t, said, parts) for t in asked),
        framing_terms=len(framed),
        framing_held=len(framed & said),
        names_unfound=len(marked),
        rarity_held=None if rarity is None else weighted_rarity(question, said, rarity),
    )


Rarity = Callable[[str], float]
RARITY_DECIMALS = 4  # a share compared with a threshold: the same on every CPU


def weighted_rarity(question: str, said: frozenset[str], rarity: Rarity) -> float | None:
    """Share of the question's key terms, each weighted by how rare it is in the collection
    (`rarity` of the question words it comes from, the rarest one), that `said` holds: a row
    holding "Maastricht" holds more of "When was the Maastricht treaty signed?" than one
    holding "signed". None when no key term is rarer than nothing (an empty collection).

    >>> idf = {"maastricht": 3.0, "treaty": 1.0, "signed": 1.0}
    >>> rarity = lambda word: idf.get(word.lower(), 0.1)
    >>> weighted_rarity("When was the Maastricht treaty signed?", terms("treaty signed"), rarity)
    0.4
    """
    weight: dict[str, float] = {}
    asked = key_terms(question)
    for word in WORD.findall(question):
        for t in key_terms(word) & asked:
            weight[t] = max(weight.get(t, 0.0), rarity(word))
    total = sum(weight.values())
    if total <= 0:
        return None
    held = sum(w for t, w in weight.items() if t in said)
    return round(held / total, RARITY_DECIMALS)
