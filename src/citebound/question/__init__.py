"""The question stages' logic: A0 preprocessing (a structured prompt to its canonical fields),
A2 shape (closed-enum classification) and the follow-up rewrite of the retrieval query."""

from citebound.question.conversation import FollowupRewrite, rewrite_query
from citebound.question.preprocess import map_header, preprocess, retrieval_query

__all__ = ["FollowupRewrite", "map_header", "preprocess", "retrieval_query", "rewrite_query"]
