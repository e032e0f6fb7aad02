"""Ingestion speed and memory on real corpora: F´ docs (Markdown + PDF) and SciFact (JSONL).

Part 1, full ingest (load + chunk + store + embed + index): citebound against LlamaIndex with
the same embedding model. Each run is a fresh subprocess (`_ingest_systems.py` says exactly what
each system runs), reporting docs/s, chunks/s, CPU seconds, embedding seconds, model tokens
embedded (and tokens run, padding included) and peak RSS: `VmHWM` of that process alone (model
included), which counts onnxruntime's native arena that tracemalloc cannot see. Systems alternate which
goes first in each repeat; times are medians over --repeats. docs/s has the same numerator for
both systems: the source documents citebound stored (F´: non-empty files; SciFact: abstracts).

Part 2 (skip with --skip-chunking), load and chunk only, in this process:

- citebound loaders, then the chunker, in memory (medians of --repeats runs);
- LlamaIndex `SentenceSplitter` (same chunk size/overlap, same cl100k_base tokenizer) over the
  very same document texts; `chunk_speedup_vs_llama` is its time over our chunker's time;
- peak Python heap of load+chunk (tracemalloc, measured in a separate untimed run).

SciFact is its first --scifact-docs abstracts (default 1,500; 0 = all 5,183), so that a run
stays modest on a shared machine. Corpora absent from ../shared/data are skipped.

Usage: PYTHONPATH=src python benchmarks/bench_ingest.py [--repeats 3] [--corpus fprime-docs]
    [--scifact-docs 1500] [--llama-batch 10] [--skip-chunking] [--json out.json]
    [--systems citebound,llamaindex-hf-defaults]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _ingest_systems import supported_files

from citebound.contracts.ingest import ChunkerConfig, ParsedDocument
from citebound.eval.data import dataset_dir
from citebound.ingest import chunk_document, load_file
from citebound.ingest.source import SourceFile

CONFIG = ChunkerConfig(chunk_tokens=200, overlap_tokens=30)
HERE = Path(__file__).resolve().parent
WORKER = HERE / "_ingest_systems.py"
SYSTEMS = ("citebound", "llamaindex-hf", "llamaindex-hf-defaults", "llamaindex-onnx")


def prepare(name: str, scifact_docs: int, tmp: Path) -> tuple[str, Path, list[Path]] | None:
    """(kind, path to ingest, files) of a corpus; the SciFact sample is written to `tmp`."""
    root = dataset_dir(name)
    if root is None:
        return None
    if name == "scifact":
        lines = (root / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
        sample = tmp / "scifact" / "corpus.jsonl"
        sample.parent.mkdir(parents=True, exist_ok=True)
        chosen = lines[:scifact_docs] if scifact_docs > 0 else lines
        sample.write_text("\n".join(chosen) + "\n", encoding="utf-8")
        return "jsonl", sample, [sample]
    return "files", root, supported_files(root)


def load_all(files: list[Path]) -> list[ParsedDocument]:
    parsed: list[ParsedDocument] = []
    for path in files:
        raw = path.read_bytes()
        src = SourceFile(path, path.name, "bench", raw, hashlib.sha256(raw).hexdigest())
        try:
            parsed.extend(load_file(src, lambda s: None))
        except Exception:  # skipped files (empty etc.) count as seen, like ingest does
            continue
    return parsed


def chunk_all(parsed: list[ParsedDocument]) -> int:
    return sum(len(chunk_document(doc, CONFIG)) for doc in parsed)


def load_and_chunk(files: list[Path]) -> tuple[list[ParsedDocument], int]:
    parsed = load_all(files)
    return parsed, chunk_all(parsed)


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times: list[float] = []
    result: Any = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def llama_baseline(parsed: list[ParsedDocument], repeats: int) -> tuple[float, int] | None:
    try:
        from llama_index.core import Document as LlamaDocument
        from llama_index.core.node_parser import SentenceSplitter
    except ImportError:
        return None
    from citebound.text import get_tokenizer

    encode = get_tokenizer("cl100k_base").encode  # type: ignore[attr-defined]
    splitter = SentenceSplitter(
        chunk_size=CONFIG.chunk_tokens, chunk_overlap=CONFIG.overlap_tokens, tokenizer=encode
    )
    docs = [LlamaDocument(text=p.document.text) for p in parsed]
    seconds, nodes = timed(lambda: splitter.get_nodes_from_documents(docs), repeats)
    return seconds, len(nodes)


def bench_chunking(name: str, files: list[Path], repeats: int) -> dict[str, Any]:
    """Part 2: load and chunk only, in this process (see the module docstring)."""
    chunk_all(load_all(files[:1]))  # warm-up: tokenizer and parser construction
    load_s, parsed = timed(lambda: load_all(files), repeats)
    chunk_s, n_chunks = timed(lambda: chunk_all(parsed), repeats)
    seconds = load_s + chunk_s
    tracemalloc.start()
    load_and_chunk(files)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    row: dict[str, Any] = {
        "corpus": name,
        "documents": len(parsed),
        "chunks": n_chunks,
        "load_s": round(load_s, 3),
        "chunk_s": round(chunk_s, 3),
        "docs_per_s": round(len(parsed) / seconds, 1),
        "chunks_per_s": round(n_chunks / seconds, 1),
        "peak_heap_mb": round(peak / 2**20, 1),
    }
    base = llama_baseline(parsed, repeats)
    if base is not None:
        row["llama_split_s"] = round(base[0], 3)
        row["llama_chunks"] = base[1]
        row["chunk_speedup_vs_llama"] = round(base[0] / chunk_s, 2)
    return row


def run_worker(system: str, kind: str, path: Path, llama_batch: int) -> dict[str, Any]:
    """One full ingest in a fresh interpreter; its JSON report."""
    cmd = [sys.executable, str(WORKER), system, kind, str(path),
           "--chunk-tokens", str(CONFIG.chunk_tokens), "--overlap", str(CONFIG.overlap_tokens),
           "--llama-batch", str(llama_batch)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{system} run failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def summarize(name: str, system: str, runs: list[dict[str, Any]], docs: int) -> dict[str, Any]:
    """Medians over runs; counts come from the first run (they do not vary between runs)."""

    def med(key: str) -> float:
        return statistics.median(float(r[key]) for r in runs)

    wall = med("seconds")
    first = runs[0]
    return {
        "corpus": name,
        "system": system,
        "docs": docs,
        "chunks": first["chunks"],
        # Token counts use citebound's WordPiece tokenizer (the model's); padded_tokens follows
        # citebound's batch plan, so it is empty for the torch runs.
        "model_tokens": first.get("model_tokens", ""),
        "padded_tokens": first.get("padded_tokens", ""),
        "truncated_tokens": first.get("truncated_tokens", ""),
        "wall_s": round(wall, 2),
        "docs_per_s": round(docs / wall, 2),
        "chunks_per_s": round(first["chunks"] / wall, 1),
        "cpu_s": round(med("cpu_s"), 2),
        "embed_s": round(med("embed_s"), 2),
        "peak_rss_mb": round(med("peak_rss_mb")),
        "rss_before_mb": round(med("rss_before_mb")),
        "runs_wall_s": [round(float(r["seconds"]), 2) for r in runs],
    }


def bench_full_ingest(
    name: str, kind: str, path: Path, repeats: int, llama_batch: int, systems: list[str]
) -> list[dict[str, Any]]:
    """Part 1: every system `repeats` times, alternating which one runs first."""
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in systems}
    for r in range(repeats):
        for system in systems if r % 2 == 0 else systems[::-1]:
            print(f"  {name} run {r + 1}/{repeats}: {system}", file=sys.stderr, flush=True)
            runs[system].append(run_worker(system, kind, path, llama_batch))
            # every run on stderr as it ends: a long benchmark that fails late loses nothing
            print(f"  {json.dumps(runs[system][-1])}", file=sys.stderr, flush=True)
    docs = int(runs["citebound"][0]["docs"]) if "citebound" in runs else 0
    rows = [summarize(name, s, runs[s], docs) for s in systems]
    ours = rows[0] if systems[0] == "citebound" else None
    for row in rows[1:] if ours is not None else []:
        # citebound's docs/s over this system's, and this system's CPU seconds over citebound's
        row["docs_per_s_ratio"] = round(ours["docs_per_s"] / row["docs_per_s"], 2)
        row["cpu_ratio"] = round(row["cpu_s"] / ours["cpu_s"], 2)
    return rows


def print_table(title: str, rows: list[dict[str, Any]]) -> None:
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    print(f"\n{title}\n")
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r.get(k, "")) for k in keys) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--corpus", choices=["fprime-docs", "scifact", "all"], default="all")
    parser.add_argument("--scifact-docs", type=int, default=1500, help="0 = all 5,183.")
    parser.add_argument("--llama-batch", type=int, default=10,
                        help="LlamaIndex embed_batch_size (default 10 = its DEFAULT_EMBED_BATCH_SIZE).")  # fmt: skip
    parser.add_argument("--skip-chunking", action="store_true", help="Only the full ingest.")
    parser.add_argument("--systems", default="",
                        help="Comma list of systems (citebound first for ratios; default: "
                        "citebound, llamaindex-hf, llamaindex-onnx when installed). Also: "
                        "llamaindex-hf-defaults.")  # fmt: skip
    parser.add_argument("--json", type=Path, default=None, help="Also write rows as JSON.")
    args = parser.parse_args()
    systems = ["citebound"]
    try:
        import llama_index.core

        systems.append("llamaindex-onnx")
        import llama_index.embeddings.huggingface  # noqa: F401

        systems.insert(1, "llamaindex-hf")
    except ImportError as err:
        print(f"{err.name} is not installed (extra `bench`): skipping the systems that need it",
              file=sys.stderr)  # fmt: skip
    if args.systems:
        systems = [x.strip() for x in args.systems.split(",") if x.strip()]
        unknown = sorted(set(systems) - set(SYSTEMS))
        if unknown:
            parser.error(f"unknown systems {unknown}; choose from {', '.join(SYSTEMS)}")
    names = ["fprime-docs", "scifact"] if args.corpus == "all" else [args.corpus]
    ingest_rows: list[dict[str, Any]] = []
    chunk_rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            found = prepare(name, args.scifact_docs, Path(tmp))
            if found is None:
                print(f"skip {name}: ../shared/data/{name} is absent", file=sys.stderr)
                continue
            kind, path, files = found
            ingest_rows += bench_full_ingest(name, kind, path, args.repeats, args.llama_batch,
                                             systems)  # fmt: skip
            if not args.skip_chunking:
                chunk_rows.append(bench_chunking(name, files, args.repeats))
    if not ingest_rows:
        print("no data: nothing measured")
        return
    print_table(f"Full ingest (medians of {args.repeats}; LlamaIndex embed_batch_size="
                f"{args.llama_batch})", ingest_rows)  # fmt: skip
    if chunk_rows:
        print_table("Load + chunk only (in process)", chunk_rows)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        out = {"full_ingest": ingest_rows, "load_chunk": chunk_rows, "args": vars(args)}
        args.json.write_text(json.dumps(out, indent=2, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
