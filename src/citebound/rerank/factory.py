"""`load_reranker(path)`: the one way configuration turns `[rerank] model_path` into a Reranker.

The backend follows from what the path holds, so a config never names one:

- a `.onnx` file, or a directory with `model.onnx` or `onnx/model.onnx` (plus tokenizer.json)
  -> `OnnxCrossEncoderReranker` (onnxruntime; the `retrieval` extra, no torch);
- a directory with `config.json` and weights (model.safetensors / pytorch_model.bin)
  -> `CrossEncoderReranker` (sentence-transformers; the optional extra of that name).

ONNX wins when a directory has both (a clone of the Hub repository does): it needs no torch.
An empty path means the passthrough default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from citebound.errors import ConfigError
from citebound.rerank.base import PassthroughReranker, Reranker
from citebound.rerank.onnx_cross_encoder import find_onnx_files

Backend = Literal["onnx", "sentence-transformers"]
_WEIGHTS = ("model.safetensors", "pytorch_model.bin")


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
        from citebound.rerank.onnx_cross_encoder import OnnxCrossEncoderReranker

        return OnnxCrossEncoderReranker(
            path, batch_size=batch_size, max_length=max_length, threads=threads
        )
    from citebound.rerank.cross_encoder import CrossEncoderReranker

    return CrossEncoderReranker(path, batch_size=batch_size, max_length=max_length or 512)
