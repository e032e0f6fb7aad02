"""Sentence-level support: does the evidence a sentence cites say what the sentence says?

For one answer sentence (markers removed) and the text of the anchors it cites
(`validate.evidence` indexes that text into spans and lemmas):

0. **Quotation**: a sentence whose words occur contiguously, in order, in the cited evidence
   (verbatim or with markup, punctuation and line wraps stripped, but not across an evidence
   sentence end the sentence does not have) scores 1.0.
1. **Polarity flip** scores 0.0: a negation (`not`, `never`, `no`, `n't`, `without`, ...) in
   the sentence that no negated evidence span about the same thing (sharing half its supported
   lemmas) carries; a plain sentence repeating at least `negation_span_cover` of a negated
   evidence span; an antonym (`increase`/`decrease`, `synchronous`/`asynchronous`, ...)
   absent from the evidence whose partner is in the best window; a modal of the other
   strength; a count per item, a comparison or an order of numbered steps the evidence does
   not state (`validate.polarity`, `validate.order`).
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
   - `missing_numbers`: numbers, dates and codes (`text.identifiers`) in neither the cited
     evidence nor the question;
   - `missing_tokens`: words in neither the cited evidence nor the question (a leading
     "Yes,"/"No," aside; `validate.wording.absent`): content words by lemma, prefix or
     derivational base, and the stopwords that change a claim (`both`, `only`, `than`);
     function words (articles, prepositions, auxiliaries, pronouns, conjunctions) never count;
   - `echo_missing`: `echo` (share of the sentence's content lemmas the question has) times
     the words absent from the cited evidence. A reply that restates the question ("First for
     Women was started first.") stands or falls with the words it adds or borrows from the
     question, so those must all be in the evidence; a sentence that does not restate the
     question (a summary, an explanation) has `echo` near 0 and keeps the paraphrase tolerance;
   - `echo_scattered`: `echo` times the evidence words of each clause that the one evidence
     sentence stating most of that clause lacks (`validate.wording.scattered`): a reply that
     relates the question's words itself ("Son of Flubber was directed by Ron Howard" when
     the evidence says so of "Splash") rather than finding them related in one sentence;
   - `slot_swap`: sentence words that took the place of a number, code, unit or name of the
     best window, its neighbours kept ("uses ammonia refrigerant" where the evidence says
     "uses R-134a refrigerant"; `validate.swap`): a one-word swap covers everything else;
     also numbers moved into another number's slot, multi-word names swapped
     (`validate.wording`) and units traded between numbers (`swap.unit_swaps`);
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
from citebound.text import identifiers as identifiers_module
from citebound.text import overlap
from citebound.text.identifiers import identifiers, present_in
from citebound.text.lexicon import ALL_WORDS
from citebound.validate import checks, order, polarity, swap, wording
from citebound.validate.evidence import (
    SPAN_END,
    content_lemma,
    covered,
    fold,
    index_evidence,
    lemma,
    lemmas,
    plain_numbers,
    spelled_compound,
)
from citebound.validate.polarity import INTERJECTION, polarity_flip
from citebound.validate.swap import slot_swaps, unit_swaps
from citebound.validate.wording import (
    absent_words,
    in_context,
    moved_numbers,
    name_swaps,
    name_variant_in,
    names,
    scattered,
    shown,
)

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


# Where one evidence sentence ends and the next begins, in a word sequence.
_BOUNDARY = "|"


def _pieces(text: str) -> list[str]:
    """The lowercase words of each sentence of `text` (`evidence.SPAN_END`), joined by single
    spaces: markup, link targets and punctuation gone."""
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
    a terminator too (`a; b` quoting "a; b"). Punctuation is gone, but a sentence end is not:
    "Directed by Ron Howard: Son of Flubber" is no quotation of "... directed by Ron Howard.
    Son of Flubber is ..." (r5-v6): it relates two sentences the evidence keeps apart."""
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
    if missing_numbers is not None and spelled_compound(sentence):
        missing_numbers = None  # "forty-six" is a number below: the new-facts list lacks it
    sentence, evidence = plain_numbers(sentence), plain_numbers(evidence)
    if is_quotation(sentence, evidence):
        return SupportFeatures(1.0, 1.0, 0, (), (), (), "", True, "")
    prefix = params.prefix
    index = index_evidence(evidence, prefix)
    q, ctx = shown(question, prefix), shown(context, prefix)
    asked = q.id_lemmas
    # The sentence's words, tokenised once: content lemmas, every lemma, words as written.
    tokens = ALL_WORDS.findall(fold(sentence))
    words = frozenset(x for x in map(content_lemma, tokens) if x)
    known = {w for w in words if w in asked or w in ctx.lemmas or covered(w, index, prefix)}
    n = len(words)
    start, in_window = index.best_window(words - asked, params.window, prefix)
    window = index.window_words(start, params.window)
    in_window += len(words & asked)
    missing_names: list[str] = []
    outside: list[str] = []
    for name in names(sentence):
        raw = fold(name).split("'")[0]
        low = lemma(raw)
        if low in asked or raw in ctx.raw or low in ctx.lemmas:
            continue
        if raw not in index.raw_words and low not in index.words:
            if not name_variant_in(raw, index.raw_words):
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
    # Words absent from the evidence (`wording.absent`), a leading "Yes,"/"No," aside.
    replied = tokens[1:] if tokens and INTERJECTION.match(sentence) else tokens
    lacking = absent_words(replied, index, prefix, q, ctx)
    window_text = index.window_text(start, params.window)
    swaps, word_swaps = slot_swaps(sentence, index, start, params.window, prefix)
    moved = moved_numbers(sentence, index, prefix, ctx.lemmas)
    swaps += tuple(x for x in moved if x not in swaps)
    swaps += tuple(x for x in name_swaps(sentence, index) if x not in swaps)
    swaps += tuple(x for x in unit_swaps(sentence, index) if x not in swaps)
    if context:  # a word the source line shows is not a swap ("HP-220" from the heading)
        swaps = tuple(x for x in swaps if not in_context(x, ctx))
        word_swaps = tuple(x for x in word_swaps if not in_context(x, ctx))
    flip = polarity_flip(
        sentence,
        words,
        index,
        (start, params.window),
        params.negation_span_cover,
        q.all_lemmas,
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
        missing_tokens=sum(t not in q.raw for t in lacking),
        absent_tokens=len(lacking),
        echo=len(words & q.lemmas) / n if n else 0.0,
        slot_swaps=swaps,
        word_swaps=word_swaps,
        scattered=scattered(sentence, index, prefix, ctx.lemmas) if q.lemmas else 0,
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
    for cached in (
        _word_sequence,
        _sentence_pieces,
        plain_numbers,
        polarity._negated,
        polarity._negated_clause,
        polarity._negated_scope,
        wording._name_runs,
        shown,
        polarity.all_lemmas,
        polarity.modals,
        polarity.item_counts,
        order._steps,
        index_evidence,
        swap.sentence_tokens,
        swap.window_tokens,
        swap.span_tokens,
        lemmas,
        overlap.content_words,
        identifiers_module._canon,
        checks._normalize,
        identifiers_module._identifiers,
    ):
        cached.cache_clear()
