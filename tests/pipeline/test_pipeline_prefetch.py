"""Batch prefetch of question vectors: the same answers, fewer forward passes, nothing kept."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from citebound.index.embedder import default_embedder
from citebound.pipeline import Pipeline
from citebound.retrieve.query_vectors import QueryVectorMemo
from citebound.sample_corpus import DEMO_QUESTIONS

QUESTIONS = [q.text for q in DEMO_QUESTIONS] + ["", "Task: pump torque\nAudience: fitters"]


def _answers(pipe: Pipeline, prefix: str) -> list[tuple[object, ...]]:
    out = []
    for i, q in enumerate(QUESTIONS):
        state = pipe.run(q, request_id=f"{prefix}{i}")
        r = state.response
        assert r is not None
        bundle = state.retrieval_bundle
        out.append(
            (
                r.status,
                r.answer,
                r.failure_reason,
                [c.model_dump() for c in r.citations],
                [(x.chunk_id, x.similarity) for x in bundle.results] if bundle else None,
            )
        )
    return out


def test_prefetched_batches_answer_exactly_as_one_by_one(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    plain = _answers(make_pipeline(), "plain-")
    pipe = make_pipeline()
    memo = pipe.ctx.retriever.query_vectors
    embedded = pipe.prefetch(QUESTIONS)
    # One piece per plain question here; the empty one has none, the structured one has its task.
    assert embedded == len(memo) == len(set(QUESTIONS)) - 1
    assert _answers(pipe, "batch-") == plain
    assert len(memo) == 0  # every prefetched vector was used, and then dropped


def test_prefetch_never_fails_the_batch(
    make_pipeline: Callable[..., Pipeline], demo_store_dir: Path
) -> None:
    # Over the shared demo store: a missing collection's name must write nothing to it.
    assert make_pipeline().prefetch(QUESTIONS, collection="no-such-collection") == 0
    pipe = make_pipeline()
    assert pipe.prefetch([]) == 0
    lexical = make_pipeline(**{"policy": "strict-v1"})
    lexical.ctx.policy = lexical.ctx.policy.evolve(
        retrieval={**lexical.ctx.policy.retrieval.model_dump(), "mode": "lexical"}
    )
    assert lexical.prefetch(QUESTIONS) == 0  # nothing to embed without dense retrieval


def test_memo_vectors_equal_embedding_alone() -> None:
    emb = default_embedder()
    memo = QueryVectorMemo()
    texts = ["pump torque", "seal leak after 2,000 hours", "valve"]
    assert memo.fill(emb, [*texts, texts[0]]) == 3
    assert memo.fill(emb, texts) == 0  # already held
    # Two held, one not: the result is what embedding the pieces directly gives, bit for bit.
    mixed = memo.embed(emb, ["pump torque", "gearbox oil", "valve"])
    assert np.array_equal(mixed, emb.embed(["pump torque", "gearbox oil", "valve"]))
    assert len(memo) == 1  # used vectors are dropped
    memo.clear()
    assert len(memo) == 0 and np.array_equal(memo.embed(emb, ["valve"]), emb.embed(["valve"]))
