"""Sentence-level support: does the evidence a sentence cites say what the sentence says?

For one answer sentence (markers removed) and the text of the anchors it cites
(`validate.evidence` indexes that text into spans and lemmas):

0. **Quotation**: a sentence whose words occur contiguously, in order, in the cited evidence
   (verbatim or with markup, punctuation and line wraps stripped) scores 1.0.
1. **Polarity flip** scores 0.0: a negation (`not`, `never`, `no`, `n't`, `without`, ...) in
   the sentence that no negated evidence span about the same thing (sharing half its supported
   lemmas) carries; a plain sentence repeating at least `negation_span_cover` of a negated
   evidence span; an antonym (`increase`/`decrease`, ...) absent from the evidence whose
   partner is in the best window (`validate.polarity`).
2. Otherwise a logistic rule over signals that survive paraphrase,
   `score = sigmoid(intercept + Σ weight × feature)` with the weights of
   `[validation] support_weights` (fitted, see the preset comment):

   - `coverage`: share of the sentence's content lemmas found anywhere in the cited evidence;
   - `window_coverage`: share found in the best window of `support_window` consecutive
     evidence spans (the one covering most, earliest on ties): a sentence stitched from
     distant parts of a document scores lower than one a single passage states;
   - `missing_words`: content lemmas absent from the cited evidence (a count: every invented
     word is evidence of invention, whatever the sentence's length);
   - `missing_names`: capitalised names (not the first word) and number words absent;
   - `names_outside_window`: names and numbers the evidence has, but not in the best window
     (an entity swapped in from another passage: "Cia Berg was inducted" when the passage
     about the induction names David Lee Roth);
   - `missing_numbers`: numbers, dates and codes (`checks.identifiers`) in neither the cited
     evidence nor the question;
   - `missing_tokens`: words in neither the cited evidence nor the question (a leading
     "Yes,"/"No," aside): function words as written (`both`, `were`, `than`: what a reply
     adds to the evidence's facts), content words by lemma and prefix as above;
   - `echo_missing`: `echo` (share of the sentence's content lemmas the question has) times
     the words absent from the cited evidence. A reply that restates the question ("First for
     Women was started first.") stands or falls with the words it adds or borrows from the
     question, so those must all be in the evidence; a sentence that does not restate the
     question (a summary, an explanation) has `echo` near 0 and keeps the paraphrase tolerance;
   - `slot_swap`: sentence words that took the place of a number, code, unit or name of the
     best window, its neighbours kept ("uses ammonia refrigerant" where the evidence says
     "uses R-134a refrigerant"; `validate.swap`): a one-word swap covers everything else;
   - `word_swap`: the same in the place of another content word ("propane" refrigerant,
     "ball" valve), neither a plain adjective nor a general verb (`full` / `high` speed,
     `uses` / `relies on` are paraphrases).

A sentence is supported when its score reaches `min_sentence_support`. For an unsupported
sentence the best window is reported for the audit record (never the public response).
Everything here is pure and deterministic; an optional NLI model (`validate.nli`,
`[validation] nli_model_path`) may be mixed into the score (`nli_weight`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from citebound.policy import SupportWeights
from citebound.validate.checks import DIGITS_OF, STOPWORDS, identifiers, present_in
from citebound.validate.evidence import (
    FUNCTION_WORDS,
    EvidenceIndex,
    content_lemma,
    covered,
    derived_base,
    index_evidence,
    lemma,
    lemmas,
    plain_numbers,
    prefix_key,
    spelled_compound,
)
from citebound.validate.polarity import INTERJECTION, polarity_flip
from citebound.validate.swap import slot_swaps

# Not "one": mostly a pronoun or determiner ("one of", "no one", "one man's quest").
_NUMBER_TEXT = """two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty
    ninety hundred thousand million billion trillion dozen first second third fourth fifth
    sixth seventh eighth ninth tenth twice thrice half"""
_NUMBER_WORDS = frozenset(_NUMBER_TEXT.split())
_CAPITALISED = re.compile(r"(?<![\w'’])([A-Z][a-z]+(?:['’][a-z]+)?)\b")
_ALL_WORDS = re.compile(r"[a-z0-9]+")
_DIGIT = re.compile(r"\d")
_EPS = 1e-9


@dataclass(frozen=True)
class SupportParams:
    """The fitted knobs of the rule (copied from `policy.validation`)."""

    min_sentence_support: float
    negation_span_cover: float
    weights: SupportWeights
    window: int
    prefix: int
    nli_weight: float = 0.0


@dataclass(frozen=True)
class SupportFeatures:
    """The signals of one sentence against its cited evidence (inputs of the rule)."""

    coverage: float
    window_coverage: float
    missing_words: int
    missing_names: tuple[str, ...]
    names_outside_window: tuple[str, ...]
    missing_numbers: tuple[str, ...]
    polarity_flip: str
    quotation: bool
    best_span: str
    missing_tokens: int = 0
    absent_tokens: int = 0
    echo: float = 0.0
    slot_swaps: tuple[str, ...] = ()
    word_swaps: tuple[str, ...] = ()
    scattered: int = 0


@dataclass(frozen=True)
class SentenceSupport:
    """How well one sentence is supported by the evidence it cites."""

    score: float
    coverage: float
    missing_names: tuple[str, ...]
    polarity_flip: str
    best_span: str
    features: SupportFeatures | None = None

    def supported(self, floor: float) -> bool:
        return self.score >= floor - _EPS


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


def _first_letter(sentence: str) -> int:
    for i, ch in enumerate(sentence):
        if ch.isalpha():
            return i
    return -1


def _names(sentence: str) -> list[str]:
    """Capitalised words (not the first word, not function words) and number words."""
    out: list[str] = []
    first = _first_letter(sentence)
    for m in _CAPITALISED.finditer(sentence):
        word = m.group(1)
        low = word.casefold().replace("’", "'").split("'")[0]
        if m.start() == first or low in STOPWORDS or word in out:
            continue
        out.append(word)
    for w in _ALL_WORDS.findall(sentence.casefold()):
        if w in _NUMBER_WORDS and w not in out:
            out.append(w)
    return out


# A number word written as digits ("seven episodes" for "7 episodes").
# Demonym and plural endings: "Kenyan" names the Kenya of the evidence, "Indians" its India,
# "Iranian" its Iran. Only whole-word stems of 4+ letters, so "Mars" is not "Marshall".
_NAME_ENDINGS = ("n", "an", "ian", "ns", "ans", "ians", "i", "is", "s", "es", "ese")


def _name_variant_in(word: str, raw_words: frozenset[str]) -> bool:
    """The evidence has `word` as digits, or as the same name with(out) a demonym/plural
    ending."""
    if DIGITS_OF.get(word, "") in raw_words:
        return True
    for ending in _NAME_ENDINGS:
        if len(word) >= 4 and word + ending in raw_words:
            return True
        stem = word[: -len(ending)]
        if word.endswith(ending) and len(stem) >= 4 and stem in raw_words:
            return True
    return False


@dataclass(frozen=True)
class _Shown:
    """The words of a text the model was shown besides the evidence (the question, the source
    lines): known to the reader, so repeating them invents nothing."""

    raw: frozenset[str]  # every word as written
    lemmas: frozenset[str]  # content lemmas
    keys: frozenset[str]  # content lemmas and their prefix keys
    all_lemmas: frozenset[str]  # every lemma, stopwords kept (antonyms)
    id_words: frozenset[str]  # the words of its identifiers (`X200`, `NASA`)
    id_lemmas: frozenset[str]  # and their lemmas


@lru_cache(maxsize=1024)
def _shown(text: str, prefix: int) -> _Shown:
    raw = _ALL_WORDS.findall(_fold(text))
    lems = frozenset(lemmas(text))
    ids = identifiers(text)
    return _Shown(
        raw=frozenset(raw),
        lemmas=lems,
        keys=lems | {prefix_key(w, prefix) for w in lems} - {""},
        all_lemmas=frozenset(map(lemma, raw)),
        id_words=frozenset(_ALL_WORDS.findall(" ".join(ids).casefold())),
        id_lemmas=frozenset(w for ident in ids for w in lemmas(ident)),
    )


def _fold(text: str) -> str:
    return text.casefold().replace("’", "'")


def _in_context(swap: str, shown: _Shown) -> bool:
    """The sentence word of a `word>token` swap is a word of the source lines."""
    parts = _ALL_WORDS.findall(swap.split(">", 1)[0].casefold())
    return bool(parts) and all(p in shown.raw or lemma(p) in shown.lemmas for p in parts)


def _absent(
    token: str, index: EvidenceIndex, prefix: int, question: _Shown, context: _Shown
) -> bool:
    """A word the evidence lacks: not a function word (`FUNCTION_WORDS`: how a reply is
    phrased), not a word of the source lines, not the question's identifier, and neither its
    lemma nor its derivational base (`afterwards` / `after`, `replacement` / `replace`) in the
    evidence or, by lemma or prefix, in the source lines (`reassembled` under "Reassembly")."""
    if token in index.raw_words or token in FUNCTION_WORDS or token in context.raw:
        return False
    if token in question.id_words:
        return False
    base = derived_base(token)
    if base and base in index.raw_words:
        return False
    for key in (content_lemma(token), lemma(base) if base else ""):
        if key and (covered(key, index, prefix) or key in context.keys):
            return False
        if key and prefix_key(key, prefix) in context.keys:
            return False
    return True


# Where a sentence's clauses meet: a reply merging two evidence sentences ("A new wear ring
# has a clearance of 0.35 mm, and the ring is replaced at 0.70 mm") states each clause from one.
_CLAUSE_BREAK = re.compile(
    r"[,;:()]|\b(?:and|but|or|because|since|so|which|while|when|where|whereas|although|"
    r"though|unless|until|then|if|who|whose|that)\b",
    re.IGNORECASE,
)


def _scattered(sentence: str, index: EvidenceIndex, prefix: int, topic: frozenset[str]) -> int:
    """Covered content lemmas of each clause that its best single evidence span lacks, summed:
    a claim whose words the evidence has only in different sentences ("Son of Flubber was
    directed by Ron Howard" over "Splash ... directed by Ron Howard" and "Son of Flubber ...
    directed by Robert Stevenson") relates them itself. `topic`: lemmas of the source lines,
    what the whole chunk is about ("HP-220" from the manual's title), never scattered."""
    total = 0
    for clause in _CLAUSE_BREAK.split(sentence):
        words = frozenset(w for w in lemmas(clause) if w not in topic and covered(w, index, prefix))
        if len(words) > 1:
            total += len(words) - index.best_window(words, 1, prefix)[1]
    return total


def support_features(
    sentence: str,
    evidence: str,
    params: SupportParams,
    question: str = "",
    missing_numbers: tuple[str, ...] | None = None,
    context: str = "",
) -> SupportFeatures:
    """The signals of `sentence` (markers removed) against the text it cites.

    `missing_numbers`: the sentence's identifiers absent from the evidence, the question and
    the context, when the caller has them already (the validator's new-facts check); else
    computed. `context`: the source lines (document, headings) shown above the cited evidence;
    their words are known, as the question's are, but they are not evidence sentences."""
    spelled = sentence
    sentence, evidence = plain_numbers(sentence), plain_numbers(evidence)
    if missing_numbers is not None and spelled_compound(spelled):
        missing_numbers = None  # "forty-six" is a number now: the new-facts list lacks it
    if is_quotation(sentence, evidence):
        return SupportFeatures(1.0, 1.0, 0, (), (), (), "", True, "")
    index = index_evidence(evidence, params.prefix)
    prefix = params.prefix
    q, ctx = _shown(question, prefix), _shown(context, prefix)
    asked = q.id_lemmas
    # The sentence's words, tokenised once: content lemmas, every lemma, words as written.
    tokens = _ALL_WORDS.findall(_fold(sentence))
    words = frozenset(x for x in map(content_lemma, tokens) if x)
    known = {w for w in words if w in asked or w in ctx.lemmas or covered(w, index, prefix)}
    n = len(words)
    start, in_window = index.best_window(words - asked, params.window, prefix)
    window = index.window_words(start, params.window)
    in_window += len(words & asked)
    missing_names: list[str] = []
    outside: list[str] = []
    for name in _names(sentence):
        raw = _fold(name).split("'")[0]
        low = lemma(raw)
        if low in asked or raw in ctx.raw or low in ctx.lemmas:
            continue
        if raw not in index.raw_words and low not in index.words:
            if not _name_variant_in(raw, index.raw_words):
                missing_names.append(name)
        elif low not in window and covered(low, index, prefix):
            outside.append(name)
    for w in sorted(words - asked):
        if _DIGIT.search(w) and w in index.words and w not in window:
            outside.append(w)
    numbers = missing_numbers
    if numbers is None:
        numbers = tuple(
            i
            for i in identifiers(sentence)
            if not (
                present_in(i, evidence)
                or (question and present_in(i, question))
                or (context and present_in(i, context))
            )
        )
    # Words absent from the evidence (`_absent`), a leading "Yes,"/"No," aside.
    replied = tokens[1:] if tokens and INTERJECTION.match(sentence) else tokens
    absent = [t for t in replied if _absent(t, index, prefix, q, ctx)]
    window_text = index.window_text(start, params.window)
    swaps, word_swaps = slot_swaps(sentence, index, start, params.window, prefix)
    if context:  # a word the source line shows is not a swap ("HP-220" from the heading)
        swaps = tuple(x for x in swaps if not _in_context(x, ctx))
        word_swaps = tuple(x for x in word_swaps if not _in_context(x, ctx))
    flip = polarity_flip(
        sentence,
        words,
        index,
        (start, params.window),
        params.negation_span_cover,
        q.all_lemmas | ctx.all_lemmas,
        frozenset(map(lemma, tokens)),
    )
    return SupportFeatures(
        coverage=len(known) / n if n else 1.0,
        window_coverage=min(1.0, in_window / n) if n else 1.0,
        missing_words=n - len(known),
        missing_names=tuple(missing_names),
        names_outside_window=tuple(outside),
        missing_numbers=numbers,
        polarity_flip=flip,
        quotation=False,
        best_span=window_text,
        missing_tokens=sum(t not in q.raw for t in absent),
        absent_tokens=len(absent),
        echo=len(words & q.lemmas) / n if n else 0.0,
        slot_swaps=swaps,
        word_swaps=word_swaps,
        scattered=_scattered(sentence, index, prefix, ctx.lemmas) if q.lemmas else 0,
    )


def rule_score(f: SupportFeatures, w: SupportWeights) -> float:
    """The fitted logistic rule (1.0 for a quotation)."""
    if f.quotation:
        return 1.0
    z = (
        w.intercept
        - w.polarity_flip * bool(f.polarity_flip)
        + w.coverage * f.coverage
        + w.window_coverage * f.window_coverage
        - w.missing_words * f.missing_words
        - w.missing_names * len(f.missing_names)
        - w.names_outside_window * len(f.names_outside_window)
        - w.missing_numbers * len(f.missing_numbers)
        - w.missing_tokens * f.missing_tokens
        - w.echo_missing * f.echo * f.absent_tokens
        - w.slot_swap * len(f.slot_swaps)
        - w.word_swap * len(f.word_swaps)
        - w.echo_scattered * f.echo * f.scattered
    )
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))  # clamped: no exp overflow


def sentence_support(
    sentence: str,
    evidence: str,
    params: SupportParams,
    question: str = "",
    nli: Callable[[str, str], float] | None = None,
    missing_numbers: tuple[str, ...] | None = None,
    context: str = "",
) -> SentenceSupport:
    """Score `sentence` (markers removed) against the concatenated text it cites.

    `nli(premise, hypothesis)` (an entailment model, `validate.nli`) is optional: its
    probability, for the best window as premise, is mixed into the score with weight
    `params.nli_weight`; quotations are decided before it.
    """
    f = support_features(sentence, evidence, params, question, missing_numbers, context)
    score = rule_score(f, params.weights)
    if nli is not None and not f.quotation:
        p = nli(f.best_span or evidence, sentence)
        score = (1 - params.nli_weight) * score + params.nli_weight * p
    weak = score < params.min_sentence_support - _EPS
    return SentenceSupport(
        score=round(score, 6),
        coverage=round(f.coverage, 6),
        missing_names=f.missing_names + f.names_outside_window + f.missing_numbers,
        polarity_flip=f.polarity_flip,
        best_span=f.best_span if weak else "",
        features=f,
    )


def clear_caches() -> None:
    """Forget every memoized evidence text (benchmarks measure first-time validation with
    it); the word-lemma memo stays, as it does in any process after a few requests."""
    from citebound.validate import checks, evidence, polarity, swap

    for cached in (
        _word_sequence,
        evidence.plain_numbers,
        polarity._negated,
        polarity._negated_clause,
        _shown,
        polarity.all_lemmas,
        evidence.index_evidence,
        swap.sentence_tokens,
        swap.window_tokens,
        swap._span_tokens,
        evidence.lemmas,
        checks.content_words,
        checks._canon,
        checks._normalize,
        checks._identifiers,
    ):
        cached.cache_clear()
