"""What a question's shape asks of its item: the relation words (`relation`).

The verb of "Who designed X?", "When was X installed?", "How much did X cost?", "Which company
supplies X?", "Who must sign X?", "By whom were the bolts tightened to 30 Nm?", "When did they
install X?"; the verb of a relative clause ("the name of the engineer who designed X"); the
noun of "What is the orbital period of X?" (after a possessive: "the fan's designer"); the
counted noun of "How much RAM ...?" and the measure of "How heavy is X?"; the adjective of "Who
is responsible for X?". No tagger: auxiliaries, determiners, prepositions and participle
endings mark the slots. Empty when the shape names no relation (a light verb: "Which processor
does X use?"). Used by `asked.py`, which decides whether a sentence says what is asked.
"""

from __future__ import annotations

import re

from citebound.text.lexicon import HYPHENATED_WORD_ACUTE, MODALS, QUESTION_STOPWORDS
from citebound.text.terms import FRAMING, terms

from .answer_type import HEAD_NOUNS

__all__ = ["BE", "org_asked", "participle", "relation", "titled"]

# "Which vendor / supplier / manufacturer ...?" asks for a name (a company's) that
# `answer_type`'s kind nouns do not list (they serve SQuAD's ranking too; this serves only here).
_ORG_TEXT = """vendor vendors supplier suppliers manufacturer manufacturers maker makers contractor
    contractors subcontractor subcontractors firm firms distributor distributors"""
_ORG_NOUNS = frozenset(_ORG_TEXT.split())
_CONTRACTED = re.compile(r"\b(who|what|where|when|which|how)['’]s\b", re.IGNORECASE)
# Auxiliaries and modals between the wh-word and the verb ("Who must sign ...?"); the copula
# ("When was X installed?" / "Where is the panel?"); the forms of "be" that make a passive.
_AUX_TEXT = "is are was were be been being do does did has have had can could will would"
_AUX = frozenset(_AUX_TEXT.split()) | MODALS
_COPULA = frozenset(_AUX_TEXT.split()[:4])
_DO = frozenset(_AUX_TEXT.split()[7:10])
BE = frozenset(_AUX_TEXT.split()[:7])
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
# What starts a noun phrase: after "do" the subject ("Who did the plant hire ...?"), after the
# verb its object ("When did they install the pump / it?").
_DETERMINER_TEXT = "the a an this that these those its their his her our your my"
_NOUN_START = frozenset(f"{_DETERMINER_TEXT} it they he she we you i".split())
_OBJECT_START = frozenset(f"{_DETERMINER_TEXT} it them him us me".split())
# After "how", words that name no measure a sentence would hold ("How much / many"), or a
# time often said without digits ("How long does the test take?" / "a few minutes", "How
# often" / "weekly"): no relation of their own.
_UNNAMED_MEASURES = frozenset("much many long often soon".split())  # noqa: SIM905
# Prepositions that may come before the wh-word ("In what year ...", "By whom ...").
_FRONTED = _TAIL | frozenset("during since until after before under through".split())  # noqa: SIM905
# ... and more that never are the verb before an object ("go up against the Turks").
_PREPOSITIONS = _FRONTED | frozenset(
    "against about over upon across among between within without throughout".split()  # noqa: SIM905
)
# Past participles without -ed / -en: after "is / was" they are the relation ("When was it
# built?"); any other last word is the item ("Where is the panel?").
_IRREGULAR_TEXT = """built made sold bought held found led won lost sent spent paid laid told
    taught caught brought thought fought sought kept left met put read set shut cut hit hurt
    let cost due born begun sung drunk run"""
_IRREGULAR = frozenset(_IRREGULAR_TEXT.split())
# "-ed" words this short are no participle ("bed", "red").
_SHORT_ED = 4
_IRREGULAR_EN = frozenset(
    "given taken written chosen driven broken shown drawn grown thrown seen done beaten".split()  # noqa: SIM905
)


def relation(question: str) -> frozenset[str]:
    """The relation terms of the question's shape (empty when it names none)."""
    # "Who's the designer of X?" is "Who is the designer of X?".
    words = HYPHENATED_WORD_ACUTE.findall(_CONTRACTED.sub(r"\1 is", question))
    low = [w.casefold() for w in words]
    if len(low) > 1 and low[0] in _FRONTED and low[1] in _WH:
        # "In what year was X designed?", "By whom was X approved?": the preposition before
        # the wh-word leaves the rest of the shape as it is without it.
        words, low = words[1:], low[1:]
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
                if low[i] in _TAIL or low[i] in _WH or participle(low[i : i + 1])
            ),
            len(low),
        )
        phrase = low[3:end]
        # A possessive names the item, the noun after it the attribute ("the VT-40 fan's
        # designer").
        owner = [j for j, w in enumerate(phrase) if w.endswith(("'s", "’s", "s'"))]
        phrase = phrase[owner[-1] + 1 :] if owner and owner[-1] + 1 < len(phrase) else phrase
        ended = end < len(low) and participle(low[end : end + 1])
        if ended and all(w in _TAIL for w in low[end + 1 :]):
            # "Who was the VT-40 fan designed by?": the phrase is the item, the verb ending
            # the question the relation ("the name given to X" goes on past it).
            phrase = low[end : end + 1]
        out |= _content(phrase)
    elif low[0] in _WH:
        i = 1
        if low[0] in ("which", "what", "how") and i < len(low) and low[i] not in _AUX:
            # The wh-phrase's noun or measure: "which company", "what governing body", "how
            # much" (a kind noun up to `_MAX_WH_WORDS` words on ends it, else the first word).
            nouns = HEAD_NOUNS | _ORG_NOUNS
            kinds = [j for j in range(i, min(len(low), i + _MAX_WH_WORDS)) if low[j] in nouns]
            i = kinds[0] if kinds and low[0] != "how" else i
            i += 1
            if low[0] == "how" and low[1] not in _UNNAMED_MEASURES:
                # "How heavy / tall / old is X?": the measure asked, a sentence holds it or a
                # number.
                out |= _content(low[1:2])
            if low[0] == "how" and i < len(low) and low[i] not in _AUX:
                # "How much RAM ...?", "How many outputs ...?": what is counted is asked too.
                out |= _content(low[i : i + 1])
                i += 1
        if (
            i + 1 < len(low)
            and low[0] in ("who", "whom")
            and low[i] in _AUX
            and (low[i] not in _COPULA or participle(low[i + 1 : i + 2]))
            # "Who did the plant hire ...?": after "do", a subject ("Who has the power ...?":
            # "has" is the verb).
            and not (low[i] in _DO and low[i + 1] in _NOUN_START)
        ):
            # "Who must sign X?", "Who was elected ...?": the verb right after the auxiliary
            # ("Whom was the fan designed by?" ends with it: the last word, below).
            out |= _content(low[i + 1 : i + 2])
        elif (
            i + 2 < len(low)
            and low[0] in ("who", "whom")
            and low[i] in _COPULA
            and low[i + 1] not in _NOUN_START
            and (words[i + 1].islower() or titled(question))  # "Who was Ralph in ...?"
            and low[i + 2] in _TAIL
        ):
            # "Who is responsible for (maintaining) X?", "Who was married to X?": the word
            # between the copula and the preposition, and a verb form right after it.
            out |= _content([low[i + 1], *(w for w in low[i + 3 : i + 4] if w.endswith("ing"))])
        elif i < len(low) and low[i] in _AUX:
            # "When was X installed?", "How much did X cost?": the question's last word, past
            # its particles and hedges ("originally built in?"), is the verb; after "is / was"
            # only a verb form is ("Where is the panel?" ends with the item).
            # A capitalised last word is the object ("When did the Office investigate John
            # Dalli?"), not the verb: no relation then.
            tail = [w for w in words[i + 1 :] if w.casefold() not in _TAIL | FRAMING]
            # ... unless every word is capitalised ("When Was The Fan Installed?"): then the
            # capitals say nothing.
            cased = not titled(question)
            last = [tail[-1].casefold()] if tail and (tail[-1].islower() or not cased) else []
            # "When did they install the pump?": after "do" and its subject, the word right
            # before the object's determiner (or pronoun) is the verb; the last word is the
            # object. Not past a particle ("end in the region"): the last word stays.
            k = next((k for k in range(i + 2, len(low)) if low[k] in _OBJECT_START), 0)
            verb = low[k - 1] if k else ""
            if (
                low[i] not in _COPULA
                and verb
                and verb not in QUESTION_STOPWORDS | _PREPOSITIONS | _AUX
            ):
                last = [verb] if words[k - 1].islower() or not cased else []
            elif low[0] in ("who", "whom") and low[i] in _DO:
                # "Who did the Normans serve under in the 10th century?": the last word of a
                # who-question is its object's, not a verb ("Who did X marry?" was read
                # after "did": nothing, as before).
                last = []
            last = [w for w in last if w not in QUESTION_STOPWORDS]
            if low[0] in ("who", "whom") and low[i] in _COPULA and not participle(last):
                # "By whom were the bolts tightened to 30 Nm?": the passive's verb comes
                # before its complement; the last lower-case participle past the subject.
                # Not for "when": "When is a buffer considered valid?" asks a condition,
                # which no date or number need fill.
                # Only a regular "-ed" or an irregular form: "shutdown", "kitchen" or "speed"
                # in the subject are no verb.
                verbs = [w for w in words[i + 2 :] if (w.islower() or not cased) and w.isalpha()]
                last = [v for w in verbs for v in [w.casefold()] if _passive(v)][-1:]
            if last and (low[i] not in _COPULA or participle(last)):
                out |= _content(last)
        elif i < len(low):
            # "Who designed X?", "Which company supplies X?": the word after the wh-phrase.
            out |= _content(low[i : i + 1])
    # "... the engineer who designed X": the relative clause's verb.
    for j, w in enumerate(low[1:], start=1):
        if w in ("who", "that") and j + 1 < len(low) and low[j + 1] not in _AUX:
            out |= _content(low[j + 1 : j + 2])
    return frozenset(out)


def org_asked(question: str) -> bool:
    """Whether a which / what phrase of `question` ends on a company noun ("Which pump vendor
    ...?", "What manufacturer ...?")."""
    low = [w.casefold() for w in HYPHENATED_WORD_ACUTE.findall(question)]
    return any(
        w in ("which", "what") and bool(_ORG_NOUNS.intersection(low[j + 1 : j + 1 + _MAX_WH_WORDS]))
        for j, w in enumerate(low)
    )


def participle(tail: list[str]) -> bool:
    """Whether the last word is a verb form ("installed", "built", "due"): after "was / is" the
    last word of "When was the fan installed?" is the relation; of "Where is the panel?" the
    item."""
    return bool(tail) and (tail[-1].endswith(("ed", "en", "wn")) or tail[-1] in _IRREGULAR)


def _passive(word: str) -> bool:
    """Whether `word` is surely a past participle: a regular "-ed" form ("tightened", not
    "speed") or an irregular one ("built", "given")."""
    regular = word.endswith("ed") and not word.endswith("eed") and len(word) > _SHORT_ED
    return regular or word in _IRREGULAR or word in _IRREGULAR_EN


def _content(words: list[str]) -> set[str]:
    return {
        t
        for w in words
        if w not in QUESTION_STOPWORDS and w not in FRAMING and w not in _LIGHT
        for t in terms(w)
        if len(t) > 1
    }


def titled(text: str) -> bool:
    """Whether every word of `text` longer than `_TITLE_MIN` letters is capitalised (a title
    or a heading line, not a sentence)."""
    long_ = [
        w for w in HYPHENATED_WORD_ACUTE.findall(text) if len(w) > _TITLE_MIN and w[:1].isalpha()
    ]
    return len(long_) >= 2 and all(w[:1].isupper() for w in long_)
