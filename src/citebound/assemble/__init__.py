"""R2 answer assembly: bundle validation (V1-V5), selection, anchors, evidence block."""

from citebound.assemble.assembler import assemble, assemble_and_build
from citebound.assemble.selection import overlap_ratio
from citebound.assemble.validation import parse_bundle

__all__ = ["assemble", "assemble_and_build", "overlap_ratio", "parse_bundle"]
