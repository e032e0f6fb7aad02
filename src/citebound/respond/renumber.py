"""Anchors as the user sees them: numbered in the order the answer cites them (issue #15).

The prompt labels the selected evidence in rank order (`C0`, `C1`, ...) before any answer
exists, and the model cites a subset in any order, so a validated answer may read
`... [C2] ... [C0]`. Renumbering is a presentation step of packaging (R6), after validation:

1. `renumbering`: a bijection over the bundle's anchors. The cited anchors, in first-citation
   order (`validated_citations`), take the style's first labels (`C0`, `C1`, ...); the uncited
   ones follow in rank order, so the shown labels are the same set as the prompt's.
2. `relabel_text`: every exact marker of the style is renamed in one pass (so `C0 -> C1` and
   `C1 -> C0` cannot chain). Near misses and plain words are untouched: the validator already
   passed them, and renaming only the exact markers keeps that true.
3. The relabelled text is validated again against the relabelled evidence (the same texts
   under the new labels). The result must equal the first verdict with the text and citations
   renamed, field for field; anything else raises `RenumberError`, which packaging turns into
   FAILED (INTERNAL_ERROR): no caller gets text the validator has not passed.

The validator never edits text; this step never changes a verdict. The audit keeps the raw
model text with the prompt's anchors and records the shown labels (`display_anchors`), and
`audit replay` derives the same renumbering from the re-validated citations.

    >>> from citebound.contracts.enums import CitationStyle
    >>> m = renumbering(["C2", "C0"], ["C0", "C1", "C2"], CitationStyle.C)
    >>> m
    {'C2': 'C0', 'C0': 'C1', 'C1': 'C2'}
    >>> relabel_text("Seal first [C2][C0]. Then torque [C0].", m, CitationStyle.C)
    'Seal first [C0][C1]. Then torque [C1].'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from citebound.contracts.assembly import AnswerBundle, SelectedEvidence
from citebound.contracts.enums import CitationStyle, GenerationStatus, ValidationStatus
from citebound.contracts.execution import ValidationResult
from citebound.policy import Policy
from citebound.prompt.anchors import citation_format
from citebound.validate.validator import validate_view
from citebound.validate.view import EvidenceView


class RenumberError(Exception):
    """The relabelled answer did not validate exactly as the answer it was derived from."""


@dataclass(frozen=True)
class Renumbered:
    """An answer as shown: text and citations under the shown labels.

    `mapping` is the whole bijection (prompt anchor -> shown anchor, every anchor of the
    bundle); `shown` keeps the cited anchors only, in first-citation order (what the audit
    records). Both are empty when there is nothing to renumber (refusal, failure).
    """

    text: str
    citations: tuple[str, ...]
    mapping: Mapping[str, str]
    shown: Mapping[str, str]


def renumbering(
    cited: Sequence[str], anchors: Sequence[str], style: CitationStyle | str
) -> dict[str, str]:
    """prompt anchor -> shown anchor: cited ones in first-citation order, then the others in
    their prompt (rank) order, labelled from the style's first label without gaps.

    `cited` anchors missing from `anchors` are ignored (a PASSED answer has none)."""
    fmt = citation_format(style)
    known = set(anchors)
    first = [a for a in dict.fromkeys(cited) if a in known]
    taken = set(first)
    order = first + [a for a in anchors if a not in taken]
    return {a: fmt.label(i) for i, a in enumerate(order)}


def shown_anchors(
    cited: Sequence[str], anchors: Sequence[str], style: CitationStyle | str
) -> dict[str, str]:
    """The part of `renumbering` a reader sees: cited anchors only, first-citation order."""
    full = renumbering(cited, anchors, style)
    return {a: full[a] for a in dict.fromkeys(cited) if a in full}


def relabel_text(text: str, mapping: Mapping[str, str], style: CitationStyle | str) -> str:
    """`text` with every exact marker `[label]` of `style` renamed by `mapping` (one pass;
    labels outside `mapping` stay as they are)."""
    fmt = citation_format(style)

    def rename(m: re.Match[str]) -> str:
        return fmt.marker(mapping.get(m.group(1), m.group(1)))

    return re.sub(fmt.marker_regex, rename, text)


def relabel_view(view: EvidenceView, mapping: Mapping[str, str]) -> EvidenceView:
    """`view` with its anchors renamed by `mapping` (same texts, same order, same chunks)."""
    return replace(
        view,
        anchors=tuple(mapping.get(a, a) for a in view.anchors),
        texts={mapping.get(a, a): t for a, t in view.texts.items()},
        contexts={mapping.get(a, a): c for a, c in view.contexts.items()},
    )


def _nothing_to_renumber(validation: ValidationResult) -> bool:
    return (
        validation.validation_status is not ValidationStatus.PASSED
        or validation.generation_status is not GenerationStatus.OK
    )


def renumber(view: EvidenceView, validation: ValidationResult, policy: Policy) -> Renumbered:
    """The answer of `validation` (validated against `view` under `policy`) as shown.

    Raises:
        RenumberError: the relabelled text does not validate exactly like the original
            (fail closed; never expected for a bijective rename).
    """
    text = validation.validated_answer_text
    if _nothing_to_renumber(validation):
        return Renumbered(text, tuple(validation.validated_citations), {}, {})
    cited = validation.validated_citations
    unknown = [a for a in cited if a not in view.texts]
    if unknown:  # a passed answer cites only the evidence; this result is not for this view
        raise RenumberError(f"validated citations {unknown} are not anchors of the evidence")
    mapping = renumbering(cited, view.anchors, view.citation_style)
    shown = {a: mapping[a] for a in cited}
    citations = tuple(mapping[a] for a in cited)
    if all(k == v for k, v in mapping.items()):
        # Identity: the same text against the same view; the verdict is the one we have.
        return Renumbered(text, citations, mapping, shown)
    new_text = relabel_text(text, mapping, view.citation_style)
    again = validate_view(relabel_view(view, mapping), new_text, policy)
    expected = validation.model_copy(
        update={"validated_answer_text": new_text, "validated_citations": list(citations)}
    )
    if again != expected:
        differs = sorted(
            name
            for name in ValidationResult.model_fields
            if getattr(again, name) != getattr(expected, name)
        )
        raise RenumberError(f"the renumbered answer validated differently ({', '.join(differs)})")
    return Renumbered(new_text, citations, mapping, shown)


def shown_of(bundle: AnswerBundle, validation: ValidationResult) -> dict[str, str]:
    """`shown_anchors` of a PASSED, OK answer packaged from `bundle` ({} for anything else)."""
    if _nothing_to_renumber(validation):
        return {}
    return shown_anchors(
        validation.validated_citations, bundle.allowed_anchors, bundle.citation_style
    )


def evidence_by_shown(
    bundle: AnswerBundle | None, shown: Mapping[str, str] | None
) -> dict[str, SelectedEvidence]:
    """shown anchor -> selected evidence, in first-citation order, for `shown` (prompt anchor
    -> shown anchor): how views join public citations (shown labels) to the bundle."""
    if bundle is None or not shown:
        return {}
    by_anchor = {e.citation_anchor: e for e in bundle.selected_evidence}
    return {label: by_anchor[a] for a, label in shown.items() if a in by_anchor}


def numbering_problem(text: str, sources: Sequence[str], style: CitationStyle | str) -> str | None:
    """Why the anchors of a shown answer are not numbered in citation order, or None.

    Shown anchors must read, in order of first appearance, as the style's first labels with no
    gap (`C0`, `C1`, ...; `[1]`, `[2]`, ... for the 1-based styles), and the sources must be
    listed in that same order (`sources`: the public citations' anchors).

    >>> numbering_problem("A [C0]. B [C1][C0].", ["C0", "C1"], "C")
    >>> numbering_problem("A [C0]. B [C2].", ["C0", "C2"], "C")
    'anchors cited in the order C0, C2; expected C0, C1'
    """
    fmt = citation_format(style)
    cited = list(dict.fromkeys(m.group(1) for m in re.finditer(fmt.marker_regex, text)))
    expected = [fmt.label(i) for i in range(len(cited))]
    if cited != expected:
        return f"anchors cited in the order {', '.join(cited)}; expected {', '.join(expected)}"
    if list(sources) != cited:
        return f"sources listed as {', '.join(sources)}; expected {', '.join(cited)}"
    return None
