"""The word layer: stopwords, number words, units, negations, modals, word tokens and the stemmer.

One data module that the validator, the extractive answerer, the gate's terms, the condensed
context and the follow-up rewrite all read, so a word list is edited in one place. It imports
nothing from citebound: every other folder may import it.

Stopwords come as a common core and named parts; each reader's set is one expression over them
(`SUPPORT_STOPWORDS`, `QUESTION_STOPWORDS`, `FOLLOWUP_STOPWORDS`), and the comment on it says
why it differs. Their contents are pinned by tests/core/test_core_lexicon.py: changing one
changes answers, the gate or verdicts, so an edit there must be deliberate.
"""

from __future__ import annotations

import re
from functools import lru_cache


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- stopwords ----------------------------------------------------------------------------

# The common core: articles, personal pronouns, auxiliaries and modals, prepositions,
# conjunctions, quantifiers and question words, which say how something is asked or phrased,
# not what it is about.
STOPWORDS = _words("""
    a about above after all also an and any are as at be been before being between both
    but by can could did do does during each for from had has have he her his how i if in
    into is it its may me might more most must my no not of on or our shall she should so
    some such than that the their them then there these they this those to under up was we
    were what when where which while who whom whose why will with would you your
""")
# Further function words a full English list drops: reflexive and possessive pronouns,
# adverbs of place, degree and time, particles, conjunctions ("because", "nor"), "only" /
# "other" / "same", "yes".
MORE_FUNCTION_WORDS = _words("""
    again against am because below doing down either few further having here hers herself
    him himself itself just myself nor off once only other ours out over own same theirs
    themselves through too until upon very yes yours
""")
# Words that ask for an answer rather than say what it is about: request verbs and
# "please", "how many / much", "per".
REQUEST_WORDS = _words("describe explain give list many much per please tell")

# The validator's support check (and `text.overlap`): a reply phrases the evidence's facts in
# any function words, so the full English list is dropped before words are compared.
SUPPORT_STOPWORDS = STOPWORDS | MORE_FUNCTION_WORDS
# Question terms (the gate's coverage and names, the extractive answerer): the request words of
# a question go; the further function words stay terms ("out", "off" and the like are weighed
# as `text.terms.FRAMING`), as the gate's thresholds were set with them counted.
QUESTION_STOPWORDS = STOPWORDS | REQUEST_WORDS
# Fillers and light verbs a follow-up question uses around what it is about ("Can you show
# what else they need?").
FOLLOWUP_FILLERS = _words("another cannot done else even every know made make need often show")
# The follow-up rewrite carries content words of 4+ letters only, so its list holds no shorter
# word; it was written without the reflexive pronouns, "once", "were" and "list", and adding
# them would change which words a follow-up carries into the retrieval query.
FOLLOWUP_STOPWORDS = frozenset(
    w for w in SUPPORT_STOPWORDS | REQUEST_WORDS | FOLLOWUP_FILLERS if len(w) >= 4
) - _words("hers herself himself itself myself ours theirs themselves whom whose once were list")

# --- numbers ---------------------------------------------------------------------------------

# "10,000" is "10000": a thousands comma between digits (not "1,5" or "1,0000").
THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# Small numbers and ordinals a writer spells out: "5 women" restates "five women". The one list
# of number words: each reader takes the subset it needs (`number_words`, `MAGNITUDE_WORDS`,
# `MULTIPLIER_WORDS`).
_SPELLED_TEXT = """0:zero 1:one 2:two 3:three 4:four 5:five 6:six 7:seven 8:eight 9:nine 10:ten
    11:eleven 12:twelve 13:thirteen 14:fourteen 15:fifteen 16:sixteen 17:seventeen
    18:eighteen 19:nineteen 20:twenty 30:thirty 40:forty 50:fifty 60:sixty 70:seventy
    80:eighty 90:ninety 1st:first 2nd:second 3rd:third 4th:fourth 5th:fifth 6th:sixth
    7th:seventh 8th:eighth 9th:ninth 10th:tenth 20th:twentieth"""
SPELLED_NUMBERS = dict(pair.split(":") for pair in _SPELLED_TEXT.split())
# "six" -> "6": a number word keyed by its digits (the support check and the swap signal).
DIGITS_OF = {word: number for number, word in SPELLED_NUMBERS.items()}
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


# --- units, negations, modals ------------------------------------------------------------------

# Units of measurement: a measurement slot (`45 bar` -> `45 psi`) is as specific as a number.
UNITS = _words("""bar mbar psi kpa mpa pa nm kn lbf kg g mg lb lbs mm cm m km in ft inch inches
    mph kph
    rpm hz khz mhz ghz kw w mw kwh v kv mv ma amp amps ohm db dba c f k celsius fahrenheit
    kelvin l ml gal gallon gallons s sec ms min hr hrs hour hours minute minutes second
    seconds h day days week weeks month months year years percent degree degrees liter litre
    liters litres meter metre meters metres gram grams pound pounds volt volts watt watts""")
# Words that negate a clause, contractions written without their apostrophe ("dont"): the
# apostrophe form splits as "don" + "t" in `ALL_WORDS`, so readers match "n't" themselves.
NEGATIONS = _words("""not no never none nothing nobody neither nor without cannot cant isnt arent
    wasnt werent dont doesnt didnt wont wouldnt shouldnt couldnt mustnt hasnt havent hadnt""")
# Modal strength: an obligation against a permission ("must restart" over "may restart").
OBLIGATION_MODALS = _words("must shall")
PERMISSION_MODALS = _words("may might can could")
# The modal verbs: `should` advises and is neither an obligation nor a permission.
MODALS = OBLIGATION_MODALS | PERMISSION_MODALS | {"should"}
# Words no sentence ends with: a line ending on one goes on with the next line ("... one per
# line in each", "written as a comment, like"). In order, as the pattern that reads it joins them.
_UNFINISHED_END_TEXT = """a an the of in on at to by for with from and or but as like each every
    such than that into onto per via is are was were be its their this these"""
UNFINISHED_END_WORDS = tuple(_UNFINISHED_END_TEXT.split())

# --- word tokens and the stemmer -------------------------------------------------------------

# Word tokens of any text: runs of letters, digits and underscores (the question terms, the
# answerer's scoring and names, the condensed context's open issues).
WORD = re.compile(r"\w+")
# Word tokens of casefolded text, ASCII letters and digits only: the validator's tokeniser
# (checks, evidence, support, wording, polarity), so "n't" splits as "n" + "t" and an accented
# letter that folding left is a break.
ALL_WORDS = re.compile(r"[a-z0-9]+")
# A word with its apostrophes and hyphens ("O'Brien", "well-known"): the answerer's words of a
# name run, which stay one word.
HYPHENATED_WORD = re.compile(r"[\w'’-]+")
# The same with the acute accent that F´ ("F Prime") writes as part of its name: the
# answerer's words of a question's shape and of the relation a sentence must hold.
HYPHENATED_WORD_ACUTE = re.compile(r"[\w'’´-]+")


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
