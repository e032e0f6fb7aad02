"""`retrieve_packs` (docs/assemble_prompt.md): ranked hits grouped into packs.

A pack is one retrieved hit plus, when neighbours are asked for, up to `per_hit_neighbors`
chunks before and after it in the same document, as extra spans of the same pack in document
order. A chunk appears in at most one pack: a neighbour that is itself a hit, or that an
earlier (higher-ranked) pack already holds, is left out.

Packs come straight from retrieval, with its ranking and filters. The retrieval gate is not
applied here (packs have none): `citebound ask` and the pipeline refuse below the gate,
`retrieve_packs` hands back what was found and its scores.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from citebound.config import load_config
from citebound.contracts.enums import RetrievalStatus
from citebound.contracts.packs import PackSpan, RetrievalPack
from citebound.contracts.retrieval import FiltersApplied, RetrievalRow
from citebound.errors import CiteboundError, ContractError
from citebound.store.sqlite import SqliteStore

if TYPE_CHECKING:
    from citebound.policy import Policy
    from citebound.retrieve.retriever import Retriever
    from citebound.store.base import Store

# Pack rank names -> the retrieval policy's index use. `tfidf` (the name in the original
# JavaScript examples) is the lexical ranking here, which is BM25.
RANK_MODES = {"hybrid": "hybrid", "bm25": "lexical", "tfidf": "lexical", "dense": "dense"}
EXPAND_KINDS = (None, "neighbors")
# expand="neighbors" without a count adds one chunk on each side of a hit.
DEFAULT_EXPAND_NEIGHBORS = 1


def _retriever(retriever: Retriever | None, store: Store | str | Path | None) -> Retriever:
    # Lazy: the retriever (tantivy, numpy) and its filters cost ~150 ms to import, paid only when
    # packs are retrieved.
    from citebound.retrieve.retriever import Retriever

    if retriever is not None:
        return retriever
    if store is None or isinstance(store, str | Path):
        path = Path(store) if store is not None else load_config().store_path
        if not path.is_dir():
            raise CiteboundError(
                f"no store at {path}: run `citebound ingest PATH --store {path}` first"
            )
        return Retriever(SqliteStore(path))
    return Retriever(store)


def _span(row_id: str, text: str, start: int | None, end: int | None, hit: bool) -> PackSpan:
    s = start or 0
    return PackSpan(chunk_id=row_id, text=text, start=s, end=max(end or s, s), hit=hit)


def retrieve_packs(
    query: str,
    limit: int = 5,
    per_hit_neighbors: int = 0,
    expand: str | None = None,
    rank: str = "hybrid",
    *,
    retriever: Retriever | None = None,
    store: Store | str | Path | None = None,
    collection: str = "default",
    filters: FiltersApplied | None = None,
    policy: Policy | None = None,
) -> list[RetrievalPack]:
    """Retrieve `limit` hits for `query` as packs, best first.

    Args:
        query: The search text.
        limit: Number of hits, hence packs (>= 1).
        per_hit_neighbors: Chunks before and after each hit to add as extra spans (>= 0).
        expand: None or `"neighbors"`; `"neighbors"` with `per_hit_neighbors=0` adds one
            neighbour on each side. Neighbours are added whenever `per_hit_neighbors > 0`.
        rank: `hybrid` (dense + BM25, default), `bm25` (alias `tfidf`) or `dense`.
        retriever: A loaded `Retriever` (reuse it across calls: loading indexes is costly).
        store: A `Store` or a store directory when no retriever is given; default: the
            configured store (`citebound.toml` / `CITEBOUND_STORE`, else `.citebound`).
        collection: Collection to search.
        filters: Equipment, type and date filters, as for `/v1/retrieve`.
        policy: Retrieval policy; default: the retriever's.

    Raises:
        ContractError: bad arguments. CiteboundError: no store, no index, failed retrieval.
    """
    if not isinstance(query, str) or not query.strip():
        raise ContractError("query must be a non-empty string")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ContractError(f"limit must be an integer >= 1, not {limit!r}")
    if isinstance(per_hit_neighbors, bool) or not isinstance(per_hit_neighbors, int):
        raise ContractError("per_hit_neighbors must be an integer")
    if per_hit_neighbors < 0:
        raise ContractError(f"per_hit_neighbors must be >= 0, not {per_hit_neighbors}")
    if expand not in EXPAND_KINDS:
        raise ContractError(f"expand must be None or 'neighbors', not {expand!r}")
    if rank not in RANK_MODES:
        raise ContractError(f"rank must be one of ['hybrid', 'bm25', 'dense'], not {rank!r}")
    neighbors = per_hit_neighbors
    if expand == "neighbors" and neighbors == 0:
        neighbors = DEFAULT_EXPAND_NEIGHBORS

    r = _retriever(retriever, store)
    base = policy or r.policy
    retrieval = base.retrieval.model_copy(
        update={"top_k": limit, "per_hit_neighbors": 0, "mode": RANK_MODES[rank]}
    )
    pol = base.evolve(retrieval=retrieval.model_dump())
    r.load(collection)  # a missing or stale index is a StoreError that says what to do
    bundle = r.retrieve(query, collection=collection, filters=filters, policy=pol)
    if bundle.retrieval_status is RetrievalStatus.FAILED:
        raise CiteboundError(bundle.error or "retrieval failed")
    return _packs(r, bundle.results, neighbors, filters)


def _packs(
    r: Retriever, rows: list[RetrievalRow], neighbors: int, filters: FiltersApplied | None
) -> list[RetrievalPack]:
    from citebound.retrieve.filters import compile_filters, row_passes

    flt = compile_filters(filters)
    used = {row.chunk_id for row in rows}
    packs: list[RetrievalPack] = []
    for order, row in enumerate(rows):
        src = row.source
        hit_index = src.chunk_index if src and src.chunk_index is not None else 0
        spans: list[tuple[int, PackSpan]] = [
            (
                hit_index,
                _span(
                    row.chunk_id,
                    row.chunk_text,
                    src.char_start if src else None,
                    src.char_end if src else None,
                    True,
                ),
            )
        ]
        for nb in r.store.neighbors(row.chunk_id, neighbors) if neighbors else []:
            if nb.chunk_id in used or nb.knowledge_id != row.knowledge_id:
                continue
            if not row_passes(nb.equipment_id, nb.knowledge_type, nb.event_date, flt):
                continue
            used.add(nb.chunk_id)
            spans.append(
                (nb.chunk_index, _span(nb.chunk_id, nb.text, nb.char_start, nb.char_end, False))
            )
        spans.sort(key=lambda s: s[0])  # document order; chunk_index is unique per document
        packs.append(
            RetrievalPack(
                id=row.chunk_id,
                doc_id=row.knowledge_id,
                heading_path=list(src.heading_path) if src else [],
                spans=[s for _, s in spans],
                score=row.similarity,
                order=order,
            )
        )
    return packs
