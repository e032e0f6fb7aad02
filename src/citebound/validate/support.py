"""Sentence-level support: does the evidence a sentence cites say what the sentence says?

For one answer sentence (markers removed) and the text of the anchors it cites:

0. **Quotations**: a sentence whose words occur contiguously, in order, in the cited evidence
   (verbatim or with markup, punctuation and line wraps stripped) scores 1.0.
1. **Coverage**: share of the sentence's content words (lowercased, stopwords dropped, light
   stemming, `checks.content_words`) found anywhere in the cited evidence. Verbatim and
   markup-stripped quotes score 1.0; paraphrases that reuse the evidence's words score high.
2. **Missing names**: capitalised words of the sentence (not its first word, not function
   words) and number words (`two`, `seventh`) absent from the cited evidence. Numbers, dates
   and codes are checked separately (UNSUPPORTED_NEW_FACT).
3. **Polarity flips**: a negation (`not`, `never`, `no`, `n't`, `without`, ...) in the sentence
   that no negated evidence sentence about the same thing (sharing half its supported words)
   carries; or a plain sentence repeating at least `negation_span_cover` of the words of a
   negated evidence sentence; or an antonym (`increase`/`decrease`, ...) where the best
   evidence span uses the other word.

The support score is `coverage - missing_name_penalty × missing names`, clipped to [0, 1], and
0 on a polarity flip. A sentence is supported when its score reaches `min_sentence_support`
(policy `[validation]`). For an unsupported sentence the best evidence span (the cited
evidence sentence sharing most content words with it, earliest on ties) is reported for the
audit record.

Everything here is pure and deterministic; an optional NLI model (`validate.nli`,
`[validation] nli_model_path`) may be mixed into the score (`nli_weight`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from citebound.text.sentences import split_sentences
from citebound.validate.checks import STOPWORDS, content_words, identifiers, stem

_NEGATION_TEXT = """not no never none nothing nobody neither nor without cannot cant isnt arent
    wasnt werent dont doesnt didnt wont wouldnt shouldnt couldnt mustnt hasnt havent hadnt"""
_NEGATIONS = frozenset(_NEGATION_TEXT.split())
_NEGATION_RE = re.compile(r"\b(?:" + "|".join(sorted(_NEGATIONS)) + r")\b|n['’]t\b")
_NUMBER_TEXT = """one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty
    ninety hundred thousand million billion trillion dozen first second third fourth fifth
    sixth seventh eighth ninth tenth twice thrice half"""
_NUMBER_WORDS = frozenset(_NUMBER_TEXT.split())
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
    ("won", "lost"),
    ("inside", "outside"),
    ("start", "stop"),
    ("true", "false"),
    ("accept", "reject"),
    ("include", "exclude"),
    ("older", "younger"),
    ("earlier", "later"),
    ("north", "south"),
    ("east", "west"),
)
_ANTONYMS: dict[str, str] = {}
for _a, _b in _ANTONYM_PAIRS:
    _ANTONYMS[stem(_a)] = stem(_b)
    _ANTONYMS[stem(_b)] = stem(_a)
# A leading "No," / "Yes." answers a yes/no question; it does not negate the evidence.
_INTERJECTION = re.compile(r"^\W*(?:no|yes)\b[\s,.;:!-]*", re.IGNORECASE)
_CAPITALISED = re.compile(r"(?<![\w'’])([A-Z][a-z]+(?:['’][a-z]+)?)\b")
_ALL_WORDS = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class SupportParams:
    """The fitted knobs of the rule (copied from `policy.validation`)."""

    min_sentence_support: float
    missing_name_penalty: float
    negation_span_cover: float
    nli_weight: float = 0.0


@dataclass(frozen=True)
class SentenceSupport:
    """How well one sentence is supported by the evidence it cites."""

    score: float
    coverage: float
    missing_names: tuple[str, ...]
    polarity_flip: str
    best_span: str

    def supported(self, floor: float) -> bool:
        return self.score >= floor - 1e-9


_SINGLE_NEWLINE = re.compile(r"(?<!\n)\n(?!\n)")


@lru_cache(maxsize=4096)
def _spans(evidence: str) -> tuple[tuple[str, frozenset[str]], ...]:
    # Hard-wrapped lines are one sentence; blank lines and terminators still split.
    text = _SINGLE_NEWLINE.sub(" ", evidence)
    return tuple((s, content_words(s)) for s in split_sentences(text) if s.strip())


# A Markdown link's target: `[text](../path.md)` reads as `text` when quoted.
_LINK_TARGET = re.compile(r"\]\([^)\s]*\)")


@lru_cache(maxsize=4096)
def _word_sequence(text: str) -> str:
    """Lowercase words joined by single spaces, padded: markup, link targets and punctuation
    gone."""
    return " " + " ".join(_ALL_WORDS.findall(_LINK_TARGET.sub("]", text).casefold())) + " "


def is_quotation(sentence: str, evidence: str) -> bool:
    """The sentence's words appear in the evidence in the same order, contiguously (a verbatim
    or markup-stripped quote: `**Needed**`, `` `Svc::ComQueue` ``, table pipes, line wraps)."""
    words = _word_sequence(sentence)
    return words.strip() != "" and words in _word_sequence(evidence)


@lru_cache(maxsize=4096)
def _all_words(text: str) -> frozenset[str]:
    """Every lowercase word (stopwords kept, stemmed): for names and negations."""
    return frozenset(stem(w) for w in _ALL_WORDS.findall(text.casefold().replace("’", "'")))


@lru_cache(maxsize=16_384)
def _negated(text: str) -> bool:
    return _NEGATION_RE.search(text.casefold().replace("’", "'")) is not None


@lru_cache(maxsize=4096)
def best_span(sentence_words: frozenset[str], evidence: str) -> tuple[str, frozenset[str]]:
    """The evidence sentence sharing most content words with the sentence (earliest on ties)."""
    best: tuple[str, frozenset[str]] = ("", frozenset())
    best_n = -1
    for span, words in _spans(evidence):
        n = len(sentence_words & words)
        if n > best_n:
            best, best_n = (span, words), n
    return best


def missing_names(sentence: str, evidence: str) -> tuple[str, ...]:
    """Capitalised words (not the first word) and number words absent from the evidence."""
    known = _all_words(evidence)
    out: list[str] = []
    for i, m in enumerate(_CAPITALISED.finditer(sentence)):
        word = m.group(1)
        low = word.casefold().replace("’", "'").split("'")[0]
        if (i == 0 and m.start() == _first_letter(sentence)) or low in STOPWORDS:
            continue
        if stem(low) not in known and word not in out:
            out.append(word)
    for w in _ALL_WORDS.findall(sentence.casefold()):
        if w in _NUMBER_WORDS and stem(w) not in known and w not in out:
            out.append(w)
    return tuple(out)


def _first_letter(sentence: str) -> int:
    for i, ch in enumerate(sentence):
        if ch.isalpha():
            return i
    return -1


_BOUNDARY = re.compile(r"[.!?\n]")


@lru_cache(maxsize=4096)
def _negated_spans(evidence: str) -> tuple[frozenset[str], ...]:
    """Content words of each evidence sentence that carries a negation (sentences cut at
    `.`, `!`, `?` and line breaks: a cheap pass over the evidence, most of it skipped)."""
    text = evidence.casefold().replace("’", "'")
    cuts = [m.start() for m in _BOUNDARY.finditer(text)]
    spans: dict[tuple[int, int], None] = {}
    for m in _NEGATION_RE.finditer(text):
        i = bisect_left(cuts, m.start())
        start = cuts[i - 1] + 1 if i > 0 else 0
        end = cuts[i] if i < len(cuts) else len(text)
        spans[(start, end)] = None
    return tuple(content_words(text[a:b]) for a, b in spans)


def polarity_flip(
    sentence: str, sentence_words: frozenset[str], evidence: str, cover: float
) -> str:
    """Why the sentence flips the polarity of its evidence, or "" when it does not.

    Quotations never reach this check (`is_quotation`)."""
    negated = _negated_spans(evidence) if _negated(evidence) else ()
    if _negated(_INTERJECTION.sub("", sentence)):
        # The negation must come from an evidence sentence about the same thing: one sharing
        # at least half of the sentence's supported content words (and at least one).
        need = max(1, (len(sentence_words & content_words(evidence)) + 1) // 2)
        if not any(len(sentence_words & words) >= need for words in negated):
            return "negation absent from the cited evidence"
    else:
        # A plain sentence repeating a negated evidence sentence (`must not be started` ->
        # `must be started`).
        for words in negated:
            if words and len(sentence_words & words) / len(words) >= cover:
                return "the evidence negates what the sentence states"
    known = _all_words(evidence)
    swapped = [(w, _ANTONYMS[w]) for w in _all_words(sentence) if w in _ANTONYMS and w not in known]
    if swapped:
        span_all = _all_words(best_span(sentence_words, evidence)[0])
        for _, other in swapped:
            if other in span_all:
                return f"antonym: evidence says {other!r}"
    return ""


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


@lru_cache(maxsize=4096)
def _plain_numbers(text: str) -> str:
    """`1,000` -> `1000`, so a number matches whatever grouping either side uses."""
    return _THOUSANDS.sub("", text)


@lru_cache(maxsize=1024)
def _question_ids(question: str) -> frozenset[str]:
    """Content words of the question's identifiers (`X200`, `NASA`): a sentence may repeat
    them, as the new-facts rule allows."""
    return frozenset(w for ident in identifiers(question) for w in content_words(ident))


def sentence_support(
    sentence: str,
    evidence: str,
    params: SupportParams,
    question: str = "",
    nli: Callable[[str, str], float] | None = None,
) -> SentenceSupport:
    """Score `sentence` (markers removed) against the concatenated text it cites.

    `nli(premise, hypothesis)` (an entailment model, `validate.nli`) is optional: its
    probability, for the best evidence span as premise, is mixed into the score with weight
    `params.nli_weight`; polarity flips and quotations are decided before it.
    """
    sentence, evidence = _plain_numbers(sentence), _plain_numbers(evidence)
    words = content_words(sentence)
    ev_words = content_words(evidence) | _question_ids(question)
    coverage = len(words & ev_words) / len(words) if words else 1.0
    if is_quotation(sentence, evidence):
        # A quotation says what its evidence says: nothing can be missing or flipped.
        return SentenceSupport(
            score=1.0, coverage=1.0, missing_names=(), polarity_flip="", best_span=""
        )
    names = missing_names(sentence, evidence)
    flip = polarity_flip(sentence, words, evidence, params.negation_span_cover)
    score = 0.0 if flip else min(1.0, max(0.0, coverage - params.missing_name_penalty * len(names)))
    if nli is not None and not flip:
        premise = best_span(words, evidence)[0] or evidence
        p = nli(premise, sentence)
        score = (1 - params.nli_weight) * score + params.nli_weight * p
    # The best span is only reported for unsupported sentences (it costs a pass over the
    # evidence sentences).
    weak = score < params.min_sentence_support - 1e-9
    return SentenceSupport(
        score=round(score, 6),
        coverage=round(coverage, 6),
        missing_names=names,
        polarity_flip=flip,
        best_span=best_span(words, evidence)[0] if weak else "",
    )


def clear_caches() -> None:
    """Forget every memoized evidence text (benchmarks measure first-time validation with
    it); the word-stem memo stays, as it does in any process after a few requests."""
    from citebound.validate import checks

    for cached in (
        _spans,
        _all_words,
        _word_sequence,
        _plain_numbers,
        best_span,
        _negated,
        _negated_spans,
        _question_ids,
        checks.content_words,
        checks._canon,
        checks._normalize,
    ):
        cached.cache_clear()
