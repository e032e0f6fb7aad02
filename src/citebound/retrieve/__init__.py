"""Retrieve stage: query pieces, LogAvgExp aggregation, filters and neighbours (the gate that
judges what it found is `citebound.gate`)."""

from citebound.retrieve.aggregate import logavgexp
from citebound.retrieve.filters import RowFilter, compile_filters, row_passes
from citebound.retrieve.pieces import query_pieces
from citebound.retrieve.retriever import Retriever
from citebound.retrieve.rows import to_row

__all__ = [
    "Retriever",
    "RowFilter",
    "compile_filters",
    "logavgexp",
    "query_pieces",
    "row_passes",
    "to_row",
]
