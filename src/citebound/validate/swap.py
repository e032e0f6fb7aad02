"""Slot swaps: a sentence that replaced one evidence token in place (`validate.support`).

"The chiller uses ammonia refrigerant." over "The chiller uses R-134a refrigerant." covers every
word but one, so coverage-based signals pass it; what gives it away is *where* the missing word
sits. A **slot swap** is a content word of the sentence absent from the cited evidence whose
content neighbours (stopwords and connectives skipped, compared by lemma or by the first
`prefix` characters of the lemma) are the neighbours of a *different* token of the best
evidence window, a token the sentence does not have anywhere (one still present was moved,
not replaced), and not a spelling variant of the word:

- *specific* swaps (`slot_swap`), where the evidence token is a number, code, unit or name:
  both sides align (`uses _ refrigerant`), or one side does when the evidence token is a
  number or code (a unit: when the aligned neighbour is its number, `45 _`) and the word's
  other side is open, i.e. the sentence's end or another missing word ("The chiller uses
  ammonia.", "uses liquid ammonia refrigerant"); one aligned side next to a word the evidence
  has elsewhere is too weak a sign in prose;
- *plain* swaps (`word_swap`), where the evidence token is another content word: both sides
  must align and neither word may be a plain adjective, adverb or general verb (`PLAIN`):
  "ball valve" -> "gate valve" and "propane" -> "ammonia" refrigerant are swaps; "at full
  speed" -> "at high speed", "uses" -> "relies on", "lifts" -> "opens" are paraphrases.

Tokens: words, and numbers or codes kept whole when they carry a digit (`R-134a`, `HV-101`,
`4.5`); hyphenated plain words split into their parts; number words keyed by their digits
(`six` = `6`). In the evidence a capitalised word that does not start its span is a name, and
a run of names, numbers and codes is one token (`Shift Supervisor`, `Mobil SHC 460`).
Pure and deterministic; tokens are memoized per evidence span, window and sentence.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

from citebound.text.lexicon import DIGITS_OF, MAGNITUDE_WORDS, UNITS
from citebound.validate.evidence import EvidenceIndex, content_lemma, covered, prefix_key

# Plain adjectives and adverbs of degree, speed, size, quality and time: what a paraphrase
# replaces with a synonym ("full" / "high" speed, "quick" / "fast" check), not a fact.
_PLAIN_TEXT = """full high low big large small little huge tiny great good bad best better
    worse worst fast quick rapid slow swift short long tall wide narrow broad deep shallow
    heavy light strong weak hard soft easy difficult simple complex main major minor key
    important significant primary principal chief general common normal usual regular typical
    standard proper correct right wrong new old young recent early late modern current
    entire whole complete total overall certain particular specific special various several
    different similar same other own further additional extra enough sufficient adequate
    necessary required possible likely able available free open clear safe ready nearly
    almost about approximately roughly exactly just only even quite rather very really fully
    completely totally entirely highly greatly largely mostly mainly partly slightly strongly
    quickly slowly rapidly gradually immediately directly regularly usually often always
    sometimes frequently periodically routinely properly correctly carefully fairly pretty
    maximum minimum max min top peak nominal rated appropriate suitable"""
# Verbs of general meaning that paraphrases trade ("relies on" / "uses", "shut" / "close",
# "check" / "inspect"); verbs that reverse each other are antonyms in `validate.support`.
_GENERAL_VERB_TEXT = """use used uses using rely relies make made do does get got take took give
    gave put set keep kept run runs need needs require requires include includes contain
    contains provide provides allow allows let help show tell told inform say said report
    find found start begin stop end finish check inspect verify ensure confirm make close
    shut open fit mount attach place hold holds carry perform operate work serve act apply
    support supply feed follow reach become becomes seem call called name named mean means
    go goes went come came bring move turn see look note describe explain state list cause
    create produce build form leave left stay remain change follow"""
PLAIN = frozenset(content_lemma(w) for w in (_PLAIN_TEXT + " " + _GENERAL_VERB_TEXT).split()) - {""}
# Number words without a digit form here (the others are keyed by their digits, below).
_NUMBER_WORDS = frozenset(MAGNITUDE_WORDS)
_TOKEN = re.compile(r"[^\W_]+(?:[-./][^\W_]+)*")
_PART = re.compile(r"[^\W_]+")
_DIGIT = re.compile(r"\d")
# Between a number and its unit: a space or none, a degree sign ("50 °C").
_UNIT_GAP = re.compile(r"\s?°?\s?")
# Similarity (difflib ratio) from which two words are one word spelled twice.
_VARIANT_RATIO = 0.8
_SPECIFIC_ONE_SIDE = frozenset({"number", "code"})

# (key, kind) of one content token: key is the lemma (a number or code: its casefolded text);
# kind is "number", "code", "unit", "name" or "word".
Token = tuple[str, str]


@lru_cache(maxsize=65_536)
def _word(part: str, name_slot: bool) -> Token | None:
    """(key, kind) of one word, None for a stopword; `name_slot`: a capitalised word here is a
    name (not the first word of an evidence span; never in the sentence)."""
    low = part.casefold()
    key = content_lemma(low)
    if not key:
        return None
    if low in DIGITS_OF:
        return DIGITS_OF[low], "number"
    if low in UNITS:
        return key, "unit"
    if name_slot and part[0].isupper():
        return key, "name"
    return key, ("number" if low in _NUMBER_WORDS else "word")


def _tokens(text: str, names: bool) -> tuple[Token, ...]:
    out: list[Token] = []
    first = True
    number_end = -1  # where the number just before ends, -1 when the last token was none
    text = text.replace("’", "'")
    for m in _TOKEN.finditer(text):
        raw = m.group()
        if _DIGIT.search(raw):
            kind = "number" if raw.replace(".", "").replace(",", "").isdigit() else "code"
            out.append((raw.casefold(), kind))
            number_end = m.end() if kind == "number" else -1
            first = False
            continue
        # A unit that is a stopword ("25 l", "400 V", "12 in") is one only right after its
        # number; elsewhere it is the letter or the preposition (r5-v6 review: "400 V" /
        # "400 kW" went unseen). `_word` is memoized per word, so the neighbour is read here.
        low = raw.casefold()
        after_number = number_end >= 0 and _UNIT_GAP.fullmatch(text, number_end, m.start())
        if after_number and low in UNITS and _word(raw, False) is None:
            out.append((low, "unit"))
            number_end, first = -1, False
            continue
        number_end = -1
        for part in (raw,) if raw.isalpha() else _PART.findall(raw):
            token = _word(part, names and (not first or part.isupper()))
            if token is not None:
                out.append(token)
            first = False
        first = False
    return tuple(out)


@lru_cache(maxsize=16_384)
def span_tokens(span: str) -> tuple[Token, ...]:
    """Content tokens of one evidence span (a capitalised word not first in it is a name)."""
    return _tokens(span, names=True)


_ENTITY = frozenset({"name", "number", "code"})


@lru_cache(maxsize=4096)
def window_tokens(
    spans: tuple[str, ...], prefix: int
) -> tuple[tuple[Token, ...], tuple[str, ...], tuple[frozenset[str], ...]]:
    """Content tokens of the window's spans in order (a span's first word is no name); a run
    of names, numbers and codes is one token (`Shift Supervisor`, `Mobil SHC 460`): a
    sentence puts one word in the slot of the whole run. With each token's `_norm` key and the
    `_norm` keys of its words (a run's parts), memoized with the window rather than redone
    for every sentence citing it."""
    out: list[Token] = []
    for key, kind in (t for span in spans for t in span_tokens(span)):
        if kind in _ENTITY and out and out[-1][1] in _ENTITY:
            prev_key, prev_kind = out[-1]
            both_numbers = prev_kind == kind == "number"
            merged = "number" if both_numbers else ("name" if prev_kind == kind else "code")
            out[-1] = (f"{prev_key} {key}", merged)
        else:
            out.append((key, kind))
    parts = tuple(frozenset(_norm(part, prefix) for part in k.split()) for k, _ in out)
    return tuple(out), tuple(_norm(k, prefix) for k, _ in out), parts


@lru_cache(maxsize=4096)
def sentence_tokens(sentence: str) -> tuple[Token, ...]:
    return _tokens(sentence, names=False)


def _variant(a: str, b: str) -> bool:
    """A spelling variant or typo (`instument` / `instrument`, `star` / `starr`), not a swap
    (`clockwise` / `counterclockwise` is one)."""
    if (a in b or b in a) and _DIGIT.search(a + b):
        return True  # `50` / `50th`, a number repeated (`19821982`)
    m = SequenceMatcher(None, a, b)
    return m.real_quick_ratio() >= _VARIANT_RATIO and m.ratio() >= _VARIANT_RATIO


def _norm(key: str, prefix: int) -> str:
    """What two lemmas share when they match: the same lemma, or the same first `prefix`
    characters when both are longer (`validate.evidence.covered`'s rule, as one hashable)."""
    return prefix_key(key, prefix) or key


def in_evidence(number: str, index: EvidenceIndex) -> bool:
    """A number or code token the evidence has, by all its parts as written."""
    return all(part in index.raw_words for part in _PART.findall(number))


def _present(key: str, kind: str, index: EvidenceIndex, prefix: int) -> bool:
    """A sentence token the evidence has: a number or code by all its parts as written, a word
    by its lemma or lemma prefix (`validate.evidence.covered`)."""
    if kind in ("number", "code") and _DIGIT.search(key):
        return in_evidence(key, index)
    return covered(key, index, prefix)


def slot_swaps(
    sentence: str, index: EvidenceIndex, start: int, size: int, prefix: int
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(specific, plain): `sentence word>evidence token` for every slot swap of `sentence`
    (markers removed) against the window of `size` spans from `start`
    (`EvidenceIndex.best_window`), by the kind of the evidence token: *specific* (a number,
    code, unit or name) or *plain* (another content word, not a plain adjective). Each
    sentence word counts once; the first matching evidence position wins."""
    sent = sentence_tokens(sentence)
    missing = [i for i, (key, kind) in enumerate(sent) if not _present(key, kind, index, prefix)]
    if not missing:
        return (), ()
    window, norm, part_norms = window_tokens(index.spans[start : start + size], prefix)
    keys = {_norm(k, prefix) for k, _ in sent}
    # Evidence positions by their left and right neighbour, for the tokens the sentence does
    # not have anywhere (a swap replaces a token; one still present was only moved).
    by_left: dict[str, list[int]] = {}
    by_right: dict[str, list[int]] = {}
    for j, own in enumerate(part_norms):
        if not own.isdisjoint(keys):
            continue
        if j > 0:
            by_left.setdefault(norm[j - 1], []).append(j)
        if j + 1 < len(window):
            by_right.setdefault(norm[j + 1], []).append(j)
    specific: list[str] = []
    plain: list[str] = []
    gaps = set(missing)
    for i in missing:
        word = sent[i][0]
        left = _norm(sent[i - 1][0], prefix) if i > 0 else None
        right = _norm(sent[i + 1][0], prefix) if i + 1 < len(sent) else None
        # One side may stand for both only when the other is open: the sentence's end or
        # another missing word (a phrase in place of one token: `uses liquid ammonia`).
        open_left, open_right = left is None or i - 1 in gaps, right is None or i + 1 in gaps
        at_left = by_left.get(left, []) if left is not None else []
        at_right = by_right.get(right, []) if right is not None else []
        for j in sorted({*at_left, *at_right}):  # earliest evidence position first
            key, kind = window[j]
            ok_left, ok_right = (
                norm[j - 1] == left if j > 0 else False,
                (norm[j + 1] == right if j + 1 < len(window) else False),
            )
            swap = f"{word}>{key}"
            one_side = (ok_left and open_right) or (ok_right and open_left)
            # A unit holds its slot on one side only next to its number (`45 bar` / `45 psi`).
            by_number = (ok_left and window[j - 1][1] == "number") or (
                ok_right and window[j + 1][1] == "number"
            )
            one_side_specific = kind in _SPECIFIC_ONE_SIDE or (kind == "unit" and by_number)
            if kind == "word":
                hit = ok_left and ok_right and key not in PLAIN and word not in PLAIN
            else:
                hit = (ok_left and ok_right) or (one_side and one_side_specific)
            # One unit spelled otherwise ("25 litres" / "25 l") holds its slot.
            same_unit = kind == "unit" and _unit_class(word) == _unit_class(key)
            if hit and not same_unit and not _variant(word, key):
                (plain if kind == "word" else specific).append(swap)
                break
    return tuple(specific), tuple(plain)


# Spellings of one unit: a measurement keeps its unit whatever the spelling ("28 litres" /
# "28 l", "2 hours" / "2 h").
_UNIT_CLASSES = (
    "liter litre liters litres l",
    "h hr hrs hour hours",
    "min minute minutes",
    "s sec second seconds",
    "kg kilogram kilograms",
    "g gram grams",
    "lb lbs pound pounds",
    "in inch inches",
    "ft foot feet",
    "m meter metre meters metres",
    "degree degrees celsius c",
    "fahrenheit f",
    "kelvin k",
    "v volt volts",
    "w watt watts",
)


def _unit_key(unit: str) -> str:
    """How `_tokens` keys a unit: its lemma ("litres" -> "litr"), a stopword unit as written
    ("l", "v", "in")."""
    return content_lemma(unit) or unit


# Keyed as tokens key a unit; the class is named by its first spelling (before r5-v6-final,
# by its lemma, "" for "h", "volt", "meter", "gram", ...: hours and volts were one class).
_UNIT_CLASS = {_unit_key(u): c.split()[0] for c in _UNIT_CLASSES for u in c.split()}


def _unit_class(key: str) -> str:
    return _UNIT_CLASS.get(key, key)


def unit_swaps(sentence: str, index: EvidenceIndex) -> tuple[str, ...]:
    """`number unit>number unit` for each measurement of the sentence whose number the cited
    evidence states only with another unit: "runs at 55 rpm" over "runs at 2950 rpm and is
    driven by a 55 kW motor" (r5-v6: two parts' values traded, every number and unit still
    present). A number the evidence writes without a unit after it, or with this unit
    anywhere, is not one."""
    sent = sentence_tokens(sentence)
    pairs = [
        (sent[i][0], _unit_class(sent[i + 1][0]))
        for i in range(len(sent) - 1)
        if sent[i][1] == "number" and sent[i + 1][1] == "unit"
    ]
    if not pairs:
        return ()
    units: dict[str, set[str]] = {}  # evidence number -> classes of the units right after it
    bare: set[str] = set()  # evidence numbers with no unit after them somewhere
    numbers = {number for number, _ in pairs}
    for span in index.spans:
        if not any(number in span for number in numbers):
            continue  # most spans: tokenised only when they hold one of the numbers
        tokens = span_tokens(span)
        for i, (key, kind) in enumerate(tokens):
            if kind != "number":
                continue
            if i + 1 < len(tokens) and tokens[i + 1][1] == "unit":
                units.setdefault(key, set()).add(_unit_class(tokens[i + 1][0]))
            else:
                bare.add(key)
    out = [
        f"{number} {unit}>{number} {sorted(units[number])[0]}"
        for number, unit in pairs
        if number in units and number not in bare and unit not in units[number]
    ]
    return tuple(dict.fromkeys(out))
