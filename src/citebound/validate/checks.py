"""Pure text checks used by the validator: refusal look-alikes, leaks, meta commentary,
new identifiers and lexical support. Every function is deterministic and never raises on text.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

from citebound.text.confusables import fold_skeleton

# Phrases that mark an answer as a refusal attempt. An answer containing one of these (or a
# near copy of a policy refusal string) must be exactly the refusal, or it fails with
# INVALID_REFUSAL_FORMAT. "no evidence" alone is NOT a cue: "no evidence of corrosion" is a fact.
_REFUSAL_CUES = (
    "no_evidence",
    "does not contain sufficient information",
    "does not contain enough information",
    "does not contain this information",
    "do not contain sufficient information",
    "no supporting documentation",
    "insufficient information to answer",
    "not enough information to answer",
    "cannot answer this question",
    "can't answer this question",
    "unable to answer this question",
    "cannot be answered from",
    "i don't know",
    "i do not know",
)

# Meta commentary about the system, its inputs or its reasoning is not allowed in an answer.
_META_PHRASES = (
    "as an ai",
    "as a language model",
    "as an ai language model",
    "i am an ai",
    "i'm an ai",
    "based on the provided",
    "based on the given",
    "based on the context",
    "according to the provided",
    "according to the given",
    "according to the context",
    "the provided context",
    "the given context",
    "the context says",
    "the context states",
    "the context provided",
    "the context mentions",
    "the provided documentation",
    "the provided documents",
    "the provided sources",
    "the provided text",
    "the provided excerpts",
    "the retrieved documents",
    "the retrieved context",
    "the retrieved passages",
    "the retrieved chunks",
    "my training",
    "my knowledge",
    "i was instructed",
    "my instructions",
    "system prompt",
    "let me think",
    "<think>",
    "</think>",
)

_LEAK = re.compile(
    r"(?<![A-Za-z])(?:chunk|knowledge|faiss)[_ ]?id\b|\[[A-Za-z]?\d+\s*\|", re.IGNORECASE
)
_EVIDENCE_WORD = re.compile(r"\bevidence\b", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^\w\s]|_")


# Memoized: the evidence of a bundle is normalized once, not once per answer.
@lru_cache(maxsize=256)
def _normalize(text: str) -> str:
    text = text.casefold().replace("’", "'")
    return _SPACES.sub(" ", text).strip()


def _loose(text: str) -> str:
    return _SPACES.sub(" ", _NON_WORD.sub(" ", text.casefold())).strip()


def looks_like_refusal(text: str, refusals: tuple[str, ...]) -> bool:
    """True when `text` contains a refusal cue or a near copy of one of `refusals`."""
    norm = _normalize(text)
    if any(cue in norm for cue in _REFUSAL_CUES):
        return True
    loose = _loose(text)
    for refusal in refusals:
        target = _loose(refusal)
        if not target:
            continue
        if target in loose:
            return True
        # A reworded refusal of about the same length (casing, punctuation, a word changed).
        similar_length = 0.5 <= len(loose) / len(target) <= 2.0
        if similar_length and SequenceMatcher(None, loose, target, autojunk=False).ratio() >= 0.75:
            return True
    return False


def find_leaks(text: str, chunk_ids: tuple[str, ...]) -> list[str]:
    """Evidence metadata in the answer: `chunk_id`, `knowledge_id`, evidence headers, chunk ids."""
    found = [m.group() for m in _LEAK.finditer(text)]
    # Chunk ids are content hashes; shorter ids could collide with ordinary words.
    found += [cid for cid in chunk_ids if len(cid) >= 8 and cid in text]
    return found


def find_meta(text: str, evidence: str = "") -> list[str]:
    """Meta-commentary phrases in `text` (case-insensitive) that `evidence` does not use.

    A phrase the evidence itself uses ("the system prompt" in an LLM manual) is content.
    """
    norm = _normalize(text)
    found = [p for p in _META_PHRASES if p in norm]
    if not found:
        return []  # the common case: no need to normalize the (long) evidence
    used = _normalize(evidence)
    return [p for p in found if p not in used]


def mentions_evidence_word(sentence: str, cited_text: str) -> bool:
    """The word "evidence" in a sentence, unless its cited evidence uses that word too (P5)."""
    return bool(_EVIDENCE_WORD.search(sentence)) and not _EVIDENCE_WORD.search(cited_text)


# --- identifiers (an answer adds no entities, dates or numeric values) -------------------

_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._/:,-]*[A-Za-z0-9])?")
THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
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


# Small numbers and ordinals a writer spells out: "5 women" restates "five women". The
# validator's one list of number words: each check takes the subset it needs (`number_words`,
# `MAGNITUDE_WORDS`, `MULTIPLIER_WORDS`).
_SPELLED_TEXT = """0:zero 1:one 2:two 3:three 4:four 5:five 6:six 7:seven 8:eight 9:nine 10:ten
    11:eleven 12:twelve 13:thirteen 14:fourteen 15:fifteen 16:sixteen 17:seventeen
    18:eighteen 19:nineteen 20:twenty 30:thirty 40:forty 50:fifty 60:sixty 70:seventy
    80:eighty 90:ninety 1st:first 2nd:second 3rd:third 4th:fourth 5th:fifth 6th:sixth
    7th:seventh 8th:eighth 9th:ninth 10th:tenth 20th:twentieth"""
SPELLED_NUMBERS = dict(pair.split(":") for pair in _SPELLED_TEXT.split())
# "six" -> "6": a number word keyed by its digits (the support check and the swap signal).
DIGITS_OF = {word: number for number, word in SPELLED_NUMBERS.items()}
_SPELLED = {
    number: re.compile(rf"(?<![\w-]){word}(?![\w-])") for number, word in SPELLED_NUMBERS.items()
}
# Number words with no digit form: magnitudes (and the dozen), and how many times or a part.
MAGNITUDE_WORDS = ("hundred", "thousand", "million", "billion", "trillion", "dozen")
MULTIPLIER_WORDS = ("twice", "thrice", "half")


def number_words(low: int, high: int, *, ordinal: bool = False) -> tuple[str, ...]:
    """The spelled cardinals (`ordinal`: ordinals) of `SPELLED_NUMBERS` from `low` to `high`,
    in increasing order: `number_words(2, 4)` is ("two", "three", "four"), `number_words(1, 2,
    ordinal=True)` ("first", "second")."""
    return tuple(
        word
        for key, word in SPELLED_NUMBERS.items()
        if key.isdigit() != ordinal and low <= int(key.rstrip("stndrh")) <= high
    )


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
    not a new one. Only a definition counts (r5-v5): any run of capitalised words whose
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


# --- lexical support (a word-overlap heuristic) -----------------------------------------------

_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each either few
for from further had has have having he her here hers herself him himself his how i if in
into is it its itself just may me might more most must my myself no nor not of off on
once only or other our ours out over own same shall she should so some such than that the
their theirs them themselves then there these they this those through to too under until
up upon very was we were what when where which while who whom whose why will with would
you your yours yes
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
# Word tokens of casefolded text: the one word tokeniser of `checks`, `evidence` and the
# support check.
ALL_WORDS = re.compile(r"[a-z0-9]+")


# Memoized: evidence is mostly the same few thousand words; stemming dominated the cost.
@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A tiny suffix stripper so `bolts`/`bolt`, `valves`/`valve`, `based`/`base` and
    `tightened`/`tighten` match: plural and -ed/-ing endings go, then a final `e`.

    >>> [stem(w) for w in ("valves", "valve", "based", "base", "boxes", "glass", "tightening")]
    ['valv', 'valv', 'bas', 'bas', 'box', 'glass', 'tighten']
    """
    if word.endswith("ies") and len(word) >= 6:
        return word[:-3] + "y"
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    else:
        if word.endswith(("sses", "xes", "zes", "ches", "shes")) and len(word) >= 6:
            word = word[:-2]
        elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) >= 4:
            word = word[:-1]
    if word.endswith("e") and len(word) >= 4:
        word = word[:-1]
    return word


# Memoized: the same evidence texts are compared against every answer sentence and again on
# the next question about the same documents.
@lru_cache(maxsize=16_384)
def content_words(text: str) -> frozenset[str]:
    """Stemmed lowercase words of `text` without stopwords (digits kept as words)."""
    return frozenset(
        stem(w)
        for w in ALL_WORDS.findall(fold_skeleton(text))  # look-alike letters read as Latin
        if w not in STOPWORDS and (len(w) > 1 or w.isdigit())
    )


def lexical_support(sentence: str, evidence: str) -> float:
    """|content words of sentence ∩ content words of evidence| ÷ |content words of sentence|.

    A sentence without content words has nothing to support and scores 1.0.

    >>> lexical_support("Torque the bolts to 40 Nm.", "Tighten each bolt to 40 Nm.")
    0.75
    """
    words = content_words(sentence)
    if not words:
        return 1.0
    return len(words & content_words(evidence)) / len(words)
