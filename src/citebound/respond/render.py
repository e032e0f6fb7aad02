"""Text rendering of a PublicResponse for people, in this shape::

    Answer:
    Torque the bolts to 40 Nm [C0].

    Sources:
    - [C0] manual.pdf, Pump > Maintenance, p. 4 (docs/manual.pdf)

Low confidence answers (docs/validation.md) use the header
`Answer (LOW CONFIDENCE — limited source coverage):`. An OK answer's confidence level (from
the support score of its weakest sentence) follows the answer as `Confidence: high`. Scores
appear as `(score: 0.83)` only when asked for *and* the AnswerBundle is given: the JSON
response never carries scores. The response's anchors are the shown ones (first-citation
order, `respond/renumber.py`); with the ValidationResult given, scores are joined through the
same renumbering, without it by the bundle's (prompt) anchors.
"""

from __future__ import annotations

from citebound.contracts.assembly import AnswerBundle
from citebound.contracts.enums import PublicStatus
from citebound.contracts.execution import ValidationResult
from citebound.contracts.public import PublicCitation, PublicResponse
from citebound.contracts.retrieval import display_path, page_label
from citebound.respond.renumber import evidence_by_shown, shown_of

LOW_CONFIDENCE_HEADER = "Answer (LOW CONFIDENCE — limited source coverage):"


def source_line(citation: PublicCitation, score: float | None = None) -> str:
    """`- [C0] Document, Heading > Sub, p. 4 (docs/file.pdf)` (+ ` (score: 0.83)` if given)."""
    parts: list[str] = []
    if citation.document:
        parts.append(citation.document)
    path = display_path(citation.document, citation.heading_path)
    if path:
        parts.append(" > ".join(path))
    if citation.page is not None:
        parts.append(page_label(citation.source_path, citation.page))
    if citation.ocr:
        parts.append("OCR text")
    where = ", ".join(parts) if parts else citation.source_reference
    line = f"- [{citation.anchor}] {where}"
    if citation.source_path and citation.source_path != citation.document:
        line += f" ({citation.source_path})"
    if score is not None:
        line += f" (score: {score:.2f})"
    return line


def render_text(
    response: PublicResponse,
    *,
    bundle: AnswerBundle | None = None,
    validation: ValidationResult | None = None,
    show_scores: bool = False,
) -> str:
    """Human text of `response`; `show_scores` needs `bundle` (scores are internal) and the
    `validation` it was packaged from (which gives the shown anchors)."""
    if response.status is PublicStatus.FAILED:
        reason = response.failure_reason or "UNKNOWN"
        return f"Answer:\n(no validated answer: FAILED, reason {reason})\n"
    header = LOW_CONFIDENCE_HEADER if response.low_confidence else "Answer:"
    lines = [header, response.answer.strip()]
    if response.confidence is not None:
        lines += ["", f"Confidence: {response.confidence} (weakest sentence's support)"]
    if response.citations:
        scores: dict[str, float] = {}
        if show_scores and bundle is not None and validation is not None:
            # Keyed by the shown anchors: the prompt's may have been renumbered.
            shown = evidence_by_shown(bundle, shown_of(bundle, validation))
            scores = {a: e.similarity_score for a, e in shown.items()}
        lines += ["", "Sources:"]
        lines += [source_line(c, scores.get(c.anchor)) for c in response.citations]
    return "\n".join(lines) + "\n"
