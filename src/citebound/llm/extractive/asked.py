"""What a question asks of its item, and whether a sentence says it.

"Who designed the cooling tower fan?" names an item the documents describe (the fan) and asks
one thing of it: who *designed* it, a person. A sentence about the fan that names neither a
designer nor the act of designing ("The fan is driven by a 30 kW motor ...") shares the item's
words and still does not answer: quoting it answers a question nobody asked, the promise's
largest gap left (docs/answers.md "Attributes no document states").

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

from citebound.text.terms import FRAMING, STOPWORDS, terms
from citebound.validate.swap import UNITS

from .answer_type import HEAD_NOUNS, AnswerType, carries, expected
from .candidates import Candidate

__all__ = ["AskedScope", "admitted", "fills", "related", "scope"]

# A colour is asked by "what colour / color"; a sentence answers with a colour word.
_COLOUR_ASKED = re.compile(r"\b(?:what|which)\s+colou?rs?\b", re.IGNORECASE)
_COLOUR_TEXT = """red green blue yellow orange purple violet black white grey gray brown pink
    silver gold golden beige cyan magenta turquoise maroon navy crimson amber colour color"""
# Stemmed as sentences' terms are ("white" -> "whit", "coloured" -> "colour").
_COLOUR_TERMS = frozenset(t for w in _COLOUR_TEXT.split() for t in terms(w))
# "What is the name of ...", "Name the ..." ask for a name, not a role ("the operator").
_NAME_ASKED = re.compile(r"\bnames?\b", re.IGNORECASE)
_WORD = re.compile(r"[\w'’´-]+")
# Auxiliaries and modals between the wh-word and the verb ("Who must sign ...?"); the copula
# ("When was X installed?" / "Where is the panel?"); the forms of "be" that make a passive.
_AUX_TEXT = "is are was were be been being do does did has have had can could will would"
_MODAL_TEXT = "shall should may might must"
_AUX = frozenset(f"{_AUX_TEXT} {_MODAL_TEXT}".split())
_COPULA = frozenset(_AUX_TEXT.split()[:4])
_BE = frozenset(_AUX_TEXT.split()[:7])
# A passive: a form of "be" up to `_BE_GAP` words before the verb ("had been tightened", "is
# designed", "were carefully installed").
_BE_GAP = 2
# "which NOUN", "what governing NOUN": a kind noun (`answer_type`) up to `_MAX_WH_WORDS` words
# after the wh-word ends the wh-phrase; the word after it is the question's verb.
_MAX_WH_WORDS = 3
# Words a title leaves lower-case are this short or shorter ("of", "and", "the").
_TITLE_MIN = 3
# Verbs that carry no relation of their own ("Which processor does X use?", "How many blades
# does the fan have?"), and the naming verbs ("What are X called?": "also known as",
# "referred to as"): the question asks its kind, not a relation a sentence must hold.
_LIGHT_TEXT = """use uses used using have has had get gets got go goes went run runs ran make
    makes made do does did take takes took need needs contain contains hold holds include
    includes come comes came mean means call calls called name names named term termed known"""
_LIGHT = frozenset(_LIGHT_TEXT.split())
# Words after the relation that end a question ("built in?", "kicked out?").
_TAIL = frozenset("in on at by for from to of with into out off up".split())  # noqa: SIM905
_WH = frozenset("who whom whose when where which what how".split())  # noqa: SIM905
# Past participles without -ed / -en: after "is / was" they are the relation ("When was it
# built?"); any other last word is the item ("Where is the panel?").
_IRREGULAR_TEXT = """built made sold bought held found led won lost sent spent paid laid told
    taught caught brought thought fought sought kept left met put read set shut cut hit hurt
    let cost due born begun sung drunk run"""
_IRREGULAR = frozenset(_IRREGULAR_TEXT.split())
# A word one of whose forms starts the other by at most this many letters is the same word
# for the relation ("install" ~ "installation", "design" ~ "designer"); shorter stems than
# `_MIN_ROOT` letters ("use", "set") match too much to be extended.
_MAX_SUFFIX = 5
_MIN_ROOT = 4
# Digits right after a capitalised word name a model ("Snapdragon 801", "Windows 10"): they
# count nothing. Codes, units and code spans are nobody's name.
_MODEL_NUMBER = re.compile(r"(\b[A-Z][A-Za-z]{2,}\s)\d+\b")
_CODE_SPAN = re.compile(r"`[^`]*`")
# A label before the text ("3.1 Design and Requirements: Draft ...", "Oil grade: ISO VG 220")
# names the field, not a person: its capitals are left out (the value after it stays).
_LABEL = re.compile(r"^[^:;!?]{1,60}:\s")
_LETTERS = re.compile(r"[A-Za-z]+")
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
        for h in held:
            short, long_ = (a, h) if len(a) <= len(h) else (h, a)
            near = len(long_) - len(short) <= _MAX_SUFFIX
            if near and len(short) >= _MIN_ROOT and long_.startswith(short):
                return True
    return False


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
        words = [w.casefold() for w in _WORD.findall(sentence) if not w.isdigit()]
        at = [i for i, w in enumerate(words) if related(self.relation, terms(w))]
        if at and "by" in words:
            return False
        return all(i == 0 or _BE & set(words[max(0, i - _BE_GAP) : i]) for i in at)


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
        # A year too short for the date test ("began in 911") is still a number.
        return carries("date", sentence, question) or carries("number", sentence, question)
    return False


def _plain_names(sentence: str) -> str:
    """`sentence` with what cannot be a name lower-cased away: a leading label, code spans,
    words holding digits (codes), and units ("Nm", "kW", "V"); a title ("CX-9 Compressor
    Quick Reference"), whose every word is capitalised, names nothing by its capitals."""
    if _titled(sentence):
        return sentence.casefold()
    text = _CODE_SPAN.sub(" x ", _LABEL.sub("", sentence))
    text = _DIGITS.sub("x", text)
    return _LETTERS.sub(lambda m: "x" if m.group().casefold() in UNITS else m.group(), text)


def _titled(text: str) -> bool:
    """Whether every word of `text` longer than `_TITLE_MIN` letters is capitalised (a title
    or a heading line, not a sentence)."""
    long_ = [w for w in _WORD.findall(text) if len(w) > _TITLE_MIN and w[:1].isalpha()]
    return len(long_) >= 2 and all(w[:1].isupper() for w in long_)


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
    if kind == "none":
        return None
    relation = _relation(question)
    if not relation and kind != "colour":
        # "Who used the church to unify themselves?" names no relation a sentence must hold,
        # and its filler may be a word no test reads ("the dukes"): the rule does not apply.
        # "What colour is X?" asks the kind itself: a colour word or the word "colour".
        return None
    named = kind in ("person", "name") and _NAME_ASKED.search(question) is not None
    return AskedScope(relation=relation, kind=kind, named=named)


def _relation(question: str) -> frozenset[str]:
    """The relation terms of the question's shape (empty when it names none)."""
    words = _WORD.findall(question)
    low = [w.casefold() for w in words]
    if not low:
        return frozenset()
    out: set[str] = set()
    # "What is the [ADJ] NOUN of X", "Who was the principal investigator of X": the attribute
    # noun phrase, minus kind words ("name").
    if (
        len(low) > 3
        and low[0] in ("what", "which", "who")
        and low[1] in _COPULA
        and low[2] == "the"
    ):
        # The phrase ends at a preposition, a wh-word or a verb form ("the name given to X").
        end = next(
            (
                i
                for i in range(3, len(low))
                if low[i] in _TAIL or low[i] in _WH or _participle(low[i : i + 1])
            ),
            len(low),
        )
        out |= _content(low[3:end])
    elif low[0] in _WH:
        i = 1
        if low[0] in ("which", "what", "how") and i < len(low) and low[i] not in _AUX:
            # The wh-phrase's noun or measure: "which company", "what governing body", "how
            # much" (a kind noun up to `_MAX_WH_WORDS` words on ends it, else the first word).
            kinds = [j for j in range(i, min(len(low), i + _MAX_WH_WORDS)) if low[j] in HEAD_NOUNS]
            i = kinds[0] if kinds and low[0] != "how" else i
            i += 1
            if low[0] == "how" and i < len(low) and low[i] not in _AUX:
                # "How much RAM ...?", "How many outputs ...?": what is counted is asked too.
                out |= _content(low[i : i + 1])
                i += 1
        if i + 1 < len(low) and low[0] in ("who", "whom") and low[i] in _AUX:
            # "Who must sign X?", "Who was elected ...?": the verb right after the auxiliary.
            if low[i] not in _COPULA or _participle(low[i + 1 : i + 2]):
                out |= _content(low[i + 1 : i + 2])
        elif i < len(low) and low[i] in _AUX:
            # "When was X installed?", "How much did X cost?": the question's last word, past
            # its particles and hedges ("originally built in?"), is the verb; after "is / was"
            # only a verb form is ("Where is the panel?" ends with the item).
            # A capitalised last word is the object ("When did the Office investigate John
            # Dalli?"), not the verb: no relation then.
            tail = [w for w in words[i + 1 :] if w.casefold() not in _TAIL | FRAMING]
            last = [tail[-1].casefold()] if tail and tail[-1].islower() else []
            last = [w for w in last if w not in STOPWORDS]
            if last and (low[i] not in _COPULA or _participle(last)):
                out |= _content(last)
        elif i < len(low):
            # "Who designed X?", "Which company supplies X?": the word after the wh-phrase.
            out |= _content(low[i : i + 1])
    # "... the engineer who designed X": the relative clause's verb.
    for j, w in enumerate(low[1:], start=1):
        if w in ("who", "that") and j + 1 < len(low) and low[j + 1] not in _AUX:
            out |= _content(low[j + 1 : j + 2])
    return frozenset(out)


def _participle(tail: list[str]) -> bool:
    """Whether the last word is a verb form ("installed", "built", "due"): after "was / is" the
    last word of "When was the fan installed?" is the relation; of "Where is the panel?" the
    item."""
    return bool(tail) and (tail[-1].endswith(("ed", "en", "wn")) or tail[-1] in _IRREGULAR)


def _content(words: list[str]) -> set[str]:
    return {
        t
        for w in words
        if w not in STOPWORDS and w not in FRAMING and w not in _LIGHT
        for t in terms(w)
        if len(t) > 1
    }
