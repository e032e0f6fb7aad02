"""Metadata filters where a missing value never passes, applied before scoring.

A filter on a field only passes rows that *have* that field equal to (or, for dates, inside) the
requested value: a row with a null equipment_id never passes an equipment_id filter, and a row
with a null or unparseable event_date never passes a date range. Unset filters pass everything.
Date bounds are inclusive ISO dates (YYYY-MM-DD).

`row_passes` is the definition; `FilterColumns.rows` (dense side) and the tantivy query
(lexical side, `LexicalFilter`) are fast equivalents, and hydrated rows are re-checked with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from citebound.contracts.index import IndexRow
from citebound.contracts.retrieval import FiltersApplied
from citebound.errors import ContractError
from citebound.index.build import event_day
from citebound.index.lexical import LexicalFilter


@dataclass(frozen=True)
class RowFilter:
    """Validated filters: dates as YYYYMMDD integers."""

    equipment_id: str | None = None
    knowledge_type: str | None = None
    day_from: int | None = None
    day_to: int | None = None

    @property
    def active(self) -> bool:
        return any(
            v is not None
            for v in (self.equipment_id, self.knowledge_type, self.day_from, self.day_to)
        )

    def lexical(self) -> LexicalFilter:
        return LexicalFilter(self.equipment_id, self.knowledge_type, self.day_from, self.day_to)


def _day(value: str | None, name: str) -> int | None:
    if value is None:
        return None
    day = event_day(value)
    if day is None or len(value) != 10:
        raise ContractError(f"filter {name} '{value}' is not an ISO date (YYYY-MM-DD)")
    return day


def compile_filters(filters: FiltersApplied | None) -> RowFilter:
    """Validate `filters`; raises ContractError with an actionable message on a bad date."""
    if filters is None:
        return RowFilter()
    dr = filters.date_range
    flt = RowFilter(
        equipment_id=filters.equipment_id,
        knowledge_type=filters.knowledge_type,
        day_from=_day(dr.start if dr else None, "date_range.start"),
        day_to=_day(dr.end if dr else None, "date_range.end"),
    )
    if flt.day_from is not None and flt.day_to is not None and flt.day_from > flt.day_to:
        raise ContractError("filter date_range.start is after date_range.end")
    return flt


def row_passes(
    equipment_id: str | None, knowledge_type: str, event_date: str | None, flt: RowFilter
) -> bool:
    """The filter semantics, for one row."""
    if flt.equipment_id is not None and equipment_id != flt.equipment_id:
        return False  # includes equipment_id None: never passes an equipment filter
    if flt.knowledge_type is not None and knowledge_type != flt.knowledge_type:
        return False
    if flt.day_from is not None or flt.day_to is not None:
        day = event_day(event_date)
        if day is None:
            return False
        if flt.day_from is not None and day < flt.day_from:
            return False
        if flt.day_to is not None and day > flt.day_to:
            return False
    return True


class FilterColumns:
    """Integer-coded metadata columns, so a filter becomes a vectorized mask over all rows."""

    def __init__(self, rows: Sequence[IndexRow]) -> None:
        self._eq_codes: dict[str, int] = {}
        self._kt_codes: dict[str, int] = {}
        self.equipment = np.array(
            [
                -1 if r.equipment_id is None else self._code(self._eq_codes, r.equipment_id)
                for r in rows
            ],
            dtype=np.int32,
        )
        self.ktype = np.array(
            [self._code(self._kt_codes, r.knowledge_type) for r in rows], dtype=np.int32
        )
        self.day = np.array([event_day(r.event_date) or 0 for r in rows], dtype=np.int32)

    @staticmethod
    def _code(table: dict[str, int], value: str) -> int:
        return table.setdefault(value, len(table))

    def rows(self, flt: RowFilter) -> npt.NDArray[np.int64] | None:
        """Row numbers passing `flt` (ascending), or None when no filter is active."""
        if not flt.active:
            return None
        mask = np.ones(len(self.day), dtype=bool)
        if flt.equipment_id is not None:
            mask &= self.equipment == self._eq_codes.get(flt.equipment_id, -2)
        if flt.knowledge_type is not None:
            mask &= self.ktype == self._kt_codes.get(flt.knowledge_type, -2)
        if flt.day_from is not None or flt.day_to is not None:
            mask &= self.day > 0
            if flt.day_from is not None:
                mask &= self.day >= flt.day_from
            if flt.day_to is not None:
                mask &= self.day <= flt.day_to
        return np.flatnonzero(mask).astype(np.int64)
