"""`citebound batch answer` over 2,000 SciFact questions: same rows with 1 and 4 partitions,
audit records = questions, throughput of local[2] against local[1], where the time goes per
row, and `batch revalidate` over the audit (0 changed verdicts expected).

    # the quiet-machine run (the figures of docs/batch.md):
    PYTHONPATH=src python benchmarks/bench_batch.py --n 2000
    # an end-to-end smoke run on a busy machine (a slice of the corpus, few questions):
    PYTHONPATH=src python benchmarks/bench_batch.py --n 40 --corpus-docs 300 --profile 10

Questions. SciFact has 1,109 claims (`queries.jsonl`), not 2,000. The first 1,109 rows are
every claim as written; the remaining N - 1,109 rows are the first claims again, re-asked as
"Is it true that <claim>?" with ids `<id>-v`. Every row is a distinct request (own id, own
text, own retrieval, own audit record), but the second-pass rows are paraphrases of real claims,
not new information needs: the set measures engine throughput, not answer quality. Rows are
sorted by id, so the second pass is interleaved with the first in every partition.

Corpus. The 5,183 abstracts are ingested once into WORK/store-<docs> with `batch ingest` on
local[2] (reused when present); `--corpus-docs K` takes the first K abstracts only (a smoke run:
most claims then refuse, so per-row costs are lower than on the full corpus).

Provider: the default extractive answerer (no LLM server), so the figures are the engine's own
cost per question: retrieval, gate, assembly, validation, audit staging, Spark overhead.

Each timing is one `answer_batch` in a fresh SparkSession on the given master, and includes
Python worker start, one store/model load per Python worker, staging and the Delta commits
(the summary's phase_seconds splits setup, Spark job and commit); the SparkSession start is
printed separately (the first one starts the JVM, later ones reuse it; a CLI user pays it once
per command). The ratio compares local[2] with local[1], same questions, same 4 partitions.
Spark sets OMP_NUM_THREADS to the task's cores in its Python workers and the embedder runs that
many forward passes at once, so local[1] uses one core and local[2] two. Exit 1 when a check
fails.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from citebound.audit.location import table_location
from citebound.batch.answer import answer_batch
from citebound.batch.revalidate import revalidate_batch
from citebound.batch.session import spark_session
from citebound.batch.tables import read_delta_arrow, without_clock_fields
from citebound.config import Config, load_config
from citebound.eval.data import dataset_dir


def questions(folder: Path, n: int) -> list[tuple[str, str]]:
    """All claims, then second-pass paraphrases up to n rows (see the module docstring)."""
    claims = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines()]
    rows = [(str(c["_id"]), str(c["text"])) for c in claims]
    for c in claims:
        if len(rows) >= n:
            break
        rows.append((f"{c['_id']}-v", "Is it true that " + str(c["text"]).rstrip(".") + "?"))
    return sorted(rows[:n])


def ensure_store(folder: Path, work: Path, docs: int | None) -> Path:
    """WORK/store-<docs>: SciFact (or its first `docs` abstracts) ingested with batch ingest."""
    from citebound.batch.ingest import ingest_batch
    from citebound.index.build import index_dir, read_manifest

    store = work / f"store-{docs or 'all'}"
    if read_manifest(index_dir(store, "scifact")) is not None:  # written last by an ingest
        return store
    corpus = folder / "corpus.jsonl"
    if docs:
        part = work / f"corpus-{docs}" / "scifact"
        part.mkdir(parents=True, exist_ok=True)
        lines = corpus.read_text(encoding="utf-8").splitlines()[:docs]
        (part / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        corpus = part / "corpus.jsonl"
    spark = spark_session("local[2]", app_name="bench-ingest")
    try:
        r = ingest_batch(spark, store, [corpus], collection="scifact", partitions=4)
    finally:
        spark.stop()
    print(
        f"batch ingest (local[2]): {r.ingest.chunks_total} chunks, "
        f"{r.embedded_on_executors} embedded on executors in {r.seconds:.0f} s",
        flush=True,
    )
    return store


def rows(uri: str) -> list[dict[str, Any]]:
    table = read_delta_arrow(table_location(uri)).to_pylist()
    return sorted(
        (without_clock_fields(r) for r in table),
        key=lambda r: r["request_id"],
    )


def profile(config: Config, qs: list[tuple[str, str]]) -> float:
    """Where a row's time goes, in one process without Spark: ms per row by stage. Returns
    the in-process ms per row (what Spark's own overhead is measured against)."""
    from citebound.batch.worker import CollectingSink
    from citebound.pipeline import Pipeline, PipelineContext

    sink = CollectingSink()
    pipe = Pipeline(PipelineContext(config, sinks_override=[sink]))
    t = time.perf_counter()
    pipe.run(qs[0][1], request_id="warm", run_id="p")  # loads store, index, models
    print(f"profile: first request (loads store, index, models) {time.perf_counter() - t:.1f} s")
    sink.take()
    stages: dict[str, list[float]] = {}
    started = time.perf_counter()
    with pipe.prefetched([q for _, q in qs]):
        prefetch = time.perf_counter() - started
        rest = {"serialize": 0.0}
        for rid, text in qs:
            state = pipe.run(text, request_id=rid, run_id="p")
            for rec in state.stage_log:
                stages.setdefault(rec.stage, []).append(rec.latency_ms)
            t = time.perf_counter()
            assert state.response is not None
            state.response.model_dump_json()
            sink.take()[0].model_dump_json()
            rest["serialize"] += time.perf_counter() - t
    total = (time.perf_counter() - started) * 1000 / len(qs)
    print(f"profile over {len(qs)} questions, in one process: {total:.1f} ms/row")
    print(f"  prefetch (bulk query embedding) {prefetch * 1000 / len(qs):7.1f} ms/row")
    for stage, ms in sorted(stages.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {stage:<28} {sum(ms) / len(qs):7.1f} ms/row (median {statistics.median(ms):.1f})")
    print(f"  {'response+audit JSON':<28} {rest['serialize'] * 1000 / len(qs):7.1f} ms/row")
    pipe.ctx.close()
    return total


def run(master: str, qs: list[tuple[str, str]], config: Any, out: Path, parts: int) -> Any:
    t = time.perf_counter()
    spark = spark_session(master, app_name=f"bench-{master}")
    # The first session of the process starts the JVM; later ones reuse it.
    print(f"{master}: SparkSession start {time.perf_counter() - t:.1f} s", flush=True)
    try:
        return answer_batch(
            spark, qs, config, table_location(out), run_id="bench", partitions=parts
        )
    finally:
        spark.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/citebound-bench-batch"))
    ap.add_argument("--n", type=int, default=2000, help="questions (default 2000)")
    ap.add_argument("--corpus-docs", type=int, default=None, help="first K abstracts only")
    ap.add_argument("--profile", type=int, default=100, help="questions profiled in-process")
    args = ap.parse_args()
    folder = dataset_dir("scifact")
    if folder is None:
        print("SKIP: ../shared/data/scifact is absent")
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    store = ensure_store(folder, args.work, args.corpus_docs)
    config = load_config(
        env={},
        overrides={"store": str(store), "collection": "scifact", "provider.name": "extractive"},
    )
    qs = questions(folder, args.n)
    second = sum(1 for rid, _ in qs if rid.endswith("-v"))
    print(f"{len(qs)} questions: {len(qs) - second} SciFact claims + {second} second-pass rows")
    in_process = profile(config, qs[: args.profile]) if args.profile else None
    stamp = time.strftime("%H%M%S")
    results: dict[str, Any] = {}
    for name, master, parts in [
        ("local[2] x4", "local[2]", 4),
        ("local[1] x4", "local[1]", 4),
        ("local[2] x1", "local[2]", 1),
    ]:
        s = run(master, qs, config, args.work / f"out-{stamp}-{master[6]}-{parts}", parts)
        results[name] = s
        print(
            f"{name}: {s.answers} answers, {s.audit_records} audit records, {s.seconds:.1f} s, "
            f"{s.answers / s.seconds:.1f} q/s, statuses {s.statuses}, phases {s.phase_seconds}",
            flush=True,
        )
    four, one = results["local[2] x4"], results["local[2] x1"]
    same_answers = rows(four.answers_uri) == rows(one.answers_uri)
    same_audit = rows(four.audit_uri) == rows(one.audit_uri)
    audit_ids = read_delta_arrow(table_location(four.audit_uri), columns=["request_id"])
    audit_n = audit_ids.num_rows
    unique = len(set(audit_ids.column("request_id").to_pylist())) == audit_n
    ratio = results["local[1] x4"].seconds / four.seconds
    print(f"identical rows 1 vs 4 partitions: answers {same_answers}, audit {same_audit}")
    print(f"audit records {audit_n} = questions {len(qs)}: {audit_n == len(qs)}; unique {unique}")
    print(f"throughput local[2] / local[1] (4 partitions each): {ratio:.2f}x (target 1.6x)")
    if in_process is not None:
        spark_ms = results["local[1] x4"].seconds * 1000 / len(qs)
        print(
            f"per row: {in_process:.1f} ms in one process, {spark_ms:.1f} ms on local[1] "
            f"(Spark, Arrow, staging, commit and model loads: {spark_ms - in_process:.1f} ms)"
        )
    spark = spark_session("local[2]", app_name="bench-revalidate")
    try:
        rv = revalidate_batch(
            spark,
            table_location(four.audit_uri),
            config,
            table_location(args.work / f"verdicts-{stamp}"),
            partitions=4,
        )
    finally:
        spark.stop()
    print(
        f"revalidate: {rv.records} records, {rv.replayable} replayable, {rv.changed} changed "
        f"verdicts, {rv.seconds:.1f} s"
    )
    ok = same_answers and same_audit and audit_n == len(qs) and unique and rv.changed == 0
    print("checks:", "all passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
