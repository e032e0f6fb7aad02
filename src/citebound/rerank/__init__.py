"""Rerank stage: reorder the first N2 retrieval candidates (docs/retrieval.md).

`load_reranker(path)` builds the configured one (`[rerank] model_path`): an ONNX cross-encoder
(onnxruntime, no torch), a sentence-transformers one, or the passthrough default.
"""

from citebound.rerank.base import (
    PassthroughReranker,
    Reranker,
    load_reranker,
    order_by_scores,
    reranker_backend,
)
from citebound.rerank.cross_encoder import CrossEncoderReranker
from citebound.rerank.onnx_cross_encoder import OnnxCrossEncoderReranker

__all__ = [
    "CrossEncoderReranker",
    "OnnxCrossEncoderReranker",
    "PassthroughReranker",
    "Reranker",
    "load_reranker",
    "order_by_scores",
    "reranker_backend",
]
