"""Post-generation validation (R5): pass or fail a model answer with a reason code, never edit it.

>>> from citebound.validate import validate_answer, validate_text, VALIDATOR_VERSION
"""

from citebound.text.identifiers import identifiers
from citebound.text.overlap import lexical_support
from citebound.validate.analysis import is_factual
from citebound.validate.markers import marker_pattern, scan_markers
from citebound.validate.validator import (
    PRIORITY,
    VALIDATOR_VERSION,
    validate_answer,
    validate_text,
    validate_view,
)
from citebound.validate.view import EvidenceView

__all__ = [
    "PRIORITY",
    "VALIDATOR_VERSION",
    "EvidenceView",
    "identifiers",
    "is_factual",
    "lexical_support",
    "marker_pattern",
    "scan_markers",
    "validate_answer",
    "validate_text",
    "validate_view",
]
