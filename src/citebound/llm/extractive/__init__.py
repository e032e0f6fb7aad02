"""The built-in extractive answerer (`extractive` provider), split by role.

`provider` (the Provider, the choice, steps), `commands` (quoted command blocks), `joining`
(markers, joining), `candidates` (what may be quoted, content terms), `scoring` (how well a
sentence answers).
"""

from __future__ import annotations

from citebound.text.terms import terms

from .candidates import paragraphs
from .joining import citation_marker, marker_pattern
from .provider import EXTRACTIVE_MODEL, ExtractiveProvider

__all__ = [
    "EXTRACTIVE_MODEL",
    "ExtractiveProvider",
    "citation_marker",
    "marker_pattern",
    "paragraphs",
    "terms",
]
