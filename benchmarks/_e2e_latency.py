"""Latency part of bench_end_to_end.py: citebound `ask` vs LlamaIndex CitationQueryEngine."""

from __future__ import annotations

import json
import random
import shutil
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _llamaindex_baseline import LlamaIndexBaseline, available

from citebound.cli.demo import build_demo_store
from citebound.eval.end_to_end import LatencySummary, latency, make_pipeline
from citebound.index.build import index_dir, read_rows
from citebound.index.embedder import default_embedder
from citebound.index.vectors import VectorIndex
from citebound.ingest import ingest_paths
from citebound.sample_corpus import DEMO_QUESTIONS
from citebound.store.sqlite import SqliteStore

WARMUP = 5


class EmbedTimer:
    """Adds up the time spent in the shared query embedder (the same object serves both
    systems, so the attribution is identical). Patches the instance, not the class."""

    def __init__(self) -> None:
        self.ns = 0
        emb = default_embedder()
        inner: Callable[[Sequence[str]], Any] = emb.embed

        def timed(texts: Sequence[str]) -> Any:
            t0 = time.perf_counter_ns()
            try:
                return inner(texts)
            finally:
                self.ns += time.perf_counter_ns() - t0

        emb.embed = timed  # type: ignore[method-assign]

    def take_ms(self) -> float:
        spent, self.ns = self.ns, 0
        return spent / 1e6


def demo_corpus(work: Path, rounds: int) -> tuple[SqliteStore, str, list[str]]:
    """The store `citebound demo` builds, and its questions `rounds` times over."""
    store, _ = build_demo_store(work / "demo")
    return store, "demo", [q.text for _ in range(rounds) for q in DEMO_QUESTIONS]


def scifact_corpus(work: Path, folder: Path, n: int) -> tuple[SqliteStore, str, list[str]]:
    store = SqliteStore(work / "scifact" / "store")
    t0 = time.perf_counter()
    report = ingest_paths(store, [folder / "corpus.jsonl"], collection="scifact", progress=False)
    print(
        f"SciFact: {report.chunks_total} chunks ({report.chunks_written} written now) in "
        f"{time.perf_counter() - t0:.0f}s"
    )
    with (folder / "queries.jsonl").open(encoding="utf-8") as fh:
        claims = [json.loads(line)["text"] for line in fh if line.strip()]
    return store, "scifact", random.Random(0).sample(claims, min(n, len(claims)))


def _baseline(store: SqliteStore, collection: str, top_k: int) -> LlamaIndexBaseline:
    directory = index_dir(store.root, collection)
    ids = [r.chunk_id for r in read_rows(directory)]
    chunks = {c.chunk_id: c for c in store.get_chunks(ids)}
    matrix = VectorIndex.load(directory / "vectors.npy").matrix
    return LlamaIndexBaseline(ids, [chunks[i].text for i in ids], matrix, default_embedder(), top_k)


def _summ(xs: list[float]) -> LatencySummary:
    return latency(xs)


def measure(
    store: SqliteStore, collection: str, questions: list[str], work: Path, timer: EmbedTimer
) -> dict[str, Any]:
    run_dir = work / f"run-{collection}"
    shutil.rmtree(run_dir, ignore_errors=True)  # a fresh audit database for every run
    pipe, ctx = make_pipeline(store, run_dir, collection)
    top_k = ctx.policy.retrieval.top_k
    why_not = available()
    li = _baseline(store, collection, top_k) if why_not is None else None
    if li is None:
        print(f"SKIP LlamaIndex baseline: {why_not}")
    systems = ["citebound", *((li.engines) if li else [])]
    rec: dict[str, dict[str, list[float]]] = {
        s: {"total": [], "llm": [], "embed": []} for s in systems
    }
    passed: list[bool] = []
    stages: dict[str, list[float]] = {}
    for i, q in enumerate([*questions[:WARMUP], *questions]):
        timed = i >= WARMUP
        for k in range(len(systems)):  # rotate the order so no system always runs first
            name = systems[(i + k) % len(systems)]
            timer.take_ms()
            own_embed: float | None = None
            if name == "citebound":
                t0 = time.perf_counter_ns()
                state = pipe.run(q, collection=collection)
                total = (time.perf_counter_ns() - t0) / 1e6
                llm = state.llm_result.llm_latency_ms if state.llm_result else 0.0
                if timed:
                    gate = state.retrieval_bundle.gate if state.retrieval_bundle else None
                    passed.append(bool(gate and gate.passed))
                    for s in state.stage_log:
                        stages.setdefault(s.stage, []).append(s.latency_ms)
            else:
                assert li is not None
                total, llm, own_embed = li.query(name, q)
            embed = timer.take_ms() if own_embed is None else own_embed
            if timed:
                rec[name]["total"].append(total)
                rec[name]["llm"].append(llm)
                rec[name]["embed"].append(embed)
    ctx.close()
    return _report(collection, top_k, rec, passed, stages)


def _report(
    collection: str,
    top_k: int,
    rec: dict[str, dict[str, list[float]]],
    passed: list[bool],
    stages: dict[str, list[float]],
) -> dict[str, Any]:
    out: dict[str, Any] = {"top_k": top_k, "gate_passed": sum(passed), "n": len(passed)}
    print(
        f"\n### {collection}: {len(passed)} questions, top_k {top_k}; citebound gate passed "
        f"{sum(passed)}/{len(passed)}\n"
    )
    print(
        "| system | total med / p99 | LLM med | embed med | excl. LLM med / p99 | "
        "excl. LLM+embed med / p99 |"
    )
    print("|---|---|---|---|---|---|")
    for name, r in rec.items():
        ex = [t - m for t, m in zip(r["total"], r["llm"], strict=True)]
        core = [x - e for x, e in zip(ex, r["embed"], strict=True)]
        row = {
            "total": _summ(r["total"]).model_dump(),
            "llm": _summ(r["llm"]).model_dump(),
            "embed": _summ(r["embed"]).model_dump(),
            "excl_llm": _summ(ex).model_dump(),
            "excl_llm_embed": _summ(core).model_dump(),
        }
        out[name] = row
        label = name if name == "citebound" else f"LlamaIndex ({name})"
        print(
            f"| {label} | {row['total']['median_ms']:.1f} / {row['total']['p99_ms']:.1f} | "
            f"{row['llm']['median_ms']:.2f} | {row['embed']['median_ms']:.1f} | "
            f"{row['excl_llm']['median_ms']:.1f} / {row['excl_llm']['p99_ms']:.1f} | "
            f"{row['excl_llm_embed']['median_ms']:.1f} / {row['excl_llm_embed']['p99_ms']:.1f} |"
        )
    cb = out["citebound"]
    full = [
        t - m
        for t, m, ok in zip(rec["citebound"]["total"], rec["citebound"]["llm"], passed, strict=True)
        if ok
    ]
    if full:
        # Refused requests skip assembly-to-validation work; LlamaIndex never skips. Show the
        # full path on its own so the comparison is not flattered by refusals.
        only = _summ(full)
        out["citebound_gate_passed_excl_llm"] = only.model_dump()
        print(
            f"\ncitebound, gate passed only ({only.n}): excluding the LLM median "
            f"{only.median_ms:.1f} ms, p99 {only.p99_ms:.1f} ms"
        )
    for name in rec:
        if name == "citebound":
            continue
        ratios = {
            key: out[name][key]["median_ms"] / cb[key]["median_ms"]
            for key in ("excl_llm", "excl_llm_embed")
        }
        out[f"ratio_{name}"] = ratios
        print(
            f"\nLlamaIndex ({name}) / citebound, medians: excluding the LLM "
            f"{ratios['excl_llm']:.2f}x, excluding LLM and query embedding "
            f"{ratios['excl_llm_embed']:.2f}x (goal: >= 3x)"
        )
    print(
        "\ncitebound per stage (median ms): "
        + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in stages.items())
    )
    out["stages_median_ms"] = {k: statistics.median(v) for k, v in stages.items()}
    return out


def run_latency(
    work: Path, scifact: Path | None, n_scifact: int, demo_rounds: int
) -> dict[str, Any]:
    timer = EmbedTimer()
    results: dict[str, Any] = {}
    store, coll, qs = demo_corpus(work, demo_rounds)
    results["demo"] = measure(store, coll, qs, work, timer)
    if scifact is None:
        print("SKIP SciFact latency: ../shared/data/scifact is absent")
    else:
        store, coll, qs = scifact_corpus(work, scifact, n_scifact)
        results["scifact"] = measure(store, coll, qs, work, timer)
    return results
