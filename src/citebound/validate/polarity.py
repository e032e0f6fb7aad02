"""Polarity: does a sentence flip what its cited evidence says (a negation the evidence lacks,
a negated evidence span restated plainly, an antonym or negative-prefix form whose partner the
evidence has, a modal of the other strength; r5-v6: a count per item the evidence gives as a
total, a comparison the evidence does not make, two numbered steps in the other order)?

Step 1 of the support check (`validate.support`): a flip scores the sentence 0.0 there.
"""

from __future__ import annotations

import re
from functools import lru_cache

from citebound.text.lexicon import (
    ALL_WORDS,
    DIGITS_OF,
    NEGATIONS,
    OBLIGATION_MODALS,
    PERMISSION_MODALS,
    UNITS,
    number_words,
)
from citebound.validate.evidence import EvidenceIndex, fold, lemma, lemmas
from citebound.validate.order import order_flip

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
    # "The four bolts carry 40 kN in total"; r5-v5), with every word that makes it a whole
    # (r5-v6: "together", "combined", "altogether").
    ("each", "total"),
    ("each", "together"),
    ("each", "combined"),
    ("each", "altogether"),
    ("every", "total"),
    ("per", "total"),
    # r5-v6, from a red-team pass over the sample corpus and F' docs: bounds, directions of
    # change and of data, and component kinds.
    ("least", "most"),
    ("raise", "lower"),
    ("increase", "reduce"),
    ("rise", "fall"),
    ("multiply", "divide"),
    ("input", "output"),
    ("send", "receive"),
    ("read", "write"),
    ("active", "passive"),
    ("internal", "external"),
    ("inner", "outer"),
)
# Negative prefixes: a word and its prefixed form are antonyms ("synchronous" /
# "asynchronous", "correct" / "incorrect", "connect" / "disconnect"; r5-v6), when the rest is
# long enough not to be a collision (prefix -> shortest rest; set by hand from the collisions
# of each prefix: "apart" / "part", "install" / "stall", "improve" / "prove", "discover" /
# "cover", "disclose" / "close" all have a rest of 5 letters or fewer). Both words must be in
# the evidence or the sentence as words of their own, and the sentence's absent from the
# evidence.
_NEGATIVE_PREFIXES = {"un": 4, "non": 4, "dis": 6, "in": 6, "im": 6, "a": 6}
# Modal strength: an obligation against a permission ("must restart" over "may restart").
# A sentence's modal counts only when the best window has a modal of the other kind and none of
# its own: "must be tightened" over an imperative "Tighten ..." is how a reply phrases a step
# (r5-v5; `should` advises and sits in neither).
_MODALS = OBLIGATION_MODALS | PERMISSION_MODALS
# A modal is followed by a bare verb ("can be stored", "may restart", "can't"); the same word
# is a noun where an article or preposition comes before it ("a sealed can", "in May") or
# where the next word is no verb: the end, a preposition, a conjunction or a finite verb ("the
# oil can is refilled", "the oil can with SAE 30 oil"; r5-v6: "a sealed can" read as "may").
_BEFORE_NOUN_TEXT = """a an the this that these those its his her their our your my each every one
    in on of at by for from with into since until during"""
_BEFORE_NOUN = frozenset(_BEFORE_NOUN_TEXT.split())
# ("have" and "be" are bare verbs a modal takes: "must have a clearance", "may be stored".)
_AFTER_NOUN_TEXT = """of with for in on at to from by into onto and or but nor is are was were
    has had must shall should will would may might can could does did"""
_AFTER_NOUN = frozenset(_AFTER_NOUN_TEXT.split())
# A modal ending its sentence after a subject pronoun is the elliptical verb of a reply ("Yes,
# they can."), not the noun that ends "a sealed can.".
_SUBJECT_PRONOUNS = frozenset(["i", "you", "he", "she", "it", "we", "they"])


@lru_cache(maxsize=4096)
def modals(text: str) -> frozenset[str]:
    """The modal verbs of `text` (`_MODALS`), nouns spelled alike aside (`_BEFORE_NOUN`,
    `_AFTER_NOUN`)."""
    words = ALL_WORDS.findall(fold(text))
    return frozenset(
        w
        for i, w in enumerate(words)
        if w in _MODALS
        and (
            (i + 1 < len(words) and words[i + 1] not in _AFTER_NOUN)
            or (i + 1 == len(words) and i > 0 and words[i - 1] in _SUBJECT_PRONOUNS)
        )
        and (i == 0 or words[i - 1] not in _BEFORE_NOUN)
    )


# Each word with all its partners ("clockwise": "counterclockwise" and "anticlockwise").
_ANTONYMS: dict[str, frozenset[str]] = {}
for _a, _b in _ANTONYM_PAIRS:
    _ANTONYMS[lemma(_a)] = _ANTONYMS.get(lemma(_a), frozenset()) | {lemma(_b)}
    _ANTONYMS[lemma(_b)] = _ANTONYMS.get(lemma(_b), frozenset()) | {lemma(_a)}
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


def clause_break(words: tuple[str, ...], comma: bool, colon: bool = True) -> re.Pattern[str]:
    """Where clauses meet: brackets, `;`, `words`, with `comma` also `,`, with `colon` also
    `:`."""
    marks = "[" + ("," if comma else "") + ";" + (":" if colon else "") + "()]"
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


def _prefix_antonym(
    words: frozenset[str],
    index: EvidenceIndex,
    window_all: frozenset[str] | None,
    start: int,
    size: int,
) -> str:
    """The best window's word that is a sentence word with a negative prefix added or taken
    away ("asynchronous" for "synchronous"), the sentence word absent from the evidence."""
    candidates: list[tuple[str, str]] = []
    for w in sorted(words - index.words):  # content lemmas: "unable", "asynchronous"
        for prefix, least in _NEGATIVE_PREFIXES.items():
            if w.startswith(prefix) and len(w) - len(prefix) >= least:
                candidates.append((w, w[len(prefix) :]))
            if len(w) >= least:
                candidates.append((w, prefix + w))
    candidates = [(w, other) for w, other in candidates if other in index.words]
    if not candidates:
        return ""
    window = window_all if window_all is not None else all_lemmas(index.window_text(start, size))
    return next((other for _, other in candidates if other in window), "")


# A comparison of two things ("the alarm is set higher than the trip"), not a bound ("more
# than 60 seconds", a number after "than") nor "rather than" / "other than": when the best
# window compares nothing (`_COMPARING`), the reply derived it (r5-v6; HaluEval fit half: 3
# of 500 right summaries and 5 hallucinated ones say "than" over an article without it).
# What a window that compares says instead of "than" ("1.0 bar above the seal chamber
# pressure" is "1.0 bar higher than" it).
_COMPARING_TEXT = """than above below over under exceed beyond more less fewer higher lower
    greater smaller larger bigger longer shorter faster slower compared versus"""
_COMPARING = frozenset(map(lemma, _COMPARING_TEXT.split()))
_COMPARISON = re.compile(
    r"(?<!rather )(?<!other )\bthan\s+(?!\d|(?:"
    + "|".join(number_words(1, 10))
    + r"|a dozen|a hundred|a thousand)\b)"
)


# Words that order two steps (`validate.order`).
_ORDER_WORDS = frozenset(map(lemma, ("before", "after", "prior")))


# Distributive quantifiers: "Each pump has four impellers" gives every pump four; over "The
# plant has two pumps and four impellers" it turns a total into a count per item (r5-v6). The
# evidence gives a count per item when its best window has one of these or a universal one
# ("All pumps have four impellers", "both").
# (As lemmas: they are compared with the lemmas of the sentence and the window.)
_DISTRIBUTIVE = frozenset(map(lemma, ("each", "every", "per", "apiece")))
_UNIVERSAL = frozenset(map(lemma, ("all", "both", "respectively", "individually")))
# A count: a number, then the counted thing ("four impellers", "12 bolts"); not a measure
# ("40 Nm": what each bolt is tightened to is per item by nature), not the size of the set
# the quantifier ranges over ("each of the four bolts"), and not the digits ending a code
# ("filter CX9-OF-150 is").
_COUNT = re.compile(
    r"(?<![\w.-])(?:\d+|" + "|".join(number_words(2, 12)) + r"|dozen)"
    r"\s+([a-z]+)"
    r"(?:\s+([a-z]+))?"
)
_SET_SIZE = re.compile(r"\b(?:of|the|these|those|its|their)\s+$")
# A distributive quantifier and the word it ranges over ("each pump", "every 500 hours").
_QUANTIFIER = re.compile(r"\b(?:each|every|per|apiece)\b(?:\s+(?:of\s+the\s+)?([a-z]+))?")


@lru_cache(maxsize=4096)
def item_counts(sentence: str) -> frozenset[str]:
    """The counts (keyed by digits, "four" -> "4") of `sentence` when it has a distributive
    quantifier whose item is not a unit of time or measure ("Each pump has four impellers",
    "12 bolts for each flange"; not "each year 40 pumps", "every 2000 operating hours", "each
    of the four bolts", "each bolt to 40 Nm"); empty otherwise."""
    text = fold(sentence)
    for q in _QUANTIFIER.finditer(text):
        if (q.group(1) or "") in UNITS:
            continue  # "every 500 hours", "per day": a rate, not a count per item
        return frozenset(
            DIGITS_OF.get(m.group(0).split()[0], m.group(0).split()[0])
            for m in _COUNT.finditer(text)
            if not (UNITS & {m.group(1), m.group(2)} or _SET_SIZE.search(text, 0, m.start()))
        )
    return frozenset()


def _count_per_item(counts: frozenset[str], index: EvidenceIndex, start: int, size: int) -> bool:
    """One evidence span of the window gives one of `counts` per item: it has the count and a
    distributive or universal word. A quantifier elsewhere in the window quantifies another
    claim ("Each pump has one impeller. The plant has two pumps and four bearings." gives no
    pump four bearings; final review of r5-v6)."""
    for span in index.spans[start : start + size]:
        if all_lemmas(span).isdisjoint(_DISTRIBUTIVE | _UNIVERSAL):
            continue
        if not counts.isdisjoint(DIGITS_OF.get(w, w) for w in ALL_WORDS.findall(fold(span))):
            return True
    return False


def negation_found(plain: str, index: EvidenceIndex, start: int, size: int) -> bool:
    """The negation of `plain` (a negated sentence, a leading "No," aside) comes from an
    evidence span about the same thing, clause against clause (r5-v5: "no pressure gauge" is
    not "no vent valve, but the casing carries a pressure gauge"). One of:

    - a negated evidence span whose negated clauses share at least half of the supported
      lemmas of the sentence's negated clauses (and at least one);
    - a negated evidence span whose negated clause the sentence restates (at least half of
      its lemmas) while the span holds at least half of the sentence's negated clause: a
      long sentence restating a short negated clause of its evidence sentence ("British
      police say they didn't respond to a burglar alarm in jewelry district" over "British
      police ... said Friday they knew a burglar alarm went off but didn't respond", whose
      negated clause is "didn't respond"; r5-v6, from right summaries of the HaluEval fit
      half);
    - a negated span of the best window holding every supported word of the negation's
      scope."""
    claim = _negated_scope(plain)
    supported = claim & index.words
    need = max(1, (len(supported) + 1) // 2)
    for i in index.negated:
        negated = _negated_scope(index.spans[i])
        shared = len(claim & negated)
        if shared >= need:
            return True
        restated = bool(negated) and shared >= max(1, (len(negated) + 1) // 2)
        if restated and len(supported & index.span_words[i]) >= need:
            return True
    return _scope_negated(plain, index, start, size)


def _modal_flip(sentence: frozenset[str], window: frozenset[str]) -> str:
    for own, other in (
        (OBLIGATION_MODALS, PERMISSION_MODALS),
        (PERMISSION_MODALS, OBLIGATION_MODALS),
    ):
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
        if not negation_found(plain, index, start, size):
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
        modal = _modal_flip(modals(sentence), modals(index.window_text(start, size)))
        if modal:
            return modal
    swapped = sorted(
        (w, other)
        for w in sentence_lemmas
        if w in _ANTONYMS and w not in index.all_words and w not in known
        for other in _ANTONYMS[w]
    )
    if swapped:
        if window_all is None:
            window_all = all_lemmas(index.window_text(start, size))
        for _, other in swapped:
            if other in window_all:
                return f"antonym: evidence says {other!r}"
    prefixed = _prefix_antonym(words - known, index, window_all, start, size)
    if prefixed:
        return f"antonym: evidence says {prefixed!r}"
    if not sentence_lemmas.isdisjoint(_DISTRIBUTIVE):
        counts = item_counts(sentence)
        if counts and not _count_per_item(counts, index, start, size):
            return "quantifier: the evidence gives no count per item"
    if "than" in sentence_lemmas and _COMPARISON.search(fold(sentence)):
        if window_all is None:
            window_all = all_lemmas(index.window_text(start, size))
        if window_all.isdisjoint(_COMPARING):
            return "comparison: the evidence compares nothing here"
    if not sentence_lemmas.isdisjoint(_ORDER_WORDS):
        return order_flip(sentence, index)
    return ""
