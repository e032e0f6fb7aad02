"""`EvidenceView`: the part of an AnswerBundle the validator reads (also rebuilt for replay)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from citebound.contracts.assembly import AnswerBundle
from citebound.contracts.enums import AssemblyStatus, CitationStyle
from citebound.prompt.evidence import safe_meta
from citebound.validate.markers import marker_pattern


@dataclass(frozen=True)
class EvidenceView:
    """What the validator needs from an AnswerBundle (or from an audit record, for replay)."""

    request_id: str
    assembly_status: AssemblyStatus
    citation_style: CitationStyle
    anchors: tuple[str, ...]
    texts: Mapping[str, str]
    chunk_ids: tuple[str, ...] = ()
    question: str = ""
    evidence_chars: int = 0
    assembly_reason: str | None = None
    consistency_errors: tuple[str, ...] = field(default=())
    # anchor -> the source line the prompt showed above that evidence ("HP-220 Mechanical Seal
    # Replacement Procedure > 4 Replacement"). The model read it, so the support check counts
    # its words as known (not as evidence sentences): "The HP-220 impeller bolts ..." over a
    # chunk that says only "the impeller bolts" names the pump from its heading.
    contexts: Mapping[str, str] = field(default_factory=dict)

    def cited_text(self, anchors: Iterable[str]) -> str:
        """The evidence texts the `anchors` cite, joined by newlines."""
        return "\n".join(self.texts.get(anchor, "") for anchor in anchors)

    def cited_context(self, anchors: Iterable[str]) -> str:
        """The source lines above the evidence the `anchors` cite, joined by newlines."""
        return "\n".join(c for c in (self.contexts.get(a, "") for a in anchors) if c)

    @classmethod
    def from_bundle(cls, bundle: AnswerBundle) -> EvidenceView:
        """Project an AnswerBundle; anchor/style inconsistencies become CITATION_MISMATCH."""
        anchors = tuple(e.citation_anchor for e in bundle.selected_evidence)
        errors: list[str] = []
        exact = re.compile(marker_pattern(bundle.citation_style))
        bad = [a for a in anchors if not exact.fullmatch(f"[{a}]")]
        if bad:
            errors.append(f"anchors {bad} do not match citation style {bundle.citation_style}")
        if len(set(anchors)) != len(anchors):
            errors.append("duplicate anchors in the bundle")
        if bundle.anchor_map != {e.citation_anchor: e.chunk_id for e in bundle.selected_evidence}:
            errors.append("anchor_map disagrees with selected_evidence")
        return cls(
            request_id=bundle.request_id,
            assembly_status=bundle.assembly_status,
            citation_style=bundle.citation_style,
            anchors=anchors,
            texts={e.citation_anchor: e.sanitized_text for e in bundle.selected_evidence},
            chunk_ids=tuple(e.chunk_id for e in bundle.selected_evidence),
            question=bundle.user_question,
            evidence_chars=len(bundle.evidence_block_text)
            or sum(len(e.sanitized_text) for e in bundle.selected_evidence),
            assembly_reason=bundle.failure_reason,
            consistency_errors=tuple(errors),
            contexts={
                e.citation_anchor: safe_meta(e.source_reference)
                for e in bundle.selected_evidence
                if e.source is not None
            },
        )

    @classmethod
    def single(cls, anchor: str, text: str, style: CitationStyle = CitationStyle.C) -> EvidenceView:
        """A one-chunk view, handy in tests and examples."""
        return cls("req", AssemblyStatus.OK, style, (anchor,), {anchor: text}, (), "", len(text))
