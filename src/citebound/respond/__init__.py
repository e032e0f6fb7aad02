"""Response packaging (R6): the public JSON response and its text rendering for people."""

from citebound.respond.package import (
    Packaged,
    package_answer,
    package_failure,
    package_response,
    package_without_generation,
    public_citation,
    token_usage,
)
from citebound.respond.render import LOW_CONFIDENCE_HEADER, render_text, source_line

__all__ = [
    "LOW_CONFIDENCE_HEADER",
    "Packaged",
    "package_answer",
    "package_failure",
    "package_response",
    "package_without_generation",
    "public_citation",
    "render_text",
    "source_line",
    "token_usage",
]
