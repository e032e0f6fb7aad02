"""Policy-driven chunk selection (R2; docs/design.md#how-assembly-decides).

A pure function of (rows, filters, policy). Rows are visited in `rank_strict` order (rank asc,
then chunk_id asc); each row is kept or dropped with exactly one reason code, the first that
applies in this order:

    filter (null / mismatch) -> similarity floor -> max_chunks already full -> evidence budget
    already closed -> empty after sanitize -> structure conflict -> near-duplicate of a kept row
    -> per-knowledge_id cap -> evidence budget

Capacity drops come before the content checks, so rows that can never be selected are not
sanitized or compared (this keeps a 200-row bundle cheap).

The top-similarity gate runs first over the rows that pass the filters. Once a row fails the
evidence budget, no later row is added ("stop adding", R2.5), so pruning is always lowest-rank
first. A row larger than `max_chunk_token_ratio` of the budget is trimmed at a sentence (else
word) boundary to a prefix of its sanitized text and flagged `truncated`.

Then, up to `[retrieval] extra_chunks` rows that `max_chunks` or the per-document cap dropped
join on top (never in place of a kept row) when they are a section of the best row's document
closer to the question than the best row (`assemble/extra.py`), passing the same content
checks and the evidence budget; they take their rank's place in the evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from citebound.assemble.extra import closer_section
from citebound.contracts.enums import ReasonCode
from citebound.contracts.retrieval import FiltersApplied, GateMeasures, RetrievalRow
from citebound.gate.measures import top_coverage
from citebound.gate.rule import similarity_suffices
from citebound.policy import Policy
from citebound.prompt.evidence import render_block, render_entry, structure_conflict
from citebound.text.sanitize import safe_normalize_v1
from citebound.text.tokens import Tokenizer

_WORD = re.compile(r"\w+")

_SENTENCE_END = re.compile(r"[.?!]+(?=\s|$)|\n")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Kept:
    row: RetrievalRow
    text: str
    truncated: bool
    entry_tokens: int


@dataclass(frozen=True)
class Dropped:
    row: RetrievalRow
    code: ReasonCode
    detail: str


@dataclass
class Selection:
    kept: list[Kept] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    evidence_tokens: int = 0
    top_similarity: float | None = None
    gate_failed: bool = False


def overlap_ratio(a: frozenset[str], b: frozenset[str]) -> float:
    """|A ∩ B| / min(|A|, |B|) over lower-cased word sets: containment counts as duplicate."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def _parse_date(value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def filter_reason(
    row: RetrievalRow, filters: FiltersApplied | None
) -> tuple[ReasonCode, str] | None:
    """Under a filter, a null value never passes silently."""
    if filters is None:
        return None
    if filters.equipment_id is not None:
        if row.equipment_id is None:
            return ReasonCode.DROP_FILTER_NULL, "equipment_id is null under an equipment_id filter"
        if row.equipment_id != filters.equipment_id:
            return ReasonCode.DROP_FILTER_MISMATCH, f"equipment_id {row.equipment_id!r} != filter"
    if (
        filters.knowledge_type is not None
        and row.knowledge_type_effective != filters.knowledge_type
    ):
        return (
            ReasonCode.DROP_FILTER_MISMATCH,
            f"knowledge_type {row.knowledge_type_effective!r} != filter",
        )
    rng = filters.date_range
    if rng is not None and (rng.start is not None or rng.end is not None):
        when = _parse_date(row.event_date)
        if when is None:
            return ReasonCode.DROP_FILTER_NULL, "event_date is null or not ISO under a date filter"
        start, end = _parse_date(rng.start), _parse_date(rng.end)
        if (start is not None and when < start) or (end is not None and when > end):
            return (
                ReasonCode.DROP_FILTER_MISMATCH,
                f"event_date {row.event_date} outside the date range",
            )
    return None


def _entry(row: RetrievalRow, text: str) -> str:
    # Anchor labels are not known yet; a fixed-width placeholder keeps the count stable.
    source = row.source.reference() if row.source is not None else row.knowledge_id
    return render_entry("C00", row.chunk_id, row.knowledge_id, source, text)


def _cut_points(text: str) -> list[int]:
    sentence = sorted({m.end() for m in _SENTENCE_END.finditer(text)} - {len(text)})
    return [p for p in sentence if text[:p].strip()]


def trim_to_tokens(row: RetrievalRow, text: str, cap: int, tok: Tokenizer) -> str | None:
    """Longest sentence-boundary (else word-boundary) prefix whose entry fits `cap` tokens."""
    for points in (_cut_points(text), [m.start() for m in _SPACE.finditer(text)]):
        lo, hi, best = 0, len(points) - 1, None
        while lo <= hi:  # binary search: prefix token counts grow with length
            mid = (lo + hi) // 2
            prefix = text[: points[mid]].rstrip()
            if tok.count(_entry(row, prefix)) <= cap:
                best, lo = prefix, mid + 1
            else:
                hi = mid - 1
        if best:
            return best
    return None


def select(
    rows: list[RetrievalRow],
    filters: FiltersApplied | None,
    policy: Policy,
    tok: Tokenizer,
    question: str | None = None,
    measured: GateMeasures | None = None,
) -> Selection:
    """Select evidence rows deterministically; see the module docstring for the order.

    The best row's coverage of the question's key terms and the question's names no row holds
    (`measured` by the retrieval gate, else computed from `question` over the admissible rows)
    let a top similarity from `gate.covered_min_score` / `gate.found_min_score` pass, as the
    gate does.
    """
    ordered = sorted(rows, key=lambda r: (r.rank, r.chunk_id))
    sel = Selection()
    admissible: list[RetrievalRow] = []
    for row in ordered:
        reason = filter_reason(row, filters)
        if reason is not None:
            sel.dropped.append(Dropped(row, *reason))
        else:
            admissible.append(row)
    if admissible:
        sel.top_similarity = max(r.similarity for r in admissible)
        measures = measured or top_coverage(question, admissible)
        coverage = None if measures is None else measures.coverage
        if not similarity_suffices(
            policy.gate, sel.top_similarity, measures, policy.min_top_similarity
        ):
            sel.gate_failed = True
            detail = (
                f"top similarity {sel.top_similarity:.4f} "
                f"< min_top_similarity {policy.min_top_similarity}"
                + ("" if coverage is None else f" (best-row coverage {coverage:.2f})")
            )
            sel.dropped.extend(
                Dropped(r, ReasonCode.DROP_BELOW_TOP_SIMILARITY, detail) for r in admissible
            )
            sel.dropped.sort(key=lambda d: (d.row.rank, d.row.chunk_id))
            return sel

    chunk_cap = int(policy.max_chunk_token_ratio * policy.max_evidence_tokens)
    kept_words: list[frozenset[str]] = []
    per_knowledge: dict[str, int] = {}
    budget_closed = False
    entries: list[str] = []
    for row in admissible:

        def drop(code: ReasonCode, detail: str, row: RetrievalRow = row) -> None:
            sel.dropped.append(Dropped(row, code, detail))

        if row.similarity < policy.min_similarity_floor:
            drop(
                ReasonCode.DROP_BELOW_SIMILARITY_FLOOR,
                f"similarity {row.similarity:.4f} < floor {policy.min_similarity_floor}",
            )
            continue
        if len(sel.kept) >= policy.max_chunks:
            drop(ReasonCode.DROP_MAX_CHUNKS, f"max_chunks {policy.max_chunks} reached")
            continue
        if budget_closed:
            drop(ReasonCode.DROP_BUDGET, "evidence budget already exhausted by higher-ranked rows")
            continue
        read = _readable(row, sel.kept, kept_words, policy)
        if isinstance(read, _Refused):
            drop(read.code, read.detail)
            continue
        text, words = read
        if per_knowledge.get(row.knowledge_id, 0) >= policy.max_chunks_per_knowledge_id:
            drop(
                ReasonCode.DROP_PER_KNOWLEDGE_CAP,
                f"{policy.max_chunks_per_knowledge_id} chunks of {row.knowledge_id} already kept",
            )
            continue
        fitted = _fitted(row, text, chunk_cap, tok)
        if fitted is None:
            drop(ReasonCode.DROP_BUDGET, f"no prefix fits the per-chunk cap of {chunk_cap} tokens")
            continue
        text, truncated = fitted
        candidate = [*entries, _entry(row, text)]
        block_tokens = tok.count(render_block(candidate))
        if block_tokens > policy.max_evidence_tokens:
            budget_closed = True
            drop(
                ReasonCode.DROP_BUDGET,
                f"would make evidence {block_tokens} > {policy.max_evidence_tokens} tokens",
            )
            continue
        entries = candidate
        sel.evidence_tokens = block_tokens
        sel.kept.append(Kept(row, text, truncated, tok.count(candidate[-1])))
        kept_words.append(words)
        per_knowledge[row.knowledge_id] = per_knowledge.get(row.knowledge_id, 0) + 1
    if not budget_closed and sel.kept:
        _admit_extra(sel, admissible, kept_words, policy, tok, question)
    sel.dropped.sort(key=lambda d: (d.row.rank, d.row.chunk_id))
    return sel


_CAPPED = (ReasonCode.DROP_MAX_CHUNKS, ReasonCode.DROP_PER_KNOWLEDGE_CAP)


@dataclass(frozen=True)
class _Refused:
    """Why a row cannot be evidence whatever the caps (its drop code and detail)."""

    code: ReasonCode
    detail: str


def _readable(
    row: RetrievalRow, kept: list[Kept], kept_words: list[frozenset[str]], policy: Policy
) -> tuple[str, frozenset[str]] | _Refused:
    """The row's sanitized text and words, or why it cannot be evidence: nothing left after
    sanitizing, a line forging prompt structure, or a near-duplicate of a kept row. The checks
    every selected row passes, the extra slot's included."""
    text = safe_normalize_v1(row.chunk_text)
    if not text:
        detail = "nothing left after safe_normalize_v1"
        return _Refused(ReasonCode.DROP_EMPTY_AFTER_SANITIZE, detail)
    conflict = structure_conflict(text)
    if conflict is not None:
        detail = f"line forges prompt structure: {conflict[:60]!r}"
        return _Refused(ReasonCode.DROP_STRUCTURE_CONFLICT, detail)
    words = _words(text)
    threshold = policy.overlap_ratio_threshold
    for k, w in zip(kept, kept_words, strict=True):
        if overlap_ratio(words, w) >= threshold:
            return _Refused(ReasonCode.DROP_DUP, f"overlaps {k.row.chunk_id} >= {threshold}")
    return text, words


def _fitted(row: RetrievalRow, text: str, cap: int, tok: Tokenizer) -> tuple[str, bool] | None:
    """`text` within the per-chunk cap of `cap` tokens and whether it was trimmed; None when no
    prefix fits."""
    if tok.count(_entry(row, text)) <= cap:
        return text, False
    trimmed = trim_to_tokens(row, text, cap, tok)
    return None if trimmed is None else (trimmed, True)


def _admit_extra(
    sel: Selection,
    admissible: list[RetrievalRow],
    kept_words: list[frozenset[str]],
    policy: Policy,
    tok: Tokenizer,
    question: str | None,
) -> None:
    """Up to `policy.retrieval.extra_chunks` rows that `max_chunks` or the per-document cap
    dropped, first in rank order, join the evidence when they bring what the kept rows lack
    (`extra.closer_section`) and pass every content check a kept row passes (sanitized, no
    structure conflict, not a near-duplicate, trimmed to the per-chunk cap, within the
    evidence budget). They take their rank's place among the kept rows."""
    slots = policy.retrieval.extra_chunks
    if slots <= 0:
        return
    best = min(admissible, key=lambda r: (-r.similarity, r.rank, r.chunk_id))
    chunk_cap = int(policy.max_chunk_token_ratio * policy.max_evidence_tokens)
    for dropped in [d for d in sel.dropped if d.code in _CAPPED]:
        if slots <= 0:
            return
        row = dropped.row
        if not closer_section(question, row, best):
            continue
        read = _readable(row, sel.kept, kept_words, policy)
        fitted = None if isinstance(read, _Refused) else _fitted(row, read[0], chunk_cap, tok)
        if isinstance(read, _Refused) or fitted is None:
            continue
        words = read[1]
        text, truncated = fitted
        at = sum(1 for k in sel.kept if (k.row.rank, k.row.chunk_id) < (row.rank, row.chunk_id))
        entries = [_entry(k.row, k.text) for k in sel.kept]
        entries.insert(at, _entry(row, text))
        block_tokens = tok.count(render_block(entries))
        if block_tokens > policy.max_evidence_tokens:
            continue
        sel.kept.insert(at, Kept(row, text, truncated, tok.count(entries[at])))
        kept_words.insert(at, words)
        sel.dropped.remove(dropped)
        sel.evidence_tokens = block_tokens
        slots -= 1
