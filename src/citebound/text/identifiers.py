"""Identifiers of a text (numbers, dates, codes, acronyms) and whether another text states them.

The validator's new-facts and support checks and the condensed context's grounding check ask
the same two questions: which identifiers does a sentence hold (`identifiers`), and does the
evidence state one (`present_in`: as a whole token, spelled out, as its parts, as a defined
initialism). Every function is deterministic and never raises on text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from citebound.text.confusables import fold_skeleton
from citebound.text.lexicon import SPELLED_NUMBERS, THOUSANDS

_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._/:,-]*[A-Za-z0-9])?")
_DIGIT = re.compile(r"\d")


def identifiers(text: str) -> list[str]:
    """Numbers, dates, codes and acronyms in `text`, in order, unique (see `_identifiers`)."""
    return list(_identifiers(text))


# Memoized: the validator asks for a sentence's identifiers twice (new facts, support).
@lru_cache(maxsize=4096)
def _identifiers(text: str) -> tuple[str, ...]:
    """Numbers, dates, codes and acronyms in `text`, in order, unique.

    A token is an identifier when it contains a digit (`40`, `3.5`, `2024-01-03`, `M8`,
    `XJ-220`, `v1.2`) or is an all-capitals word of 2+ letters (`NASA`, `PSI`).

    >>> identifiers("Torque the M8 bolt to 40 Nm per NASA-STD 5020, see Fig. 3.")
    ['M8', '40', 'NASA-STD', '5020', '3']
    """
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        tok = m.group().strip(".,:/-")
        if not tok:
            continue
        # `isupper()` is true only when the token has a cased letter and no lowercase one.
        is_id = _DIGIT.search(tok) is not None or (len(tok) >= 2 and tok.isupper())
        if is_id and tok not in out:
            out.append(tok)
    return tuple(out)


@lru_cache(maxsize=256)
def _canon(text: str) -> str:
    return THOUSANDS.sub("", fold_skeleton(text))


_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


# A number word by its digits: "5" is stated by "five", not inside "fifty-five".
_SPELLED = {
    number: re.compile(rf"(?<![\w-]){word}(?![\w-])") for number, word in SPELLED_NUMBERS.items()
}


def present_in(identifier: str, text: str) -> bool:
    """Whether `identifier` occurs in `text` as a whole token (case-insensitive), spelled out
    (`5` as `five`, `3rd` as `third`: not inside `fifty-five`), or as its parts: a hyphen
    compound whose numbers and codes are all present, its lowercase words aside
    (`22-year-old` in "Cobain, now 22", `magnitude-7.8` in "a 7.8 magnitude quake"); a code
    or date with no lowercase word (`XJ-220`, `2019-03-01`) must occur whole. Whole-token
    rules: see `_present_whole`.
    """
    if _present_whole(identifier, text):
        return True
    if _initialism(identifier, text):
        return True
    if any(_present_whole(other, text) for other in _decade_spellings(identifier)):
        return True
    spelled = _SPELLED.get(identifier.casefold())
    if spelled is not None and spelled.search(_canon(text)):
        return True
    parts = [p for p in identifier.split("-") if p]
    needed = [p for p in parts if not (p.isalpha() and p.islower())]
    # Only a number-and-word compound: a code (`XJ-220`) or a date stays one token.
    return 0 < len(needed) < len(parts) and all(present_in(p, text) for p in needed)


_DECADE = re.compile(r"(?:(19|20)(\d0)|(\d0))s")


def _decade_spellings(identifier: str) -> tuple[str, ...]:
    """The other spellings of a decade: "1940s" for "40s" ("the '40s") and the other way
    round. Not a year of it: "in 1940" does not say "in the 1940s"."""
    m = _DECADE.fullmatch(identifier)
    if m is None:
        return ()
    if m.group(3):
        return (f"19{m.group(3)}s", f"20{m.group(3)}s")
    return (f"{m.group(2)}s",)


# Small words an initialism skips: "FBI" for "Federal Bureau of Investigation".
_INITIAL_GAP = r"(?:\s+(?:of|the|and|for|&))?\s+"


@lru_cache(maxsize=1024)
def _initials_pattern(letters: str) -> re.Pattern[str]:
    """Consecutive capitalised words whose first letters spell `letters`, followed by the
    initialism in brackets: "National Science Foundation (NSF)" (the other way round, "NSF
    (...)", has the initialism as written)."""
    words = _INITIAL_GAP.join(rf"{c}[\w'’.-]*" for c in letters)
    return re.compile(r"(?<![\w-])" + words + rf"\s*\(\s*{re.escape(letters)}\s*\)")


def _initialism(identifier: str, text: str) -> bool:
    """An all-capitals identifier of 3-5 letters (dots aside: `U.S.A.`) that `text` defines as
    the initials of consecutive capitalised words ("New York City (NYC)"): the same entity,
    not a new one. Only a definition counts: any run of capitalised words whose
    initials happen to match ("the National Security Forces" for "NSF", a sentence-initial
    "The") names another entity as often as the same one. Two letters are too easily the
    initials of any two names ("PM" of "Peter Miller"), so they must occur as written; more
    than five are not abbreviated in practice (the bound keeps the pattern small)."""
    letters = identifier.replace(".", "")
    if not (3 <= len(letters) <= 5 and letters.isalpha() and letters.isupper()):
        return False
    return _initials_pattern(letters).search(text) is not None


def _present_whole(identifier: str, text: str) -> bool:
    """Whether `identifier` occurs in `text` as a whole token (case-insensitive).

    `4` is not found in `40` or `3.4`; `1000` matches `1,000`; `2019` matches `2019-03-01`.
    Not glued to letters/digits, and not part of a decimal (`3.4`) or thousands group; parts
    of hyphen/slash/colon compounds count (`2019` in `2019-03-01`, `25` in `25-30`). Plain
    string search (no regex to compile per identifier: this runs for every new number).
    """
    ident, hay = _canon(identifier), _canon(text)
    if not ident:
        return False
    at = hay.find(ident)
    while at >= 0:
        end = at + len(ident)
        before = hay[at - 1] if at >= 1 else ""
        before2 = hay[at - 2] if at >= 2 else ""
        after = hay[end] if end < len(hay) else ""
        after2 = hay[end + 1] if end + 1 < len(hay) else ""
        glued_before = before in _ALNUM or (before in ".," and before2 in _ALNUM and before2)
        glued_after = after in _ALNUM or (after in ".," and after2 in _ALNUM and after2)
        if not (glued_before and before) and not (glued_after and after):
            return True
        at = hay.find(ident, at + 1)
    return False
