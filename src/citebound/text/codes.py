"""Questions about a coded item: a model, part or document code ("HP-220", "GB7", "P-101B").

Maintenance and engineering documents describe many items of one kind side by side: pumps,
gearboxes, compressors, each a datasheet or a procedure of its own. A question that names one
by its code ("Which oil does the GB7 gearbox take?", "Which country manufactures the HP-220
pump?") is answered by a sentence about that item that says what is asked. Two near misses
read like answers and are not:

* a sentence from another item's document ("Use only CX9-OIL-46 ..." for the GB7): the words
  match, the item does not;
* a sentence about the item that says something else ("The HP-220 runs at 2950 rpm." for who
  manufactures it): the item matches, what is asked does not. It is how a question about an
  attribute the documents never state ends up answered.

`scope` reads the codes and what is asked of them; `CodeScope.admits` tells whether a sentence
(with the question terms of its section's title and headings) can answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from citebound.text.lexicon import QUESTION_STOPWORDS
from citebound.text.terms import key_terms, terms

__all__ = ["CodeScope", "forms", "scope", "section_codes"]

# A code starts with a letter and holds a digit ("HP-220", "GB7", "x86_64", "SVC-COMQUEUE-008");
# ordinals, decades and measures ("17th", "1990s", "4-cylinder", "700-megawatt") start with the
# digit and are no codes.
_TOKEN = re.compile(r"[A-Za-z0-9][\w-]*")
_CODE = re.compile(r"[A-Za-z][\w-]*\d[\w-]*")
_NOUN = re.compile(r"[a-z]+")
# Parts joined when folding a written code: "SVC-COMQUEUE-008" is three; longer runs are
# sentences of hyphenated words, not codes.
_MAX_PARTS = 4


def forms(text: str) -> frozenset[str]:
    """Every way `text` may write a code, folded: each hyphen- or underscore-separated run of
    parts joined ("GB-7" -> gb7; "GB7-GK-02" -> gb7, gb7gk, gb7gk02, gk02 ...), so "GB7" in a
    question finds "GB-7" in a title and "GB7-GK-02" in a parts list.

    >>> "gb7" in forms("the GB-7 gearbox") and "gb7" in forms("gasket GB7-GK-02")
    True
    >>> "gb7" in forms("the CX9 compressor")
    False
    """
    out: set[str] = set()
    for token in _TOKEN.findall(text.casefold()):
        parts = [part for part in re.split(r"[-_]", token) if part]
        for i in range(len(parts)):
            for j in range(i + 1, min(len(parts), i + _MAX_PARTS) + 1):
                out.add("".join(parts[i:j]))
    return frozenset(out)


@dataclass(frozen=True)
class CodeScope:
    """The codes a question names and what it asks of them."""

    codes: tuple[str, ...]  # each code folded ("HP-220": hp220)
    asked: frozenset[str]  # key terms besides the codes and the nouns they qualify

    def admits(self, sentence: str, section: frozenset[str], held: frozenset[str]) -> bool:
        """Whether a sentence (`sentence`, the question terms it and its section hold: `held`)
        in a section whose written codes are `section` (`forms` of its document title, heading
        path and equipment id, folded once per evidence) can answer: it or its section writes
        one of the codes, and it holds a term of what is asked (when the question asks more
        than what the item is)."""
        written = forms(sentence) | section
        named = any(code in written for code in self.codes)
        return named and (not self.asked or bool(self.asked & held))


def scope(question: str) -> CodeScope | None:
    """The question's codes and what it asks of them; None when it names no code.

    >>> s = scope("Which country typically manufactures the HP-220 pump?")
    >>> s.codes, sorted(s.asked)
    (('hp220',), ['manufactur'])
    >>> scope("In what part of the 19th century were steam turbines introduced?") is None
    True
    """
    tokens = _TOKEN.findall(question)
    codes: list[str] = []
    subject: set[str] = set()
    for i, token in enumerate(tokens):
        if _CODE.fullmatch(token) is None:
            continue
        codes.append(re.sub(r"[-_]", "", token.casefold()))
        subject |= terms(token)
        # "the HP-220 pump", "an aarch64 machine": the noun right after the code says what
        # kind of item it is, not what is asked of it.
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        if _NOUN.fullmatch(after) and after not in QUESTION_STOPWORDS:
            subject |= terms(after)
    if not codes:
        return None
    return CodeScope(codes=tuple(codes), asked=key_terms(question) - subject)


class _Section(Protocol):
    """Where a piece of evidence sits (`contracts.retrieval.SourceRef`); text/ is a word layer
    below the contracts, so it names only the fields it reads."""

    @property
    def document(self) -> str: ...
    @property
    def heading_path(self) -> Sequence[str]: ...


class _Evidence(Protocol):
    """What `section_codes` reads of a `contracts.assembly.SelectedEvidence`."""

    @property
    def equipment_id(self) -> str | None: ...
    @property
    def source(self) -> _Section | None: ...


def section_codes(evidence: Sequence[_Evidence]) -> list[frozenset[str]]:
    """The codes each evidence's section writes (`forms` of its equipment id, document title
    and heading path), folded once per evidence for `CodeScope.admits`."""
    out = []
    for e in evidence:
        section = [e.source.document, *e.source.heading_path] if e.source else []
        out.append(forms(" ".join([e.equipment_id or "", *section])))
    return out
