"""The built-in extractive answerer (`extractive` provider), split by role.

`provider` (the Provider and the choice), `candidates` (what may be quoted), `scoring` (how
well a sentence answers), `compose` (steps, markers, joining), `words` (content terms).
"""

from __future__ import annotations

from .candidates import paragraphs
from .compose import citation_marker, marker_pattern
from .provider import EXTRACTIVE_MODEL, ExtractiveProvider
from .words import STOPWORDS, terms

__all__ = [
    "EXTRACTIVE_MODEL",
    "STOPWORDS",
    "ExtractiveProvider",
    "citation_marker",
    "marker_pattern",
    "paragraphs",
    "terms",
]
