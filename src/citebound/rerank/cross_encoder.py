"""Cross-encoder reranker loaded from a local directory (sentence-transformers `CrossEncoder`).

The optional torch backend: `OnnxCrossEncoderReranker` is the one that needs no torch, and
`load_reranker` picks this class only for a directory without an ONNX model. No model is
downloaded: `path` must hold a saved cross-encoder (e.g. a local copy of
`cross-encoder/ms-marco-MiniLM-L-6-v2`). Needs the optional extra `sentence-transformers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from citebound.errors import ConfigError
from citebound.rerank.base import order_by_scores


class CrossEncoderReranker:
    """Scores (query, chunk text) pairs with a cross-encoder and sorts by score desc.

    Args:
        path: Local model directory (config.json, weights, tokenizer files).
        batch_size: Pairs per forward pass.
        max_length: Token cap per pair; 0 = the model's own.

    Raises:
        ConfigError: when the extra is not installed or the directory is not a model.
    """

    def __init__(self, path: Path, *, batch_size: int = 32, max_length: int = 0) -> None:
        path = Path(path)
        if not (path / "config.json").is_file():
            raise ConfigError(f"no cross-encoder model at {path} (config.json missing)")
        try:
            from sentence_transformers import CrossEncoder
        except ImportError:
            raise ConfigError(
                "the cross-encoder reranker needs `pip install citebound[sentence-transformers]`"
            ) from None
        try:
            self._model = CrossEncoder(
                str(path), device="cpu", max_length=max_length or None, local_files_only=True
            )
        except (OSError, ValueError) as err:
            raise ConfigError(f"cannot load cross-encoder from {path}: {err}") from None
        self.name = f"cross-encoder:{path.name}"
        self.batch_size = batch_size

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text, higher is better: what `CrossEncoder.predict` returns
        (sigmoid(logit) for a one-label model, where the ONNX backend returns the logit)."""
        if not texts:
            return []
        out = self._model.predict(
            [(query, t) for t in texts], batch_size=self.batch_size, show_progress_bar=False
        )
        return [float(x) for x in out]

    def rerank(self, query: str, chunk_ids: Sequence[str], texts: Sequence[str]) -> list[str]:
        return order_by_scores(chunk_ids, self.scores(query, texts))
