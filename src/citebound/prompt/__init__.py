"""R3 prompt: frozen templates, citation styles, evidence rendering and the builder."""

from citebound.prompt.anchors import CitationFormat, citation_format
from citebound.prompt.builder import BuildOutcome, build_prompt, render_evidence
from citebound.prompt.template import (
    SECTION_HEADERS,
    PromptTemplate,
    check_structure,
    load_template,
)

__all__ = [
    "SECTION_HEADERS",
    "BuildOutcome",
    "CitationFormat",
    "PromptTemplate",
    "build_prompt",
    "check_structure",
    "citation_format",
    "load_template",
    "render_evidence",
]
