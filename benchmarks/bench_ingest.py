"""Ingestion speed and memory on real corpora: F´ docs (Markdown + PDF) and SciFact (JSONL).

For each corpus found under ../shared/data (skipped cleanly when absent):

- load and chunk, timed separately: citebound loaders, then the chunker, in memory (medians
  of --repeats runs); chunks/s and docs/s are over load + chunk;
- baseline, same run: LlamaIndex `SentenceSplitter` (same chunk size/overlap, same
  cl100k_base tokenizer) over the very same document texts; `chunk_speedup_vs_llama` is
  its time over our chunker's time;
- peak Python heap of load+chunk (tracemalloc, measured in a separate untimed run);
- full ingest into a fresh SqliteStore (load + chunk + SQLite writes);
- index build (`citebound.index.update_indexes`, embedding included) when that module exists.

Usage: PYTHONPATH=src python benchmarks/bench_ingest.py [--repeats 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from citebound.contracts.ingest import ChunkerConfig, ParsedDocument
from citebound.eval.data import dataset_dir
from citebound.ingest import chunk_document, ingest_paths, is_supported, load_file
from citebound.ingest.source import SourceFile
from citebound.store import SqliteStore

CONFIG = ChunkerConfig(chunk_tokens=200, overlap_tokens=30)


def corpus_files(name: str) -> tuple[Path, list[Path]] | None:
    root = dataset_dir(name)
    if root is None:
        return None
    if name == "scifact":
        return root / "corpus.jsonl", [root / "corpus.jsonl"]
    files = sorted(p for p in root.rglob("*") if p.is_file() and is_supported(p))
    return root, files


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


def bench_corpus(name: str, repeats: int) -> dict[str, Any] | None:
    found = corpus_files(name)
    if found is None:
        print(f"skip {name}: ../shared/data/{name} is absent", file=sys.stderr)
        return None
    root, files = found
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
        "files": len(files),
        "documents": len(parsed),
        "chunks": n_chunks,
        "load_s": round(load_s, 3),
        "chunk_s": round(chunk_s, 3),
        "chunks_per_s": round(n_chunks / seconds, 1),
        "docs_per_s": round(len(parsed) / seconds, 1),
        "peak_heap_mb": round(peak / 2**20, 1),
    }
    base = llama_baseline(parsed, repeats)
    if base is not None:
        row["llama_split_s"] = round(base[0], 3)
        row["llama_chunks"] = base[1]
        row["chunk_speedup_vs_llama"] = round(base[0] / chunk_s, 2)
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(Path(tmp) / "store")
        start = time.perf_counter()
        report = ingest_paths(store, [root], collection=name, config=CONFIG, progress=False,
                              update_index=False)  # fmt: skip
        row["ingest_store_s"] = round(time.perf_counter() - start, 3)
        row["ingest_docs_per_s"] = round(report.documents_written / row["ingest_store_s"], 1)
        hook = getattr(importlib.import_module("citebound.index"), "update_indexes", None)
        if hook is not None:
            start = time.perf_counter()
            hook(store, name)
            row["index_s"] = round(time.perf_counter() - start, 3)
            total = row["ingest_store_s"] + row["index_s"]
            row["end_to_end_docs_per_s"] = round(report.documents_written / total, 1)
        store.close()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="Also write rows as JSON.")
    args = parser.parse_args()
    rows = [r for r in (bench_corpus(n, args.repeats) for n in ("fprime-docs", "scifact")) if r]
    if not rows:
        print("no data: nothing measured")
        return
    keys = sorted({k for r in rows for k in r}, key=lambda k: list(rows[0]).index(k)
                  if k in rows[0] else 99)  # fmt: skip
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r.get(k, "")) for k in keys) + " |")
    maxrss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nprocess max RSS: {maxrss_mb:.0f} MB; repeats={args.repeats} (medians)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
