"""rerank stage."""
