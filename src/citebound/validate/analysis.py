"""Sentence-level analysis of a non-refusal answer: citations, grounding, new facts, support.

Definitions (documented in docs/validation.md):

- A sentence comes from `split_sentences(text, marker=<style marker>)`.
- A sentence is **non-factual** when, without its markers and list bullets, it has no letter or
  digit (`[C0]`, `---`, `…`), or it is a short label ending in `:` (≤ 6 words, no digit,
  e.g. `Steps:`). Every other sentence is factual and must carry a citation.
- A sentence is **cited** when it holds at least one exact marker (valid or not; invalid ones
  fail on their own as INVALID_CITATION_REFERENCE).
- **attribution_coverage** = cited factual sentences ÷ factual sentences. Uncited sentences fail
  (UNCITED_FACTUAL_STATEMENT) when coverage < `policy.validation.min_attribution_coverage`
  (1.0 in strict-v1: any uncited sentence fails). Tolerated ones set `low_confidence`.
- **support** of a cited factual sentence = `support.sentence_support` against the text of the
  anchors it cites: a fitted logistic rule over coverage, best-window coverage, missing words,
  names and numbers (1 for a quotation, 0 on a negation or antonym flip). Below
  `policy.validation.min_sentence_support` the sentence is
  unsupported (LOW_SUPPORT, or `low_confidence` with `low_support_action = "low_confidence"`);
  its index, score, reason and best evidence span go to `unsupported` (audit only).
- **suspicious_new_ids**: identifiers of a cited sentence found neither in its cited evidence
  nor in the user question.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from citebound.contracts.enums import ReasonCode
from citebound.contracts.execution import UnsupportedSentence
from citebound.policy import Policy
from citebound.text.identifiers import identifiers, present_in
from citebound.text.injection import injection_cue
from citebound.text.sentences import split_sentences
from citebound.validate import checks
from citebound.validate.markers import marker_pattern, scan_markers, strip_markers
from citebound.validate.nli import load_nli
from citebound.validate.support import SupportFeatures, SupportParams, sentence_support
from citebound.validate.view import EvidenceView

_ALNUM = re.compile(r"[^\W_]")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)]|#+)\s+")
_EPS = 1e-9


@dataclass
class Analysis:
    """Everything measured on one answer; `problems` maps reason codes to explanations."""

    citations: list[str] = field(default_factory=list)
    citation_count: int = 0
    invalid: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    refusal_like: bool = False
    length_flag: bool = False
    factual: int = 0
    cited: int = 0
    uncited: int = 0
    suspicious: list[str] = field(default_factory=list)
    support: list[float] = field(default_factory=list)
    unsupported: list[UnsupportedSentence] = field(default_factory=list)
    low_confidence: bool = False
    problems: dict[ReasonCode, str] = field(default_factory=dict)
    # (factual sentence index, code) of every sentence-level rule a sentence broke, whether or
    # not the policy fails it (validate/failures.py keeps the ones that failed).
    sentence_codes: list[tuple[int, ReasonCode]] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        return self.cited / self.factual if self.factual else 0.0

    def flag(self, code: ReasonCode, detail: str) -> None:
        """Record the first explanation of each reason code."""
        self.problems.setdefault(code, detail)


def is_factual(sentence_without_markers: str) -> bool:
    """Whether a sentence (markers removed) makes a claim that needs a citation."""
    body = _BULLET.sub("", sentence_without_markers).strip()
    if not _ALNUM.search(body):
        return False
    is_label = body.endswith(":") and len(body.split()) <= 6
    return not (is_label and not any(ch.isdigit() for ch in body))


def _why(f: SupportFeatures | None, coverage: float) -> str:
    if f is None:
        return f"{coverage:.0%} of its content words in the cited evidence"
    if f.polarity_flip:
        return f.polarity_flip
    parts = [
        f"{f.coverage:.0%} of its content words in the cited evidence, "
        f"{f.window_coverage:.0%} in the best passage"
    ]
    if f.missing_names:
        parts.append(f"names/number words absent: {list(f.missing_names)[:5]}")
    if f.names_outside_window:
        parts.append(f"names/numbers from another passage: {list(f.names_outside_window)[:5]}")
    if f.missing_numbers:
        parts.append(f"numbers/codes absent: {list(f.missing_numbers)[:5]}")
    if f.missing_tokens:
        parts.append(f"{f.missing_tokens} word(s) in neither the evidence nor the question")
    if f.slot_swaps or f.word_swaps:
        # The sentence's words only: the evidence token stays in the audit's best span.
        swapped = [s.split(">")[0] for s in f.slot_swaps + f.word_swaps]
        parts.append(f"word(s) in place of another in the evidence: {swapped[:5]}")
    if f.echo and f.scattered:
        parts.append(
            f"restates the question ({f.echo:.0%}) relating {f.scattered} word(s) the evidence "
            "has only in other sentences"
        )
    if f.echo and f.absent_tokens:
        parts.append(
            f"restates the question ({f.echo:.0%}) with {f.absent_tokens} word(s) the "
            "evidence lacks"
        )
    return "; ".join(parts)


def support_params(policy: Policy) -> SupportParams:
    """The support rule's knobs from `policy.validation`."""
    vp = policy.validation
    return SupportParams(
        min_sentence_support=vp.min_sentence_support,
        negation_span_cover=vp.negation_span_cover,
        weights=vp.support_weights,
        window=vp.support_window,
        prefix=vp.support_prefix,
        nli_weight=vp.nli_weight,
    )


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _factual_sentences(
    view: EvidenceView, text: str
) -> Iterator[tuple[str, str, list[str], list[str], str]]:
    """(sentence, body without markers, markers, valid cited anchors, their joined text) of
    every factual sentence of `text`, in order."""
    style = view.citation_style
    allowed = set(view.anchors)
    marker = marker_pattern(style)
    for sentence in split_sentences(text, marker=marker):
        body = strip_markers(sentence, style)
        if not is_factual(body):
            continue
        labels = re.findall(marker, sentence)
        cited = _unique([x[1:-1] for x in labels if x[1:-1] in allowed])
        yield sentence, body, labels, cited, view.cited_text(cited)


def cited_sentences(view: EvidenceView, text: str) -> list[tuple[str, str]]:
    """(body, cited evidence text) of every factual sentence citing a valid anchor: what the
    support check scores (used to fit its weights, benchmarks/fit_support.py)."""
    return [(body, ev) for _, body, _, cited, ev in _factual_sentences(view, text) if cited]


def analyse(view: EvidenceView, text: str, policy: Policy, refusals: tuple[str, ...]) -> Analysis:
    """Measure `text` against `view`; fill `problems` with every rule it breaks."""
    a = Analysis()
    style = view.citation_style
    allowed = set(view.anchors)

    if checks.looks_like_refusal(text, refusals):
        a.refusal_like = True
        a.flag(
            ReasonCode.INVALID_REFUSAL_FORMAT,
            "the answer looks like a refusal but is not exactly the policy refusal string "
            f"{refusals[0]!r} on its own",
        )

    scan = scan_markers(text, style, view.anchors)
    a.citation_count = len(scan.labels)
    a.malformed = list(scan.malformed)
    if a.malformed:
        a.flag(
            ReasonCode.MALFORMED_CITATION,
            f"malformed citation markers {_unique(a.malformed)}; use exactly "
            f"{', '.join('[' + x + ']' for x in view.anchors[:3])}",
        )
    a.invalid = [label for label in scan.labels if label not in allowed]
    if a.invalid:
        a.flag(
            ReasonCode.INVALID_CITATION_REFERENCE,
            f"cited anchors {_unique(a.invalid)} are not in the evidence "
            f"(allowed: {', '.join(view.anchors) or 'none'})",
        )
    a.citations = _unique([label for label in scan.labels if label in allowed])
    if view.consistency_errors:
        a.flag(ReasonCode.CITATION_MISMATCH, "; ".join(view.consistency_errors))

    leaks = checks.find_leaks(text, view.chunk_ids)
    if leaks:
        a.flag(ReasonCode.INTERNAL_ID_LEAK, f"evidence metadata in the answer: {_unique(leaks)}")
    meta = checks.find_meta(text, "\n".join(view.texts.values()))
    if meta:
        a.flag(ReasonCode.META_COMMENTARY, f"meta commentary in the answer: {meta}")
    cue = injection_cue(text)
    if cue is not None:
        a.flag(
            ReasonCode.INJECTION_ECHO,
            f"the answer repeats an instruction aimed at a model: {cue!r}",
        )

    vp = policy.validation
    params = support_params(policy)
    nli = load_nli(vp.nli_model_path).entailment_probability if vp.nli_model_path else None
    for sentence, body, labels, cited, cited_text in _factual_sentences(view, text):
        a.factual += 1
        if checks.mentions_evidence_word(body, cited_text):
            a.flag(
                ReasonCode.META_COMMENTARY,
                f"the word 'evidence' refers to the system in: {sentence[:80]!r}",
            )
        index = a.factual - 1
        if not labels:
            a.uncited += 1
            a.sentence_codes.append((index, ReasonCode.UNCITED_FACTUAL_STATEMENT))
            continue
        a.cited += 1
        context = view.cited_context(cited)
        if len(cited) < len(_unique([x[1:-1] for x in labels])):
            a.sentence_codes.append((index, ReasonCode.INVALID_CITATION_REFERENCE))
        new_ids = tuple(
            ident
            for ident in identifiers(body)
            if not (
                present_in(ident, cited_text)
                or present_in(ident, view.question)
                or (context and present_in(ident, context))
            )
        )
        if new_ids:
            a.sentence_codes.append((index, ReasonCode.UNSUPPORTED_NEW_FACT))
        a.suspicious.extend(i for i in new_ids if i not in a.suspicious)
        if not cited:
            a.support.append(0.0)
            if vp.min_sentence_support > _EPS:
                a.sentence_codes.append((index, ReasonCode.LOW_SUPPORT))
            continue
        s = sentence_support(body, cited_text, params, view.question, nli, new_ids, context)
        a.support.append(s.score)
        if not s.supported(vp.min_sentence_support):
            a.sentence_codes.append((index, ReasonCode.LOW_SUPPORT))
            a.unsupported.append(
                UnsupportedSentence(
                    index=a.factual - 1,
                    score=s.score,
                    coverage=s.coverage,
                    reason=_why(s.features, s.coverage),
                    best_evidence_span=s.best_span,
                )
            )

    if a.factual == 0:
        a.flag(ReasonCode.EMPTY_ANSWER, "the answer has no sentence with words or numbers")
    if a.uncited:
        if a.coverage + _EPS < vp.min_attribution_coverage:
            a.flag(
                ReasonCode.UNCITED_FACTUAL_STATEMENT,
                f"{a.uncited} factual sentence(s) without a citation "
                f"(coverage {a.coverage:.2f} < {vp.min_attribution_coverage:.2f})",
            )
        else:
            a.low_confidence = True
    if a.suspicious and vp.new_facts == "fail":
        a.flag(
            ReasonCode.UNSUPPORTED_NEW_FACT,
            f"numbers/dates/codes not in the cited evidence: {a.suspicious}",
        )
    if a.support and min(a.support) + _EPS < vp.min_sentence_support:
        if vp.low_support_action == "fail":
            weak = ", ".join(
                f"#{u.index + 1} ({u.score:.2f}: {u.reason})" for u in a.unsupported[:5]
            )
            a.flag(
                ReasonCode.LOW_SUPPORT,
                f"sentence(s) {weak or '?'} not supported by the evidence they cite "
                f"(support < {vp.min_sentence_support:.2f})",
            )
        else:
            a.low_confidence = True

    evidence_chars = view.evidence_chars
    a.length_flag = len(text) > vp.length_ratio_limit * evidence_chars
    # Citation consistency (R5): unique, first-use order, every listed anchor used.
    if len(set(a.citations)) != len(a.citations) or any(f"[{c}]" not in text for c in a.citations):
        a.flag(ReasonCode.CITATION_MISMATCH, "validated citations are not unique or not used")
    return a
