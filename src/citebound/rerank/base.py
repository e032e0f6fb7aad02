"""Reranker protocol (docs/retrieval.md), the passthrough default, and `load_reranker(path)`.

A reranker reorders the first N2 retrieval candidates; it never adds or drops one, and it never
changes their calibrated `similarity` (the gate and assembly thresholds keep their meaning).

`load_reranker` is the one way configuration (`[rerank] model_path`) becomes a Reranker. The
backend follows from what the path holds, so a config never names one:

- a `.onnx` file, or a directory with `model.onnx` or `onnx/model.onnx` (plus tokenizer.json)
  -> `OnnxCrossEncoderReranker` (onnxruntime; the `retrieval` extra, no torch);
- a directory with `config.json` and weights (model.safetensors / pytorch_model.bin)
  -> `CrossEncoderReranker` (sentence-transformers; the optional extra of that name).

ONNX wins when a directory has both (a clone of the Hub repository does): it needs no torch.
An empty path means the passthrough default.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from citebound.errors import ConfigError

Backend = Literal["onnx", "sentence-transformers"]
_WEIGHTS = ("model.safetensors", "pytorch_model.bin")


@runtime_checkable
class Reranker(Protocol):
    """Reorders candidates for a query. `name` is recorded in traces."""

    name: str

    def rerank(self, query: str, chunk_ids: Sequence[str], texts: Sequence[str]) -> list[str]:
        """The same chunk_ids, best first; ties by chunk_id asc."""
        ...


class PassthroughReranker:
    """Keeps the fused retrieval order (the default when no cross-encoder is configured)."""

    name = "passthrough"

    def rerank(self, query: str, chunk_ids: Sequence[str], texts: Sequence[str]) -> list[str]:
        return list(chunk_ids)


def order_by_scores(chunk_ids: Sequence[str], scores: Sequence[float]) -> list[str]:
    """chunk_ids sorted by score desc, then chunk_id asc."""
    pairs = sorted(zip(scores, chunk_ids, strict=True), key=lambda p: (-p[0], p[1]))
    return [cid for _, cid in pairs]


def find_onnx_files(path: Path) -> tuple[Path, Path] | None:
    """(model.onnx, tokenizer.json) of an ONNX cross-encoder at `path`, or None when `path`
    holds no ONNX model. Raises ConfigError when the model is there but tokenizer.json is not."""
    if path.is_file():
        if path.suffix != ".onnx":
            return None
        model, dirs = path, (path.parent, path.parent.parent)
    else:
        found = [p for p in (path / "model.onnx", path / "onnx" / "model.onnx") if p.is_file()]
        if not found:
            return None
        model, dirs = found[0], (path, found[0].parent)
    tokenizer = next((d / "tokenizer.json" for d in dirs if (d / "tokenizer.json").is_file()), None)
    if tokenizer is None:
        raise ConfigError(
            f"ONNX cross-encoder {model} has no tokenizer.json beside it"
            f" (looked in {', '.join(str(d) for d in dict.fromkeys(dirs))})",
            field="rerank.model_path",
            source=str(path),
        )
    return model, tokenizer


def reranker_backend(path: str | Path) -> Backend:
    """Which backend `path` needs, from its files alone (cheap: nothing is loaded).

    Raises:
        ConfigError: the path does not exist or holds no cross-encoder either backend reads.
    """
    path = Path(path)
    if not path.exists():
        raise ConfigError(
            f"no cross-encoder at {path}: the path does not exist",
            field="rerank.model_path",
            source=str(path),
        )
    if find_onnx_files(path) is not None:
        return "onnx"
    weights = any((path / w).is_file() for w in _WEIGHTS)
    if path.is_dir() and (path / "config.json").is_file() and weights:
        return "sentence-transformers"
    raise ConfigError(
        f"no cross-encoder at {path}: expected model.onnx (or onnx/model.onnx) with "
        "tokenizer.json, or a sentence-transformers model (config.json + model.safetensors)",
        field="rerank.model_path",
        source=str(path),
    )


def load_reranker(
    path: str | Path | None, *, batch_size: int = 32, max_length: int = 0, threads: int = 0
) -> Reranker:
    """The reranker for `path` (see the module doc); passthrough when `path` is empty.

    Args:
        path: `[rerank] model_path`: an ONNX export, a `.onnx` file or a sentence-transformers
            directory. Empty or None: no reranking.
        batch_size: Pairs per forward pass.
        max_length: Token cap per (query, text) pair; 0 = the model's own (512 when unknown).
        threads: onnxruntime intra-op threads (ONNX backend only; 0 = its default).

    Raises:
        ConfigError: a missing or unusable model (the message names the path and what is wrong).
    """
    if path is None or str(path) == "":
        return PassthroughReranker()
    path = Path(path)
    if reranker_backend(path) == "onnx":
        # Lazy: each reranker module imports this one (Reranker), and loads its own model library.
        from citebound.rerank.onnx_cross_encoder import OnnxCrossEncoderReranker

        return OnnxCrossEncoderReranker(
            path, batch_size=batch_size, max_length=max_length, threads=threads
        )
    from citebound.rerank.cross_encoder import CrossEncoderReranker

    return CrossEncoderReranker(path, batch_size=batch_size, max_length=max_length)
