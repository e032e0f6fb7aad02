"""`citebound batch answer` over 2,000 SciFact claims: same rows with 1 and 4 partitions, audit
records = questions, throughput of local[2] against local[1], and `batch revalidate` over the
audit (0 changed verdicts expected with the same validator).

    PYTHONPATH=src python benchmarks/bench_batch.py [--work DIR] [--n 2000]

The SciFact corpus (5,183 abstracts) is ingested once into WORK/store (`citebound ingest`,
reused when present). The shared copy holds 1,109 claims; to reach N questions the remaining
rows re-ask claims as "Is it true that <claim>?" (ids `<id>-v`), so every row is a distinct
request. Provider: the default extractive answerer (no LLM server): the figures are the
engine's own cost per question: retrieval, gate, assembly, validation, audit, Spark overhead.

Each timing is one run of `answer_batch` in a fresh SparkSession on the given master, and
includes Python worker start and one store/model load per worker; the JVM start of each
session is printed separately (a CLI user pays both). The baseline for the ratio is local[1] measured in the same process, same questions,
same 4 partitions.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from citebound.audit.location import table_location
from citebound.batch.answer import answer_batch
from citebound.batch.revalidate import revalidate_batch
from citebound.batch.session import spark_session
from citebound.batch.tables import read_delta_arrow
from citebound.config import load_config
from citebound.eval.data import dataset_dir

CLOCK = {"latency_ms", "timestamp_utc", "llm_latency_ms", "record_hash"}


def questions(folder: Path, n: int) -> list[tuple[str, str]]:
    claims = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines()]
    rows = [(str(c["_id"]), c["text"]) for c in claims]
    for c in claims:
        if len(rows) >= n:
            break
        rows.append((f"{c['_id']}-v", "Is it true that " + c["text"].rstrip(".") + "?"))
    return sorted(rows[:n])


def ensure_store(folder: Path, store: Path) -> None:
    from citebound.index.build import index_dir, read_manifest

    if read_manifest(index_dir(store, "scifact")) is not None:  # written last by an ingest
        return
    from citebound.ingest import ingest_paths
    from citebound.store.sqlite import SqliteStore

    t = time.perf_counter()
    with SqliteStore(store) as s:
        r = ingest_paths(s, [folder / "corpus.jsonl"], collection="scifact", progress=False)
    print(f"ingested SciFact: {r.chunks_total} chunks in {time.perf_counter() - t:.0f} s")


def rows(uri: str) -> list[dict[str, Any]]:
    table = read_delta_arrow(table_location(uri)).to_pylist()
    return sorted(
        ({k: v for k, v in r.items() if k not in CLOCK} for r in table),
        key=lambda r: r["request_id"],
    )


def run(master: str, qs: list[tuple[str, str]], config: Any, out: Path, parts: int) -> Any:
    t = time.perf_counter()
    spark = spark_session(master, app_name=f"bench-{master}")
    print(f"{master}: SparkSession start {time.perf_counter() - t:.1f} s (JVM, cold)", flush=True)
    try:
        return answer_batch(
            spark, qs, config, table_location(out), run_id="bench", partitions=parts
        )
    finally:
        spark.stop()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path("/tmp/citebound-bench-batch"))
    ap.add_argument("--n", type=int, default=2000)
    args = ap.parse_args()
    folder = dataset_dir("scifact")
    if folder is None:
        print("SKIP: ../shared/data/scifact is absent")
        return 0
    store = args.work / "store"
    ensure_store(folder, store)
    config = load_config(
        env={},
        overrides={"store": str(store), "collection": "scifact", "provider.name": "extractive"},
    )
    qs = questions(folder, args.n)
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
            f"{s.answers / s.seconds:.1f} q/s, statuses {s.statuses}",
            flush=True,
        )
    four, one = results["local[2] x4"], results["local[2] x1"]
    same_answers = rows(four.answers_uri) == rows(one.answers_uri)
    same_audit = rows(four.audit_uri) == rows(one.audit_uri)
    audit_n = len(read_delta_arrow(table_location(four.audit_uri), columns=["request_id"]))
    ratio = results["local[1] x4"].seconds / four.seconds
    print(f"identical rows 1 vs 4 partitions: answers {same_answers}, audit {same_audit}")
    print(f"audit records {audit_n} = questions {len(qs)}: {audit_n == len(qs)}")
    print(f"throughput local[2] / local[1] (4 partitions each): {ratio:.2f}x")
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
    ok = same_answers and same_audit and audit_n == len(qs) and rv.changed == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
