"""The A3 gate's decision on the reranked rows (docs/gate.md): which rows go on to assembly and
why the others do not.

The first `top_k` reranked rows are measured against what was searched (`measures`) and judged
by the rule (`rule.apply_gate`); the rows beyond `top_k` are dropped. The rows kept gain their
neighbours (`expand`), and, when the gate passed and the semantic gate is on (`judge`), an LLM
keep/drop choice narrows them. A refusal drops every row with the gate's reason code. The stage
(`pipeline/stages/search.py`) supplies the index-bound parts (rarity, neighbours, the model
call) and records the decision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from citebound.contracts.assembly import DropRecord
from citebound.contracts.enums import ReasonCode, RetrievalStatus
from citebound.contracts.retrieval import GateTrace, RetrievalRow
from citebound.gate.measures import Rarity, top_coverage
from citebound.gate.rule import apply_gate
from citebound.policy import Policy


@dataclass(frozen=True)
class Decision:
    """What the gate decided: its trace, the rows after neighbour expansion (`expanded`), the
    rows the bundle holds (`rows`: fewer when the semantic gate dropped some), the ids kept,
    the drops with their reasons and the stage log's note."""

    trace: GateTrace
    expanded: list[RetrievalRow]
    rows: list[RetrievalRow]
    judged: bool
    kept: list[str]
    dropped: list[DropRecord]
    note: str

    @property
    def status(self) -> RetrievalStatus:
        """SUCCESS when the gate passed (and the semantic gate, when it judged, kept a row)."""
        ok = self.trace.passed and (bool(self.rows) or not self.judged)
        return RetrievalStatus.SUCCESS if ok else RetrievalStatus.NO_EVIDENCE


def decide(
    searched: str,
    ranked: Sequence[RetrievalRow],
    policy: Policy,
    idf: Callable[[], Rarity],
    expand: Callable[[list[RetrievalRow]], list[RetrievalRow]],
    judge: Callable[[list[RetrievalRow]], list[int]] | None = None,
) -> Decision:
    """The gate's decision on the `ranked` rows (reranked order). Coverage is measured against
    what was `searched`, as the reranker's promotion reads it; the words' rarity (`idf`, loaded
    only then) only when the preset's gate weighs it (its rare pass). `judge` (the semantic
    gate, None when off) returns the indices of the expanded rows to keep."""
    top_k = policy.retrieval.top_k
    rows = [r.model_copy(update={"rank": k}) for k, r in enumerate(ranked[:top_k])]
    rarity = idf() if policy.gate.rare_min_score is not None else None
    measures = top_coverage(searched, rows, rarity)
    trace = apply_gate([r.similarity for r in rows], policy.gate, measures)
    dropped = [
        DropRecord(
            chunk_id=r.chunk_id,
            rank=k,
            reason_code=ReasonCode.DROP_TOP_K,
            detail=f"beyond top_k {top_k}",
        )
        for k, r in enumerate(ranked[top_k:], start=len(rows))
    ]
    expanded = expand(rows)
    rows = expanded
    kept = [r.chunk_id for r in rows] if trace.passed else []
    judged = trace.passed and judge is not None
    if trace.passed and judge is not None:
        keep = judge(rows)
        dropped += [
            DropRecord(
                chunk_id=r.chunk_id,
                rank=r.rank,
                reason_code=ReasonCode.DROP_SEMANTIC,
                detail="the A3 semantic gate judged it unhelpful",
            )
            for i, r in enumerate(rows)
            if i not in keep
        ]
        rows = [rows[i].model_copy(update={"rank": k}) for k, i in enumerate(keep)]
        kept = [r.chunk_id for r in rows]
    if not trace.passed:
        dropped = refused(rows, trace)
    note = "gate passed" if trace.passed else f"gate refused: {trace.reason_code}"
    return Decision(trace, expanded, rows, judged, kept, dropped, note)


def refused(rows: list[RetrievalRow], trace: GateTrace) -> list[DropRecord]:
    """Every row dropped with the gate's reason code and the numbers behind the refusal."""
    return [
        DropRecord(
            chunk_id=r.chunk_id,
            rank=r.rank,
            reason_code=trace.reason_code or "GATE",
            detail=f"max similarity {trace.max_similarity} vs min_score {trace.min_score}, "
            f"{trace.chunks_above_min_score}/{trace.min_chunks} chunks",
        )
        for r in rows
    ]
