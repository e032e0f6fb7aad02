"""What a question asks of its item, and whether a sentence says it.

"Who designed the cooling tower fan?" names an item the documents describe (the fan) and asks
one thing of it: who *designed* it, a person. A sentence about the fan that names neither a
designer nor the act of designing ("The fan is driven by a 30 kW motor ...") shares the item's
words and still does not answer: quoting it answers a question nobody asked, the promise's
largest gap left (docs/answers.md#questions-the-answerer-refuses).

`scope` reads from the question's shape:

* the asked *relation*: the verb of "Who designed ...", "When was X installed?", "How much did
  X cost?", "Which company supplies X?", the verb of a relative clause ("the name of the
  engineer who designed X"), the noun of "What is the orbital period of X?", the counted noun
  of "How much RAM ...?";
* the expected *kind* of answer (`answer_type.expected`: person, place, name, date, number),
  and one more this module adds: a colour ("What colour is the panel?").

`AskedScope.admits` lets a sentence qualify when it holds the relation (stemmed, or a word one
of whose forms starts the other: "design" ~ "designer", "weigh" ~ "weight", "approve" ~
"approval") or carries a filler of the kind (a new name, a date, a number, a colour word); a
prose sentence also qualifies when the next sentence of its paragraph does (`admitted`). A
sentence with neither does not answer what is asked. The rule applies only to questions whose
kind is known and whose shape names a relation: for those a paraphrased relation is still
answered by the sentence holding the name / date / number asked for (SQuAD: "Who ruled Cyprus?"
by "... the despot Isaac Komnenos."), so requiring the relation alone would refuse them.

A person or a name is not said by a passive without "by" ("The bolts had been tightened to 30
Nm."), an instruction ("Tighten the bolts ...") or a heading holding the relation; "What is the
name of ...?" needs the name itself ("The operator stopped the pump." names no one). Fillers are
read more strictly than `answer_type.carries` reads them for ranking: a code ("GB-7", "CT-1"), a
unit ("Nm", "kW"), a code span ("`Fw::Buffer`") or a title line is nobody's name, and the digits
of a model name ("Snapdragon 801") count nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from citebound.text.lexicon import (
    HYPHENATED_WORD_ACUTE,
    MAGNITUDE_WORDS,
    MULTIPLIER_WORDS,
    UNITS,
    number_words,
)
from citebound.text.terms import terms

from .answer_type import AnswerType, carries, expected
from .candidates import Candidate
from .shape import BE, org_asked, participle, titled
from .shape import relation as relation_of

__all__ = ["AskedScope", "admitted", "fills", "related", "scope"]

# A colour is asked by "what colour / color"; a sentence answers with a colour word.
_COLOUR_ASKED = re.compile(
    r"\b(?:what|which)\s+colou?rs?\b|\b(?:what|which)\s+(?:is|was|are|were)\s+the\s+colou?rs?\s+of\b",
    re.IGNORECASE,
)
_COLOUR_TEXT = """red green blue yellow orange purple violet black white grey gray brown pink
    silver gold golden beige cyan magenta turquoise maroon navy crimson amber colour color"""
# Stemmed as sentences' terms are ("white" -> "whit", "coloured" -> "colour").
_COLOUR_TERMS = frozenset(t for w in _COLOUR_TEXT.split() for t in terms(w))
# "What is the name of ...", "Name the ..." ask for a name, not a role ("the operator").
_NAME_ASKED = re.compile(r"\bnames?\b", re.IGNORECASE)
# A passive: a form of "be" up to `_BE_GAP` words before the verb ("had been tightened", "is
# designed", "were carefully installed").
_BE_GAP = 2
# A word one of whose forms starts the other by at most this many letters is the same word
# for the relation ("install" ~ "installation", "design" ~ "designer"); shorter stems than
# `_MIN_ROOT` letters ("use", "set") match too much to be extended.
_MAX_SUFFIX = 5
_MIN_ROOT = 4
# The regular Latinate alternations between a verb and its noun ("maintain" / "maintenance",
# "decide" / "decision", "receive" / "reception", "permit" / "permission", "extend" /
# "extension", "solve" / "solution", "describe" / "description"), on stems; a root shorter than
# `_MIN_ALTERNATE` letters matches too much.
_ALTERNATIONS = (
    ("ain", "en"),
    ("eiv", "ept"),
    ("id", "is"),
    ("mit", "miss"),
    ("nd", "ns"),
    ("olv", "olut"),
    ("crib", "cript"),
)
_MIN_ALTERNATE = 5
# Digits right after a capitalised word name a model ("Snapdragon 801", "Windows 10"): they
# count nothing. Codes, units and code spans are nobody's name.
# So do digits right after a code in capitals ("ISO VG 220": an oil grade).
_MODEL_NUMBER = re.compile(r"(\b(?:[A-Z][A-Za-z]{2,}|[A-Z]{2,})\s)\d+\b")
_CODE_SPAN = re.compile(r"`[^`]*`")
# A label before the text ("3.1 Design and Requirements: Draft ...", "Oil grade: ISO VG 220")
# names the field, not a person: its capitals are left out (the value after it stays).
_LABEL = re.compile(r"^[^:;!?]{1,60}:\s")
_LETTERS = re.compile(r"[A-Za-z]+")
# A number with its unit ("30 kW", "500 hours"; not "in": "founded in 911") and a count in
# words ("six", "thousands"): neither is a year.
_UNIT_TEXT = "|".join(sorted(UNITS - {"in"}, key=len, reverse=True))
_MEASURE = re.compile(r"\d+(?:[.,]\d+)*\s?°?\s?(?:" + _UNIT_TEXT + r")\b", re.IGNORECASE)
_COUNT_WORD = re.compile(
    r"\b(?:" + "|".join((*number_words(2, 90), *MAGNITUDE_WORDS, *MULTIPLIER_WORDS)) + r")s?\b",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"[\w'’-]*\d[\w'’-]*")


def related(asked: frozenset[str], held: frozenset[str]) -> bool:
    """Whether `held` (a sentence's terms) holds one of the `asked` relation terms, or a form of
    one: equal stems, or one starts the other and is at most `_MAX_SUFFIX` letters shorter.

    >>> related(frozenset({"design"}), frozenset({"designer", "fan"}))
    True
    >>> related(frozenset({"weigh"}), frozenset({"weight"}))
    True
    """
    if asked & held:
        return True
    for a in asked:
        if len(a) < _MIN_ROOT:
            continue
        forms = (a, *_alternates(a))
        for h in held:
            if any(_starts(x, h) for x in forms) or any(_starts(a, f) for f in _alternates(h)):
                return True
    return False


def _starts(x: str, y: str) -> bool:
    """Whether one of two stems starts the other, at most `_MAX_SUFFIX` letters shorter."""
    short, long_ = (x, y) if len(x) <= len(y) else (y, x)
    near = len(long_) - len(short) <= _MAX_SUFFIX
    return near and len(short) >= _MIN_ROOT and long_.startswith(short)


@lru_cache(maxsize=16_384)  # a stem recurs in every sentence that holds it
def _alternates(stem: str) -> tuple[str, ...]:
    """The stem's Latinate noun root ("maintain" -> "mainten" of "maintenance", "decid" ->
    "decis", "receiv" -> "recept"), when one of English's regular alternations applies and the
    root is at least `_MIN_ALTERNATE` letters ("send" -> "sens" would match "sensor")."""
    out = [stem[: -len(end)] + to for end, to in _ALTERNATIONS if stem.endswith(end)]
    return tuple(f for f in out if len(f) >= _MIN_ALTERNATE)


@dataclass(frozen=True)
class AskedScope:
    """What a question asks of its item: the relation terms and the kind of answer."""

    relation: frozenset[str]  # stemmed terms; empty: the shape names no relation
    kind: AnswerType | str  # an `answer_type` kind, or "colour"
    named: bool = False  # the question asks for a name in so many words ("the name of ...")

    def admits(self, sentence: str, held: frozenset[str], question: str) -> bool:
        """Whether a sentence (its text, the terms it and its section hold: `held`) can answer:
        it holds the relation, or carries a filler of the kind asked. "What is the name of
        the operator who stopped the pump?" needs the name: "The operator stopped the pump
        manually." holds the relation and names no one."""
        if self.named:
            return fills(self.kind, sentence, question)
        if related(self.relation, held) and not self._unsaid_agent(sentence):
            return True
        return fills(self.kind, sentence, question)

    def _unsaid_agent(self, sentence: str) -> bool:
        """Whether `sentence` names no agent of the relation, when a person or a name is asked:
        a passive without "by" ("The bolts had been tightened to 30 Nm."), an instruction
        ("Tighten the bolts to 45 Nm."), or the relation only in the section's heading
        ("Design and Requirements"). "... approved by the area manager" and "The shift
        supervisor must sign ..." name one."""
        if self.kind not in ("person", "name"):
            return False
        words = [w.casefold() for w in HYPHENATED_WORD_ACUTE.findall(sentence) if not w.isdigit()]
        at = [i for i, w in enumerate(words) if related(self.relation, terms(w))]
        if at and "by" in words:
            return False
        # A passive's verb is a participle: "The utilities team is responsible for X" names one.
        return all(
            i == 0 or (BE & set(words[max(0, i - _BE_GAP) : i]) and participle(words[i : i + 1]))
            for i in at
        )


def admitted(wanted: AskedScope, c: Candidate, cands: Sequence[Candidate], question: str) -> bool:
    """Whether candidate `c` can answer: it says what is asked (`AskedScope.admits`), or it is
    prose and the sentence right after it in its paragraph says it ("Ethelred fled to Normandy
    in 1013." / "He was forced from his kingdom by Sweyn Forkbeard."): the answer goes on
    there, and the choice rules decide whether that sentence joins."""
    if c.parts and wanted.relation:
        # A row the splitter cuts, quoted whole, is a record of many cells: a date or number in
        # it may be any column's (ISS-RapidScat's launch date is no "orbital period of the
        # International Space Station"; blind F´ set 6, v02). It answers only when it or its
        # column names hold the relation asked ("Launch" for "When was X launched?").
        return related(wanted.relation, terms(c.text) | c.context | c.columns)
    if wanted.admits(c.text, terms(c.text) | c.context, question):
        return True
    if c.kind != "prose":
        return False  # a table row or list item stands alone ("...; Sep." / "21, 2014; ...")
    after = next(
        (x for x in cands if x.ev == c.ev and x.line == c.line and x.pos == c.pos + 1), None
    )
    return after is not None and wanted.admits(after.text, terms(after.text), question)


def fills(kind: AnswerType | str, sentence: str, question: str) -> bool:
    """Whether `sentence` carries an answer of `kind` the question does not hold, read
    strictly (see the module docstring)."""
    if kind == "colour":
        return bool(terms(sentence) & _COLOUR_TERMS)
    if kind in ("person", "place", "name"):
        return carries(kind, _plain_names(sentence), question)
    if kind == "number":
        return carries(kind, _MODEL_NUMBER.sub(r"\1model", sentence), question)
    if kind == "date":
        # A year too short for the date test ("began in 911") is still a number; a measure
        # ("30 kW", "500 hours") or a count in words ("six blades") says no when.
        years = _COUNT_WORD.sub(" ", _MEASURE.sub(" ", sentence))
        return carries("date", sentence, question) or carries("number", years, question)
    return False


def _plain_names(sentence: str) -> str:
    """`sentence` with what cannot be a name lower-cased away: a leading label, code spans,
    words holding digits (codes), and units ("Nm", "kW", "V"); a title ("CX-9 Compressor
    Quick Reference"), whose every word is capitalised, names nothing by its capitals."""
    if titled(sentence):
        return sentence.casefold()
    text = _CODE_SPAN.sub(" x ", _LABEL.sub("", sentence))
    text = _DIGITS.sub("x", text)
    return _LETTERS.sub(lambda m: "x" if m.group().casefold() in UNITS else m.group(), text)


@lru_cache(maxsize=4096)
def scope(question: str) -> AskedScope | None:
    """What `question` asks: None when its kind of answer is not known (the rule does not
    apply: an open "what" question is answered in too many words to require one).

    >>> s = scope("Who designed the cooling tower fan?")
    >>> sorted(s.relation), s.kind
    (['design'], 'person')
    >>> sorted(scope("What is the orbital period of the International Space Station?").relation)
    ['orbital', 'period']
    >>> scope("What does the ActiveRateGroup component do?") is None
    True
    """
    kind: AnswerType | str = "colour" if _COLOUR_ASKED.search(question) else expected(question)
    if kind == "none" and org_asked(question):
        kind = "name"
    if kind == "none":
        return None
    relation = relation_of(question)
    if not relation and kind != "colour":
        # "Who used the church to unify themselves?" names no relation a sentence must hold,
        # and its filler may be a word no test reads ("the dukes"): the rule does not apply.
        # "What colour is X?" asks the kind itself: a colour word or the word "colour".
        return None
    named = kind in ("person", "name") and _NAME_ASKED.search(question) is not None
    return AskedScope(relation=relation, kind=kind, named=named)
