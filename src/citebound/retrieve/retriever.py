"""`Retriever`: hybrid retrieval with query pieces, LogAvgExp, filters, rerank, gate, neighbours.

Models and indexes are loaded once per collection and reused across calls::

    >>> retriever = Retriever(store)                       # doctest: +SKIP
    >>> bundle = retriever.retrieve("bolt torque?", collection="default")  # doctest: +SKIP
    >>> bundle.retrieval_status, bundle.results[0].similarity             # doctest: +SKIP

Order of work for one question (docs/retrieval.md):
1. split into ≤ N0 pieces; embed all pieces in one batch;
2. per piece: exact dense top N1 and BM25 top N1, both restricted by the filters;
3. candidates = union; per piece and candidate the calibrated similarity (`index.fusion`);
4. per candidate LogAvgExp over pieces (τ), rounded to 6 decimals; order by (similarity desc,
   chunk_id asc); keep N1;
5. the reranker reorders the first N2 (passthrough by default); keep `top_k` rows;
6. the gate decides on those rows; for "What is X?" the rows that define X then move to the
   front (`promote_definitions`, retrieve/definitions.py: same rows, similarities and ties,
   so nothing the gate or assembly weighs changes); neighbours (`per_hit_neighbors`) are
   added after each hit.

Opening an index is retrieve/loader.py; bundle rows and their cache are retrieve/rows.py.
"""

from __future__ import annotations

import bisect
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citebound.contracts.enums import RetrievalStatus
from citebound.contracts.retrieval import (
    FiltersApplied,
    RetrievalBundle,
    RetrievalRow,
)
from citebound.errors import CiteboundError, StoreError
from citebound.gate.measures import top_coverage
from citebound.gate.rule import apply_gate
from citebound.index.build import index_dir, read_manifest
from citebound.index.embedder import Embedder
from citebound.index.fusion import calibrate, dense_similarity, fuse, lexical_similarity
from citebound.policy import Policy, load_policy
from citebound.rerank.base import PassthroughReranker, Reranker
from citebound.retrieve.aggregate import logavgexp
from citebound.retrieve.definitions import promote_rows
from citebound.retrieve.filters import RowFilter, compile_filters
from citebound.retrieve.loader import LoadedIndex, open_index
from citebound.retrieve.pieces import query_pieces
from citebound.retrieve.query_vectors import QueryVectorMemo
from citebound.retrieve.rows import ROW_CACHE_SIZE, chunk_passes, to_row
from citebound.store.base import Store
from citebound.store.snapshot import request_snapshot

SIMILARITY_DECIMALS = 6


@dataclass(frozen=True)
class Scored:
    """A candidate after fusion and aggregation."""

    chunk_id: str
    row: int
    similarity: float


class Retriever:
    """Loads indexes per collection once and answers `retrieve` calls.

    Args:
        store: The store holding the chunks and (under `store.root / "index"`) the indexes.
        policy: Default policy (per-call `policy=` overrides it). Default: the default preset
            (`DEFAULT_PRESET`, strict-v1).
        embedder: Use this embedder instead of loading the one named in the index manifest;
            its name must match the manifest.
        reranker: Reorders the first N2 candidates. Default: passthrough.
        row_cache_size: Hydrated rows kept per collection (0 turns the cache off).
    """

    def __init__(
        self,
        store: Store,
        *,
        policy: Policy | None = None,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        row_cache_size: int = ROW_CACHE_SIZE,
    ) -> None:
        self.store = store
        self.row_cache_size = max(0, row_cache_size)
        self.policy = policy or load_policy()
        self.reranker: Reranker = reranker or PassthroughReranker()
        self._embedder = embedder
        self._loaded: dict[str, LoadedIndex] = {}
        self._load_lock = threading.Lock()
        self._follows_store = callable(getattr(store, "published_manifest", None))
        self.query_vectors = QueryVectorMemo()

    def prefetch(self, collection: str, texts: Sequence[str]) -> int:
        """Embed query pieces ahead of their searches, in bulk (see `query_vectors`); return
        how many were embedded. Raises StoreError when `collection` has no usable index."""
        return self.query_vectors.fill(self.load(collection).embedder, texts)

    def invalidate(self, collection: str | None = None) -> None:
        """Forget loaded indexes (all, or one collection): the next call re-opens them. Each
        search already re-opens an index whose store version moved (`refresh`); this also
        frees the memory of collections no longer searched."""
        if collection is None:
            self._loaded.clear()
        else:
            self._loaded.pop(collection, None)

    def refresh(self, collection: str) -> None:
        """Forget the loaded index of `collection` when the store has moved to another
        `index_version` (an ingest by another process, or by this one): the next `load`
        opens the new index, or raises StoreError saying the index is stale (an ingest still
        running) instead of answering from chunks that are gone. One `Store.index_version`
        call (the store caches it), made once per search: any store backend plugs in."""
        if self._follows_store:
            return  # a shared store: `load` follows its published versions itself
        loaded = self._loaded.get(collection)
        if loaded is None or loaded.manifest.store_version == self.store.index_version(collection):
            return
        on_disk = read_manifest(index_dir(Path(self.store.root), collection))
        if on_disk is not None and on_disk.index_version == loaded.manifest.index_version:
            return  # no new index swapped in yet: the last complete one keeps serving
        with self._load_lock:
            if self._loaded.get(collection) is loaded:
                del self._loaded[collection]

    def load(self, collection: str) -> LoadedIndex:
        """The indexes of `collection` for the store's current version; StoreError when
        missing or stale.

        Freshness, for a store shared by several processes (`PostgresStore`, which publishes
        index manifests): every call compares the loaded index with `store.index_version`;
        when another process (an ingest, another replica) changed the collection, the index is
        rebuilt locally from the database and re-opened (docs/postgres.md). An embedded store
        keeps the loaded version until `refresh` (called before each search) or `invalidate`.
        For a shared store, until the new version can be opened (an ingest is still
        embedding), the previously loaded version keeps serving: each bundle names its
        index_version, and rows are always hydrated from the store, so a deleted chunk is never
        returned.
        """
        loaded = self._loaded.get(collection)
        if loaded is not None and not self._follows_store:
            return loaded  # embedded store: the loaded version serves until `invalidate`
        current = self.store.index_version(collection)
        if loaded is not None and loaded.manifest.store_version == current:
            return loaded
        with self._load_lock:
            loaded = self._loaded.get(collection)
            if loaded is not None and loaded.manifest.store_version == current:
                return loaded
            try:
                fresh = open_index(
                    self.store,
                    collection,
                    current,
                    embedder=self._embedder,
                    row_cache_size=self.row_cache_size,
                    last_complete=not self._follows_store,
                )
            except StoreError:
                if loaded is None:
                    raise
                return loaded  # the version in force until the new one is complete
            self._loaded[collection] = fresh
            return fresh

    def search(
        self, pieces: list[str], collection: str, flt: RowFilter, policy: Policy
    ) -> list[Scored]:
        """Steps 1-4: the fused, aggregated candidates (≤ N1) in final retrieval order."""
        self.refresh(collection)
        ix = self.load(collection)
        rp = policy.retrieval
        n1 = rp.n1_retr_max_candidates
        allowed = ix.columns.rows(flt)
        use_dense, use_lex = rp.mode != "lexical", rp.mode != "dense"
        qvecs = self.query_vectors.embed(ix.embedder, pieces) if use_dense else None
        lex_hits: list[dict[int, float]] = []
        refs: list[float] = []
        candidates: set[int] = set()
        for i, piece in enumerate(pieces):
            if qvecs is not None:
                candidates.update(r for r, _ in ix.vectors.search(qvecs[i], n1, allowed))
            if use_lex:
                hits = dict(ix.lexical.search(piece, n1, flt.lexical()))
                lex_hits.append(hits)
                refs.append(ix.lexical.reference_score(ix.lexical.terms(piece)))
                candidates.update(hits)
        if not candidates:
            return []
        rows = np.array(sorted(candidates), dtype=np.int64)
        per_piece = np.zeros((len(rows), len(pieces)), dtype=np.float64)
        cos = ix.vectors.matrix[rows] @ qvecs.T if qvecs is not None else None
        for i in range(len(pieces)):
            dense = dense_similarity(cos[:, i]) if cos is not None else np.zeros(len(rows))
            lexical = (
                lexical_similarity([lex_hits[i].get(int(r), 0.0) for r in rows], refs[i])
                if use_lex
                else np.zeros(len(rows))
            )
            per_piece[:, i] = fuse(dense, lexical, rp.lexical_weight, rp.mode)
        raw = logavgexp(per_piece, rp.logavgexp_tau, axis=1)
        agg = np.round(calibrate(raw, ix.manifest.embedding_model, rp.mode), SIMILARITY_DECIMALS)
        scored = [
            Scored(ix.chunk_ids[int(r)], int(r), float(s)) for r, s in zip(rows, agg, strict=True)
        ]
        scored.sort(key=lambda s: (-s.similarity, s.chunk_id))
        return scored[:n1]

    def rows_for(self, collection: str, scored: Sequence[Scored]) -> list[RetrievalRow]:
        """Bundle rows for `scored` (ranks 0.., their similarity and vector row), hydrated
        from the store once and then from the row cache. Ids the store no longer has are
        skipped, as `Store.get_chunks` does."""
        cache = self.load(collection).cache
        version = self.store.index_version(collection)
        with cache.lock:
            if cache.version != version:
                cache.rows.clear()
                cache.version = version
            found = {s.chunk_id: cache.rows.get(s.chunk_id) for s in scored}
            for cid, row in found.items():
                if row is not None:
                    cache.rows.move_to_end(cid)  # least recently used goes first
        missing = [cid for cid, row in found.items() if row is None]
        if missing:
            fresh = {c.chunk_id: to_row(c, 0, 0.0, None) for c in self.store.get_chunks(missing)}
            found.update(fresh)
            if cache.size:
                with cache.lock:
                    if cache.version == version:
                        cache.rows.update(fresh)
                        while len(cache.rows) > cache.size:
                            cache.rows.popitem(last=False)
        out: list[RetrievalRow] = []
        for s in scored:
            template = found.get(s.chunk_id)
            if template is not None:
                # Trusted values computed here: a copy, not a re-validation of the whole row.
                out.append(
                    template.model_copy(
                        update={"rank": len(out), "similarity": s.similarity, "faiss_id": s.row}
                    )
                )
        return out

    def retrieve(
        self,
        question: str,
        *,
        collection: str = "default",
        filters: FiltersApplied | None = None,
        policy: Policy | None = None,
        request_id: str | None = None,
        run_id: str | None = None,
    ) -> RetrievalBundle:
        """Retrieve evidence for `question`. Never raises for bad input or a missing index:
        those give a FAILED bundle whose `error` says what to do."""
        pol = policy or self.policy
        rid = request_id or uuid.uuid4().hex
        applied = (filters or FiltersApplied()).model_copy(update={"collection": collection})
        started = time.perf_counter()
        try:
            flt = compile_filters(filters)
            pieces = query_pieces(question, pol.retrieval.n0_query_pieces)
            if not pieces:
                raise CiteboundError("the question is empty")
            with request_snapshot():  # one index_version read for the three steps
                ix = self.load(collection)
                scored = self.search(pieces, collection, flt, pol)
                rows = self._rank(question, scored, flt, pol)
        except Exception as err:  # fail closed: a FAILED bundle, never a traceback
            message = (
                str(err)
                if isinstance(err, CiteboundError)
                else (f"internal error during retrieval ({type(err).__name__}: {err})")
            )
            manifest = self._loaded[collection].manifest if collection in self._loaded else None
            return RetrievalBundle(
                request_id=rid,
                user_question=question,
                retrieval_status=RetrievalStatus.FAILED,
                index_version=manifest.index_version if manifest else "none",
                embedding_model=manifest.embedding_model if manifest else "none",
                top_k=pol.retrieval.top_k,
                results=[],
                run_id=run_id,
                retrieval_latency_ms=(time.perf_counter() - started) * 1000,
                filters_applied=applied,
                error=message,
                reranker=self.reranker.name,
            )
        rarity = ix.lexical.idf if pol.gate.rare_min_score is not None else None
        gate = apply_gate(
            [r.similarity for r in rows], pol.gate, top_coverage(question, rows, rarity)
        )
        # Promotion after the gate, and it changes no gate input either (retrieve/definitions.py).
        rows, _ = promote_rows(question, rows, pol)
        rows = self._expand(rows, flt, pol.retrieval.per_hit_neighbors, ix.chunk_ids)
        return RetrievalBundle(
            request_id=rid,
            user_question=question,
            retrieval_status=RetrievalStatus.SUCCESS
            if gate.passed
            else RetrievalStatus.NO_EVIDENCE,
            index_version=ix.manifest.index_version,
            embedding_model=ix.manifest.embedding_model,
            top_k=pol.retrieval.top_k,
            results=rows,
            run_id=run_id,
            retrieval_latency_ms=(time.perf_counter() - started) * 1000,
            filters_applied=applied,
            gate=gate,
            reranker=self.reranker.name,
        )

    def _rank(
        self, question: str, scored: list[Scored], flt: RowFilter, pol: Policy
    ) -> list[RetrievalRow]:
        """Rerank the first N2, cut to top_k, hydrate from the store, re-check filters."""
        rp = pol.retrieval
        head = scored[: rp.n2_rerank_top_k]
        by_id = {s.chunk_id: s for s in scored}
        if not isinstance(self.reranker, PassthroughReranker) and head:
            chunks = {c.chunk_id: c for c in self.store.get_chunks([s.chunk_id for s in head])}
            ids = [s.chunk_id for s in head if s.chunk_id in chunks]
            order = self.reranker.rerank(question, ids, [chunks[i].text for i in ids])
            if sorted(order) != sorted(ids):
                raise CiteboundError(f"reranker {self.reranker.name} changed the candidate set")
            head = [by_id[i] for i in order]
        final = (head + scored[rp.n2_rerank_top_k :])[: rp.top_k]
        chunks = {c.chunk_id: c for c in self.store.get_chunks([s.chunk_id for s in final])}
        rows: list[RetrievalRow] = []
        for s in final:
            chunk = chunks.get(s.chunk_id)
            if chunk is None or not chunk_passes(chunk, flt):
                continue
            rows.append(to_row(chunk, len(rows), s.similarity, s.row))
        return rows

    def expand_neighbors(
        self, rows: list[RetrievalRow], collection: str, flt: RowFilter, n: int
    ) -> list[RetrievalRow]:
        """Public form of the packs' neighbour expansion, for the staged pipeline."""
        return self._expand(rows, flt, n, self.load(collection).chunk_ids)

    def _expand(
        self, rows: list[RetrievalRow], flt: RowFilter, n: int, chunk_ids: list[str]
    ) -> list[RetrievalRow]:
        """Per-hit neighbours of the packs: after each hit, its ±n same-document chunks in document
        order, with the hit's similarity; chunks already present (or later hits) are skipped."""
        if n <= 0 or not rows:
            return rows
        hit_ids = {r.chunk_id for r in rows}
        seen: set[str] = set()
        out: list[RetrievalRow] = []
        for hit in rows:
            if hit.chunk_id in seen:
                continue
            seen.add(hit.chunk_id)
            out.append(hit.model_copy(update={"rank": len(out)}))
            for nb in self.store.neighbors(hit.chunk_id, n):
                if nb.chunk_id in seen or nb.chunk_id in hit_ids or not chunk_passes(nb, flt):
                    continue
                seen.add(nb.chunk_id)
                pos = bisect.bisect_left(chunk_ids, nb.chunk_id)
                row = pos if pos < len(chunk_ids) and chunk_ids[pos] == nb.chunk_id else None
                out.append(to_row(nb, len(out), hit.similarity, row))
        return out
