"""Retrieval latency (median, p99) at 5k, 100k and 1M chunks on this machine, and the recall of
the int8 dense scan against the exact one.

    PYTHONPATH=src python benchmarks/bench_query.py [--work DIR] [--sizes 5000,100000,1000000]

5k is the real SciFact index (built by bench_retrieval.py or here), queried with real claims.
100k and 1M use synthetic data: random unit vectors (float32) and random Zipf-distributed word
sequences for BM25, written straight into the index layout. Every query is embedded with the
real MiniLM, so "hybrid" latency includes query embedding at every size. The baseline measured
in the same run is one bare numpy mat-vec + argpartition over the same matrix (dense only).

The second table times dense search alone (`VectorIndex`) per path: the exact float32 scan and
the int8 scan with certified shortlist (forced at 100k, where retrieval itself stays exact), and
says how often the int8 path's top 20 / top 200 (N1, what retrieval asks for) are the exact
scan's, row for row, plus the mean set overlap@200. Random vectors are the hard case for any
quantization: their top scores are crowded together, unlike real embeddings.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
from _timing import Timing
from _timing import measure as timed

from citebound.contracts.documents import Chunk, Document
from citebound.contracts.index import IndexManifest
from citebound.eval.beir import load_qrels, load_queries, load_store
from citebound.eval.data import dataset_dir
from citebound.index import index_dir, update_indexes
from citebound.index.embedder import Matrix, default_embedder
from citebound.index.lexical import LexicalDoc, build_lexical
from citebound.index.vectors import VectorIndex
from citebound.policy import Policy, load_policy
from citebound.retrieve import Retriever

DIM = 384


class QueryEmbedder:
    """Real MiniLM for queries under the synthetic index's model name."""

    name = "synthetic-384"
    dim = DIM

    def embed(self, texts: Sequence[str]) -> Matrix:
        return default_embedder().embed(texts)


class SyntheticStore:
    """A read-only `Store` over generated texts (chunk i has id `syn%09d`)."""

    def __init__(self, root: Path, texts: list[str]) -> None:
        self.root = root
        self._texts = texts

    def _chunk(self, i: int) -> Chunk:
        text = self._texts[i]
        return Chunk(
            chunk_id=f"syn{i:09d}",
            knowledge_id=f"doc{i:09d}",
            text=text,
            chunk_index=0,
            char_start=0,
            char_end=len(text),
            token_count=len(text.split()),
            title=f"synthetic {i}",
        )

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        return [self._chunk(int(c[3:])) for c in chunk_ids]

    def iter_chunks(self, collection: str | None = None) -> Iterator[Chunk]:
        return (self._chunk(i) for i in range(len(self._texts)))

    def neighbors(self, chunk_id: str, n: int) -> list[Chunk]:
        return []

    def index_version(self, collection: str | None = None) -> str:
        return f"syn-{len(self._texts)}"

    def upsert_document(self, document: Document, chunks: Sequence[Chunk]) -> None:
        raise NotImplementedError

    def delete_document(self, knowledge_id: str) -> None:
        raise NotImplementedError

    def get_document(self, knowledge_id: str) -> Document | None:
        return None

    def list_documents(self, collection: str | None = None) -> list[Document]:
        return []

    def document_hash(self, collection: str, source_path: str) -> str | None:
        return None

    def collections(self) -> list[str]:
        return ["default"]


def synthetic_texts(n: int, vocab: list[str], seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    ranks = np.minimum(rng.zipf(1.3, size=n * 24), len(vocab)) - 1
    words = np.array(vocab)[ranks].reshape(n, 24)
    return [" ".join(w) for w in words]


def build_synthetic(root: Path, texts: list[str]) -> SyntheticStore:
    store = SyntheticStore(root, texts)
    directory = index_dir(root, "default")
    if (directory / "manifest.json").is_file():
        return store
    directory.mkdir(parents=True, exist_ok=True)
    n = len(texts)
    t = time.perf_counter()
    build_lexical(
        directory / "lexical",
        [LexicalDoc(i, texts[i], None, "document", None) for i in range(n)],
        "en_stem",
    )
    print(f"  tantivy index of {n} chunks: {time.perf_counter() - t:.1f}s", flush=True)
    rng = np.random.default_rng(1)
    matrix = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):  # in slices: keeps peak memory near the matrix size
        block = rng.standard_normal((min(100_000, n - start), DIM), dtype=np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        matrix[start : start + len(block)] = block
    np.save(directory / "vectors.npy", matrix)
    del matrix
    with (directory / "rows.json").open("w", encoding="utf-8") as fh:
        fh.write("[")
        fh.write(
            ",".join(
                json.dumps(
                    {
                        "chunk_id": f"syn{i:09d}",
                        "knowledge_id": f"doc{i:09d}",
                        "knowledge_type": "document",
                    }
                )
                for i in range(n)
            )
        )
        fh.write("]")
    manifest = IndexManifest(
        collection="default",
        index_version=f"idx-syn-{n}",
        store_version=store.index_version(),
        embedding_model=QueryEmbedder.name,
        embedding_dim=DIM,
        lexical_analyzer="en_stem",
        num_chunks=n,
        embedded_new=n,
        embedded_reused=0,
    )
    (directory / "manifest.json").write_text(manifest.model_dump_json(), "utf-8")
    return store


def pol(mode: str) -> Policy:
    p = load_policy("hybridrag")
    return p.model_copy(
        update={"retrieval": p.retrieval.model_copy(update={"mode": mode, "per_hit_neighbors": 0})}
    )


def measure(retriever: Retriever, queries: list[str], mode: str) -> Timing:
    policy = pol(mode)
    it = itertools.cycle(queries)
    return timed(lambda: retriever.retrieve(next(it), policy=policy), runs=len(queries), warmup=2)


def baseline(matrix: Matrix, qv: Matrix) -> Timing:
    """One bare float32 mat-vec + argpartition(200) on the same matrix."""
    it = itertools.cycle(qv)

    def once() -> object:
        s = matrix @ next(it)
        return np.argpartition(-s, 200)[:200]

    return timed(once, runs=min(50, len(qv)), warmup=2)


def rows_of(pairs: list[tuple[int, float]]) -> list[int]:
    return [r for r, _ in pairs]


def dense_rows(vectors: VectorIndex, qv: Matrix, base: Timing) -> list[str]:
    """Dense search alone: exact vs int8 timings, and the int8 path's agreement with exact."""
    n = len(vectors)
    int8 = (
        vectors if vectors.int8 is not None else VectorIndex(vectors.matrix, quantized_min_rows=1)
    )
    assert int8.int8 is not None
    same20 = same200 = near200 = 0
    overlap = raw_overlap = 0.0
    for v in qv:
        exact_pairs = vectors.exact_search(v, 200)
        exact = rows_of(exact_pairs)
        got = int8.search(v, 200)
        same200 += rows_of(got) == exact
        # Rows swapped only where the two float32 summations round a near-tie differently.
        near200 += set(rows_of(got)) == set(exact) and all(
            abs(a[1] - b[1]) <= 1e-6 for a, b in zip(got, exact_pairs, strict=True)
        )
        same20 += rows_of(int8.search(v, 20)) == exact[:20]
        overlap += len(set(rows_of(got)) & set(exact)) / 200
        approx, _ = int8.int8.approx(v)  # the int8 scores alone, before exact rescoring
        raw_overlap += len(set(np.argpartition(-approx, 200)[:200].tolist()) & set(exact)) / 200
    int8.quantized_searches = int8.widened_searches = 0
    it = itertools.cycle(qv)
    t_int8 = timed(lambda: int8.search(next(it), 200), runs=len(qv), warmup=3)
    widened = f"{int8.widened_searches}/{int8.quantized_searches}"
    t_exact = timed(lambda: vectors.exact_search(next(it), 200), runs=len(qv), warmup=3)
    m = len(qv)
    agree = (
        f"{same20}/{m} | {same200}/{m} ({near200}/{m} up to near-ties ≤ 1e-6) | "
        f"{overlap / m:.4f} | {raw_overlap / m:.4f}"
    )
    return [
        f"| {n} | exact float32 | {t_exact.median_ms:.1f} | {t_exact.p99_ms:.1f} | "
        f"{t_exact.median_ms / base.median_ms:.2f} | – | – | – | – | – |",
        f"| {n} | int8 + certified rescoring | {t_int8.median_ms:.1f} | {t_int8.p99_ms:.1f} | "
        f"{t_int8.median_ms / base.median_ms:.2f} | {agree} | {widened} |",
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--work", type=Path, default=Path("/tmp/citebound-bench"))
    ap.add_argument("--sizes", default="5000,100000,1000000")
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    data = dataset_dir("scifact")
    if data is None:
        print("skipped: ../shared/data/scifact is absent (set CITEBOUND_SHARED_DATA)")
        return 0
    all_q = load_queries(data)
    queries = [all_q[q] for q in load_qrels(data, "train") if q in all_q][: args.queries]
    vocab = sorted({w.lower() for q in all_q.values() for w in q.split() if w.isalpha()})
    qv = default_embedder().embed(queries)
    print("| chunks | mode | median ms | p99 ms | baseline median / p99 ms | median / baseline |")
    print("|---|---|---|---|---|---|")
    dense: list[str] = []
    for size in (int(s) for s in args.sizes.split(",")):
        if size <= 10_000:
            store = load_store(data, args.work / "scifact")
            update_indexes(store, "default")
            retriever = Retriever(store)
        else:
            store_s = build_synthetic(args.work / f"synthetic-{size}", synthetic_texts(size, vocab))
            retriever = Retriever(store_s, embedder=QueryEmbedder())
        t = time.perf_counter()
        ix = retriever.load("default")  # includes building the int8 copy from 200k rows on
        print(
            f"  load {ix.manifest.num_chunks} chunks: {time.perf_counter() - t:.1f}s",
            file=sys.stderr,
        )
        n = ix.manifest.num_chunks
        base = baseline(ix.vectors.matrix, qv)
        for mode in ("hybrid", "dense", "lexical"):
            t_mode = measure(retriever, queries, mode)
            print(
                f"| {n} | {mode} | {t_mode.median_ms:.1f} | {t_mode.p99_ms:.1f} | "
                f"{base.median_ms:.1f} / {base.p99_ms:.1f} | {t_mode.median_ms / base.median_ms:.2f} |",
                flush=True,
            )
        if size >= 100_000:
            dense += dense_rows(ix.vectors, qv, base)
        del retriever, ix
    if dense:
        print()
        print(
            "| chunks | dense search (k = 200) | median ms | p99 ms | median / baseline "
            "| same top 20 | same top 200 | overlap@200 | int8 scores alone overlap@200 | widened |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        print("\n".join(dense))
    return 0


if __name__ == "__main__":
    sys.exit(main())
