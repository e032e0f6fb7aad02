"""Order: does a sentence put two numbered steps of its evidence the other way round?

"Tighten the magnetic drain plug to 60 Nm before inspecting the magnet" over "2. Inspect the
magnet for metal particles. ... 5. Tighten the magnetic drain plug to 60 Nm." has every word in
the evidence, and "before" is a connective a reply adds freely; what makes it wrong is that the
procedure numbers its steps the other way (r5-v6, from a red-team pass over the sample corpus).
Only numbered steps order a text: prose (a news story, a summary's source) tells events in any
order, so a sentence relating two unnumbered sentences is never judged here.

Part of the polarity check (`validate.polarity`): a reversed order scores the sentence as a
flip does. Pure and deterministic.
"""

from __future__ import annotations

import re
from functools import lru_cache

from citebound.validate.evidence import EvidenceIndex, fold, lemmas

# "before" / "after" joining two clauses, or opening the sentence ("Before X, Y").
_CONNECTIVE = re.compile(r"\b(before|after|prior to)\b")
_OPENING = re.compile(r"^\W*(before|after|prior to)\b([^,;]*)[,;](.*)$")
# A step marker: "3." or "3)" opening a line (the evidence cut leaves it at the end of the
# span before, or as a span of its own).
_MARKER_AT_END = re.compile(r"(?:^|\n)\s*(\d{1,3})[.)]\s*$")
_MARKER_AT_START = re.compile(r"^\s*(\d{1,3})[.)]\s")
# A clause names a step when the step's sentence has two of its words (structural, as
# `wording._RELATED`).
_NAMED = 2


@lru_cache(maxsize=1024)
def _steps(spans: tuple[str, ...]) -> tuple[int | None, ...]:
    """The step number of each evidence span, None outside a numbered list."""
    out: list[int | None] = []
    for i, span in enumerate(spans):
        m = _MARKER_AT_START.match(span)
        if m is None and i > 0:
            m = _MARKER_AT_END.search(spans[i - 1])
        out.append(int(m.group(1)) if m else None)
    return tuple(out)


def _step(clause: str, index: EvidenceIndex, steps: tuple[int | None, ...]) -> int | None:
    """The step the clause states: the one numbered span holding most of its words (at least
    `_NAMED`, and strictly more than any other span), else None."""
    words = frozenset(lemmas(clause))
    counts = [len(words & span) for span in index.span_words]
    best = max(counts, default=0)
    if best < _NAMED or counts.count(best) > 1:
        return None
    return steps[counts.index(best)]


def order_flip(sentence: str, index: EvidenceIndex) -> str:
    """Why the sentence reverses two numbered steps of its evidence, or ""."""
    text = fold(sentence)
    opening = _OPENING.match(text)
    if opening is not None:  # "Before B, A": A happens before B
        word, later, first = opening.group(1), opening.group(2), opening.group(3)
    else:
        m = _CONNECTIVE.search(text)
        if m is None:
            return ""
        word, first, later = m.group(1), text[: m.start()], text[m.end() :]
    steps = _steps(index.spans)
    if not any(s is not None for s in steps):
        return ""  # most evidence: no numbered steps
    a, b = _step(first, index, steps), _step(later, index, steps)
    if a is None or b is None or a == b:
        return ""
    if (word == "after") == (a < b):
        return f"order: the evidence has step {min(a, b)} before step {max(a, b)}"
    return ""
