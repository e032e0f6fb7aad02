"""Is a sentence a quotation of the evidence? (The extractive answerer's check of its own
pieces; the validator itself leaves this to the verifier model.)

Also `plain_numbers`, the one spelling of numbers both sides are compared in, and `UNITS`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from citebound.validate.checks import ALL_WORDS, THOUSANDS

# Where an evidence sentence ends: a terminator followed by space or the end but not by a
# number ("No. 1", "Fig. 3"), a blank line, a full-width terminator.
SPAN_END = re.compile(r"[.!?…;]+[\"'”’)\]]*(?=\s|$)(?!\s+\d)|\n[ \t]*\n|[。！？]+")
# A Markdown link's target: `[text](../path.md)` reads as `text` when quoted.
_LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
# Where one evidence sentence ends and the next begins, in a word sequence.
_BOUNDARY = "|"

_UNIT_TEXT = """bar mbar psi kpa mpa pa nm kn lbf kg g mg lb lbs mm cm m km in ft inch inches
    mph kph
    rpm hz khz mhz ghz kw w mw kwh v kv mv ma amp amps ohm db dba c f k celsius fahrenheit
    kelvin l ml gal gallon gallons s sec ms min hr hrs hour hours minute minutes second
    seconds h day days week weeks month months year years percent degree degrees liter litre
    liters litres meter metre meters metres gram grams pound pounds volt volts watt watts"""
UNITS = frozenset(_UNIT_TEXT.split())


def _pieces(text: str) -> list[str]:
    """The lowercase words of each sentence of `text` (`SPAN_END`), joined by single spaces:
    markup, link targets and punctuation gone."""
    pieces = SPAN_END.split(_LINK_TARGET.sub("]", text).casefold())
    return [seq for seq in (" ".join(ALL_WORDS.findall(p)) for p in pieces if p) if seq]


@lru_cache(maxsize=4096)
def _word_sequence(text: str) -> str:
    """The words of `text`, each sentence end kept as `|`, padded (`_pieces`)."""
    return " " + f" {_BOUNDARY} ".join(_pieces(text)) + " "


@lru_cache(maxsize=4096)
def _sentence_pieces(sentence: str) -> tuple[str, ...]:
    return tuple(_pieces(sentence))


def _follows(pieces: tuple[str, ...], hay: str, at: int) -> bool:
    """`pieces` occur in `hay` from `at` on, one after the other, each pair separated by a
    space or by a sentence end (`a; b` quoting "a; b" or a table row's "a b")."""
    for piece in pieces:
        if hay.startswith(f" {_BOUNDARY} {piece} ", at):
            at += len(piece) + 3
        elif hay.startswith(f" {piece} ", at):
            at += len(piece) + 1
        else:
            return False
    return True


def is_quotation(sentence: str, evidence: str) -> bool:
    """The sentence's words appear in the evidence in the same order, contiguously (a verbatim
    or markup-stripped quote: `**Needed**`, `` `Svc::ComQueue` ``, table pipes, line wraps),
    and the quote crosses an evidence sentence end only where the sentence ends a clause with
    a terminator too (`a; b` quoting "a; b"). "Directed by Ron Howard: Son of Flubber" is no
    quotation of "... directed by Ron Howard. Son of Flubber is ...": it relates two
    sentences the evidence keeps apart."""
    pieces = _sentence_pieces(sentence)
    if not pieces:
        return False
    hay = _word_sequence(evidence)
    first = f" {pieces[0]} "
    at = hay.find(first)
    while at >= 0:  # usually one piece: the first find decides
        if _follows(pieces[1:], hay, at + len(first) - 1):
            return True
        at = hay.find(first, at + 1)
    return False


# Numbers written either way: "forty-five bar" is the evidence's "45 bar".
_TENS_TEXT = "twenty thirty forty fifty sixty seventy eighty ninety"
_TENS = {w: 10 * (i + 2) for i, w in enumerate(_TENS_TEXT.split())}
_ONES_TEXT = "one two three four five six seven eight nine"
_ONES = {w: i + 1 for i, w in enumerate(_ONES_TEXT.split())}
_COMPOUND = re.compile(
    r"\b(" + "|".join(_TENS) + r")[-\s](" + "|".join(_ONES) + r")\b", re.IGNORECASE
)


def _compound_digits(m: re.Match[str]) -> str:
    return str(_TENS[m.group(1).lower()] + _ONES[m.group(2).lower()])


@lru_cache(maxsize=4096)
def plain_numbers(text: str) -> str:
    """`1,000` -> `1000` and `forty-five` -> `45`, so a number matches whatever grouping or
    spelling either side uses."""
    return _COMPOUND.sub(_compound_digits, THOUSANDS.sub("", text))
