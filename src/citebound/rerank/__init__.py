"""Rerank stage: reorder the first N2 retrieval candidates (seed 002 §5.4)."""

from citebound.rerank.base import PassthroughReranker, Reranker, order_by_scores
from citebound.rerank.cross_encoder import CrossEncoderReranker

__all__ = ["CrossEncoderReranker", "PassthroughReranker", "Reranker", "order_by_scores"]
