"""Polarity: does a sentence flip what its cited evidence says (a negation the evidence lacks,
a negated evidence span restated plainly, an antonym whose partner the evidence has)?

Step 1 of the support check (`validate.support`): a flip scores the sentence 0.0 there.
"""

from __future__ import annotations

import re
from functools import lru_cache

from citebound.validate.checks import ALL_WORDS
from citebound.validate.evidence import NEGATIONS, EvidenceIndex, fold, lemma, lemmas

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
    # A load or amount per item against the whole ("Each of the four bolts carries 40 kN" over
    # "The four bolts carry 40 kN in total"; r5-v5).
    ("each", "total"),
)
# Modal strength: an obligation against a permission ("must restart" over "may restart").
# A sentence's modal counts only when the best window has a modal of the other kind and none of
# its own: "must be tightened" over an imperative "Tighten ..." is how a reply phrases a step
# (r5-v5; `should` advises and sits in neither).
_OBLIGATION = frozenset({"must", "shall"})
_PERMISSION = frozenset({"may", "might", "can", "could"})
_MODALS = _OBLIGATION | _PERMISSION
_ANTONYMS: dict[str, str] = {}
for _a, _b in _ANTONYM_PAIRS:
    _ANTONYMS[lemma(_a)] = lemma(_b)
    _ANTONYMS[lemma(_b)] = lemma(_a)
# A leading "No," / "Yes." answers a yes/no question; it does not negate the evidence. The
# mark after it is what makes it an answer: "No visible leakage is acceptable" is a negation.
INTERJECTION = re.compile(r"^\W*(?:no|yes)\s*(?:[,.;:!]|\s-|$)[\s,.;:!-]*", re.IGNORECASE)


@lru_cache(maxsize=4096)
def all_lemmas(text: str) -> frozenset[str]:
    """Every lemma of `text`, stopwords kept (for antonyms and negations)."""
    return frozenset(map(lemma, ALL_WORDS.findall(fold(text))))


# "No. 1", "no. 3": the abbreviation of number, not a negation.
_NUMBER_ABBREVIATION = re.compile(r"\bno\.\s*(?=\d)")


def _polarity_text(text: str) -> str:
    return _NUMBER_ABBREVIATION.sub("# ", fold(text))


@lru_cache(maxsize=16_384)
def _negated(text: str) -> bool:
    return _NEGATION_RE.search(_polarity_text(text)) is not None


# Words that open a new clause ("Do not use a pressure washer on the cooler fins, because the
# fins bend easily" negates only its first clause); `wording` adds the coordinators a reply
# joins its own clauses with.
CLAUSE_WORDS = ("because", "since", "so", "which", "while", "but", "although", "unless")


def clause_break(words: tuple[str, ...], comma: bool) -> re.Pattern[str]:
    """Where clauses meet: brackets, `;`, `:`, `words`, and with `comma` also `,`."""
    marks = r"[,;:()]" if comma else r"[;:()]"
    return re.compile(marks + r"|\b(?:" + "|".join(words) + r")\b", re.IGNORECASE)


_CLAUSE_BREAK = clause_break(CLAUSE_WORDS, comma=True)
# The reach of a negation: its clause, a list after it kept whole ("It has no data types,
# commands, events, nor algorithms"), so without the bare comma (r5-v5: "It has no vent valve,
# but the casing carries a pressure gauge" negates no gauge).
_SCOPE_BREAK = clause_break(CLAUSE_WORDS, comma=False)


def _negated_parts(span: str, pattern: re.Pattern[str]) -> frozenset[str]:
    parts = pattern.split(_polarity_text(span))
    return frozenset(w for part in parts if _NEGATION_RE.search(part) for w in lemmas(part))


@lru_cache(maxsize=4096)
def _negated_clause(span: str) -> frozenset[str]:
    """Content lemmas of the clauses of `span` that hold a negation (commas split)."""
    return _negated_parts(span, _CLAUSE_BREAK)


@lru_cache(maxsize=4096)
def _negated_scope(span: str) -> frozenset[str]:
    """Content lemmas within the reach of the negations of `span` (`_SCOPE_BREAK`)."""
    return _negated_parts(span, _SCOPE_BREAK)


def _scope_negated(sentence: str, index: EvidenceIndex, start: int, size: int) -> bool:
    """The words after the sentence's negation (its scope: "has a single port and *no
    commands or events*") are all in one negated evidence span of the best window ("It has no
    data types, commands, events, ..."): a sentence merging a plain span with a negated one
    keeps the negation where the evidence has it."""
    text = _polarity_text(sentence)
    m = _NEGATION_RE.search(text)
    if m is None:
        return False
    scope = frozenset(lemmas(_SCOPE_BREAK.split(text[m.end() :], maxsplit=1)[0])) & index.words
    spans = [_negated_scope(index.spans[i]) for i in index.negated if start <= i < start + size]
    return bool(scope) and any(scope <= span for span in spans)


def _modal_flip(sentence: frozenset[str], window: frozenset[str]) -> str:
    for own, other in ((_OBLIGATION, _PERMISSION), (_PERMISSION, _OBLIGATION)):
        theirs = sorted(window & other)
        if sentence & own and theirs and not window & own:
            return f"modal: evidence says {theirs[0]!r}"
    return ""


def polarity_flip(
    sentence: str,
    words: frozenset[str],
    index: EvidenceIndex,
    window: tuple[int, int],
    cover: float,
    known: frozenset[str],
    sentence_lemmas: frozenset[str],
) -> str:
    """Why the sentence flips the polarity of its evidence, or "" when it does not.

    `window`: (first span, size) of the best window. `known`: every lemma of the question (an
    antonym the user asked about, "impeller loosening", is not a flip); not the source lines',
    whose headings often name both poles ("Opening and closing the valves", r5-v5).
    `sentence_lemmas`: every lemma of the sentence (`all_lemmas`), tokenised once by the caller.
    Quotations never reach this check (`is_quotation`)."""
    start, size = window
    plain = INTERJECTION.sub("", sentence)
    if _negated(plain):
        # The negation must come from an evidence span about the same thing: one whose negated
        # clauses share at least half of the supported lemmas of the sentence's negated
        # clauses (and at least one), or one of the best window holding every supported word
        # of the negation's scope. Clause against clause (r5-v5): "no pressure gauge" is not
        # "no vent valve, but the casing carries a pressure gauge".
        claim = _negated_scope(plain)
        need = max(1, (len(claim & index.words) + 1) // 2)
        same_thing = any(len(claim & _negated_scope(index.spans[i])) >= need for i in index.negated)
        if not (same_thing or _scope_negated(plain, index, start, size)):
            return "negation absent from the cited evidence"
    else:
        # A plain sentence repeating a negated evidence span (`must not be started` ->
        # `must be started`), both ways: the sentence is that span without its negation, not
        # a longer sentence that happens to contain a short negated clause's words.
        for i in index.negated:
            for part in (index.span_words[i], _negated_clause(index.spans[i])):
                shared = len(words & part)
                if part and words and min(shared / len(part), shared / len(words)) >= cover:
                    return "the evidence negates what the sentence states"
    window_all: frozenset[str] | None = None  # the best window's lemmas, built once if needed
    if not sentence_lemmas.isdisjoint(_MODALS):
        window_all = all_lemmas(index.window_text(start, size))
        modal = _modal_flip(sentence_lemmas, window_all)
        if modal:
            return modal
    swapped = sorted((w, _ANTONYMS[w]) for w in sentence_lemmas if w in _ANTONYMS)
    swapped = [(w, other) for w, other in swapped if w not in index.all_words and w not in known]
    if swapped:
        if window_all is None:
            window_all = all_lemmas(index.window_text(start, size))
        for _, other in swapped:
            if other in window_all:
                return f"antonym: evidence says {other!r}"
    return ""
