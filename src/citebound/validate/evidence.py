"""The cited evidence of a sentence, indexed once for the support check (`validate.support`).

Evidence text is cut into spans (sentences: `.`, `!`, `?`, `…`, `;` followed by whitespace,
blank lines and full-width terminators; a hard-wrapped line is not a boundary) and every span
into *lemmas*: lowercase word tokens without stopwords, light suffix stripping
(`lexicon.stem`) and the common irregular verb forms mapped to their base (`said` -> `say`,
`took` -> `take`), so "says"/"said" and "finds"/"found" match. A lemma also matches by its first
`prefix` characters (`investigators` / `investigation`), which survives paraphrase better than
any suffix list.

Unlike answer sentences (`text.sentences`, a security boundary), evidence spans only choose
where support is looked for: a cut after `Dr.` costs nothing, the windows of the support check
span several sentences anyway. So the split here is a cheap regex.

Everything is memoized per evidence text: the same chunks are checked against every sentence
of an answer and again on the next question about the same documents.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cached_property, lru_cache

from citebound.text.lexicon import (
    ALL_WORDS,
    NEGATIONS,
    SUPPORT_STOPWORDS,
    THOUSANDS,
    number_words,
    stem,
)

# Connectives and hedges that organise a summary rather than state a fact: LLM summaries use
# them whether right or wrong, so they carry no support signal ("despite", "however").
_DISCOURSE_TEXT = """however although though despite moreover furthermore additionally also
    meanwhile currently recently now still yet already overall ultimately finally instead
    thus hence therefore whereas while among several many various including included
    according said says say"""
# "say" belongs here too: a summary attributes ("officials say") what the article reports.
DISCOURSE = frozenset(_DISCOURSE_TEXT.split())

# Irregular past forms whose stem does not reach the base form: a summary's "says" for an
# article's "said" is the same fact.
_IRREGULAR_TEXT = """said:say told:tell took:take taken:take found:find saw:see seen:see
    came:come went:go gone:go made:make got:get gotten:get gave:give given:give held:hold
    left:leave led:lead won:win lost:lose began:begin begun:begin ran:run brought:bring
    bought:buy thought:think knew:know known:know wrote:write written:write spoke:speak
    spoken:speak fell:fall fallen:fall kept:keep met:meet paid:pay sent:send spent:spend
    built:build struck:strike chose:choose chosen:choose became:become grew:grow grown:grow
    sold:sell stood:stand felt:feel heard:hear meant:mean taught:teach caught:catch
    fought:fight sought:seek drove:drive driven:drive rose:rise risen:rise hid:hide
    hidden:hide shot:shoot broke:break broken:break froze:freeze frozen:freeze wore:wear
    worn:wear threw:throw thrown:throw flew:fly flown:fly drew:draw drawn:draw died:die
    dead:die death:die lay:lie laid:lay sat:sit stuck:stick swam:swim sang:sing sung:sing
    men:man women:woman children:child people:person used:use using:use"""
IRREGULAR = dict(pair.split(":") for pair in _IRREGULAR_TEXT.split())

# Function words (articles, prepositions, auxiliaries and modals, pronouns, conjunctions) and
# the connectives above: how a reply is phrased around the evidence's facts ("The impeller
# bolts *of* the HP-220 *must be* tightened to 45 Nm" over "Tighten the impeller bolts to
# 45 Nm"), never invented content, so a word absent from the evidence counts only when it is
# none of these. Words that change a claim stay out of this set and still count (r5-v5, after
# a review: each of these made a wrong reply pass): quantifiers and comparatives ("both",
# "only", "all", "some", "many", "several", "more", "than": "Some bolts" over "all bolts"),
# negations (also the polarity check's), prepositions of order, position, time and amount
# ("before", "after", "from", "during", "within", "through", "per": "within 10 minutes" over
# "after 10 minutes"), and pronouns of person ("he", "she").
_CLAIM_TEXT = """all any both either neither few more most less least no nor not only
    same other such than too again once above below before after over under until against
    between further own off out up down very yes some many several various from during
    through within per he she"""
_EXTRA_FUNCTION_TEXT = """via since onto toward towards across along around unto whereby
    whether thereby hence done"""
# Light verbs, whose meaning lies in their object ("each bearing *gets* 15 g of grease",
# "blades *come* as weight-matched pairs"): phrasing as the auxiliaries are. They still count
# towards coverage as content words; only as words absent from the evidence they do not
# (HaluEval QA and summaries, fit half: no verdict changed). Not "need", "make", "give", "go":
# "need not be restarted" over "must not be", "made in Germany" over "designed in", "gave
# the award" over "received" state another fact (r5-v5).
_LIGHT_VERB_TEXT = """get gets got gotten getting come comes came coming take takes took
    taken taking"""
FUNCTION_WORDS = (
    SUPPORT_STOPWORDS
    | frozenset(_EXTRA_FUNCTION_TEXT.split())
    | frozenset(_LIGHT_VERB_TEXT.split())
    | DISCOURSE
) - frozenset(_CLAIM_TEXT.split())
# Function words only before a clause: before a number or date they place a fact in time
# ("has served since 1990" over "served until 1990"), so there they count as claim words;
# "since the fins bend" is a connective.
BEFORE_NUMBER_CLAIMS = frozenset({"since"})

# "No. 1", "no. 3": the abbreviation of number, not a negation.
_NO_NUMBER = re.compile(r"\bno\b(?!\.\s*\d)")

# A span ends after a run of terminators (and closing quotes/brackets) followed by whitespace or
# the end but not by a number ("No. 1", "Fig. 3"), at a blank line, and after a full-width
# terminator. The pattern starts only at those characters: scanning long evidence stays cheap.
SPAN_END = re.compile(r"[.!?…;]+[\"'”’)\]]*(?=\s|$)(?!\s+\d)|\n[ \t]*\n|[。！？]+")


# A doubled final consonant that inflection adds ("fitted", "stopping"): undone on every
# lemma, so "fitted" / "fit" and "added" / "add" meet at one key ("fit", "ad"). Only on 3+
# letters (`_MIN_UNDOUBLE`): a 2-letter stem has no doubled ending to undo. Chosen, not fitted;
# unrelated words that then share a key ("butt" / "but") are rare and both must still appear.
# A plural gerund noun ("bearings", "shootings") is stemmed as its singular; `lexicon.stem`
# (shared with the extractive provider) strips only the "s" and left "bearings" / "bearing"
# apart. 7+ letters: "things", "rings" already meet their singular.
_MIN_PLURAL_GERUND = 7
# A form in "-ied" / "-ies" is its word in "-y" ("tried" / "tries" / "try", "applied" /
# "apply"); `stem` left "tried" and "tries" at "tri". 5+ letters: "died", "ties" are others.
_MIN_IED = 5
_DOUBLED = ("bb", "dd", "gg", "mm", "nn", "pp", "rr", "tt")
_MIN_UNDOUBLE = 3


@lru_cache(maxsize=65_536)
def lemma(word: str) -> str:
    """Base form of one lowercase word: irregular map, then `lexicon.stem`, then a doubled
    final consonant undone.

    >>> [lemma(w) for w in ("said", "says", "found", "finds", "valves", "fitted", "fit")]
    ['say', 'say', 'find', 'find', 'valv', 'fit', 'fit']
    """
    word = IRREGULAR.get(word, word)
    if word.endswith("ings") and len(word) >= _MIN_PLURAL_GERUND:
        word = word[:-1]  # "bearings" is the plural of "bearing": both reach "bear" (r5-v6)
    elif word.endswith(("ied", "ies")) and len(word) >= _MIN_IED:
        word = word[:-3] + "y"  # "tried" / "tries" / "try", "applied" / "apply" (r5-v6)
    base = stem(word)
    return base[:-1] if len(base) >= _MIN_UNDOUBLE and base.endswith(_DOUBLED) else base


def is_content(word: str) -> bool:
    """Counts towards support: not a stopword, not a connective, 2+ characters or a digit."""
    return (
        word not in SUPPORT_STOPWORDS
        and word not in DISCOURSE
        and (len(word) > 1 or word.isdigit())
    )


@lru_cache(maxsize=65_536)
def content_lemma(word: str) -> str:
    """The lemma of a content word, "" for a stopword or connective."""
    return lemma(word) if is_content(word) else ""


# Derivational endings a paraphrase adds or drops: "afterwards" / "after", "replacement" /
# "replace", "inspection" / "inspect", "normally" / "normal".
_DERIVATIONAL = ("wards", "ward", "ments", "ment", "ions", "ion", "ness", "ity", "ly")


# A base must be a word of its own: 4+ letters, its lemma too, and no function word, so
# "tension" is not "ten(s)", "forward" not "for", "fitness" not "fit" (r5-v5, from the review's
# collisions; the derivations the rule exists for, "inspection", "replacement", "afterwards",
# keep theirs). The Latinate endings (`-ion`, `-ity`) attach to Latinate stems of two
# syllables or more ("inspect", "connect", "select", "discuss", "secure"), never to a
# one-syllable English word: a 4-letter base before them is a prefix collision, not a
# derivation ("portion" / "port", "mission" / "miss", "station" / "stat", "million" /
# "mill", "edition" / "edit"; r5-v6), so they need 5+ letters (`_MIN_LATINATE_BASE`). The
# caller (`wording.absent`) matches the base by exact lemma only, never by prefix, and not
# when the sentence has the base word itself ("depart ... department").
_MIN_BASE = 4
_MIN_LATINATE_BASE = 5
_LATINATE = ("ions", "ion", "ity")


def derived_base(word: str) -> str:
    """`word` without a derivational ending, "" when it has none or what is left is no word
    of its own (`_MIN_BASE`, `_MIN_LATINATE_BASE`)."""
    for ending in _DERIVATIONAL:
        if word.endswith(ending):
            base = word[: -len(ending)]
            least = _MIN_LATINATE_BASE if ending in _LATINATE else _MIN_BASE
            own = len(base) >= least and len(lemma(base)) >= _MIN_BASE
            return base if own and base not in FUNCTION_WORDS else ""
    return ""


def fold(text: str) -> str:
    """Casefolded, with the typographic apostrophe as `'` (every lemma and word set here)."""
    return text.casefold().replace("’", "'")


@lru_cache(maxsize=16_384)
def lemmas(text: str) -> tuple[str, ...]:
    """Content lemmas of `text` in order, repeats kept (casefolded, `’` as `'`)."""
    return tuple(x for x in map(content_lemma, ALL_WORDS.findall(fold(text))) if x)


def prefix_key(word: str, prefix: int) -> str:
    """The key a lemma also matches by: its first `prefix` characters (long words only)."""
    return "~" + word[:prefix] if prefix > 0 and len(word) > prefix else ""


@dataclass(frozen=True)
class EvidenceIndex:
    """Spans of one evidence text with their lemmas; lemma prefixes (`~` + first `prefix`
    characters) mapped to the evidence lemmas that carry them."""

    spans: tuple[str, ...]
    starts: tuple[int, ...]
    span_words: tuple[frozenset[str], ...]
    words: frozenset[str]
    prefixes: dict[str, set[str]]
    raw_words: frozenset[str]
    negated: tuple[int, ...]

    @cached_property
    def all_words(self) -> frozenset[str]:
        """Every lemma, stopwords kept (names, antonyms): computed on first use only."""
        return frozenset(map(lemma, self.raw_words))

    @cached_property
    def folded_spans(self) -> tuple[str, ...]:
        """Each span `fold`ed (name look-ups by substring): computed on first use only, once
        per evidence text rather than once per answer sentence."""
        return tuple(map(fold, self.spans))

    def matches(self, word: str, prefix: int) -> AbstractSet[str]:
        """The evidence lemmas `word` matches: itself, else those sharing its prefix."""
        if word in self.words:
            return {word}
        key = prefix_key(word, prefix)
        return self.prefixes.get(key, set()) if key else set()

    def best_window(self, sentence: frozenset[str], size: int, prefix: int) -> tuple[int, int]:
        """(first span, lemmas covered) of the `size` consecutive spans covering most of the
        sentence's distinct lemmas; earliest window on ties, (0, 0) when none is covered."""
        direct = sentence & self.words
        hits = [direct & words for words in self.span_words]
        for w in sentence - direct:
            matched = self.matches(w, prefix)
            if matched:
                hits = [
                    h | {w} if not matched.isdisjoint(s) else h
                    for h, s in zip(hits, self.span_words, strict=True)
                ]
        best_start, best_n = 0, 0
        for start in range(max(1, len(hits) - size + 1)):
            window = hits[start : start + size]
            if sum(map(len, window)) <= best_n:
                continue  # an upper bound: cannot beat the best so far
            n = len(set().union(*window)) if size > 1 else len(window[0])
            if n > best_n:
                best_start, best_n = start, n
        return best_start, best_n

    def window_words(self, start: int, size: int) -> frozenset[str]:
        return frozenset().union(*self.span_words[start : start + size])

    def window_text(self, start: int, size: int) -> str:
        return " ".join(" ".join(s.split()) for s in self.spans[start : start + size])


def _cut(evidence: str) -> tuple[list[str], list[int], list[int]]:
    """(spans, start offsets, end offsets) of the non-blank spans of `evidence`."""
    spans: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    start = 0
    for end in [*(m.end() for m in SPAN_END.finditer(evidence)), len(evidence)]:
        piece = evidence[start:end].strip()
        if piece:
            spans.append(piece)
            starts.append(start)
            ends.append(end)
        start = end
    return spans, starts, ends


_NO_WORD = frozenset({""})


@lru_cache(maxsize=1024)
def index_evidence(evidence: str, prefix: int) -> EvidenceIndex:
    """Spans and lemmas of `evidence`, and its lemma prefixes.

    Hot path (every new evidence text): one casefold, then set operations over each span's
    distinct words."""
    spans, starts, ends = _cut(evidence)
    folded = fold(evidence)
    if len(folded) != len(evidence):  # casefold changed lengths (`ß`): offsets differ
        folded_spans = [fold(s) for s in spans]
        bounds = [(0, len(s)) for s in folded_spans]
    else:
        folded_spans = [folded] * len(spans)
        bounds = list(zip(starts, ends, strict=True))
    span_words: list[frozenset[str]] = []
    raw_all: set[str] = set()
    negated: list[int] = []
    for i, (text, (a, b)) in enumerate(zip(folded_spans, bounds, strict=True)):
        raw = set(ALL_WORDS.findall(text, a, b))
        raw_all |= raw
        span_words.append(frozenset(map(content_lemma, raw)) - _NO_WORD)
        found = raw & NEGATIONS  # "No. 1" is a number, "n't" splits as "n" + "t"
        word = bool(found) and (found != {"no"} or _NO_NUMBER.search(text, a, b) is not None)
        if word or ("t" in raw and "n't" in text[a:b]):
            negated.append(i)
    words = frozenset().union(*span_words)
    prefixes: dict[str, set[str]] = {}
    if prefix > 0:
        for w in words:
            if len(w) > prefix:
                prefixes.setdefault("~" + w[:prefix], set()).add(w)
    return EvidenceIndex(
        spans=tuple(spans),
        starts=tuple(starts),
        span_words=tuple(span_words),
        words=words,
        prefixes=prefixes,
        raw_words=frozenset(raw_all),
        negated=tuple(negated),
    )


def covered(word: str, index: EvidenceIndex, prefix: int) -> bool:
    """The lemma, or a lemma with its prefix, occurs in the evidence."""
    if word in index.words:
        return True
    key = prefix_key(word, prefix)
    return bool(key) and key in index.prefixes


# Numbers written either way: the support check compares sentence and evidence after this.
_TENS = {w: 10 * (i + 2) for i, w in enumerate(number_words(20, 90))}
_ONES = {w: i + 1 for i, w in enumerate(number_words(1, 9))}
# "forty-five bar" is the evidence's "45 bar" (both sides are rewritten, so either may spell).
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


def spelled_compound(text: str) -> bool:
    """`text` has a compound number in words (`forty-five`) that `plain_numbers` rewrites."""
    return _COMPOUND.search(text) is not None
