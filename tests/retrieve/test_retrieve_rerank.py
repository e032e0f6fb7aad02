"""Rerankers: the passthrough default, the retriever's use of any Reranker, and the optional
sentence-transformers cross-encoder on a tiny BERT that the test builds and saves itself.

The torch tests skip when torch/transformers/sentence-transformers are absent (they are an
optional extra); the ONNX backend, which needs none of them, is tested unconditionally in
test_retrieve_rerank_onnx.py. Here, when torch is present, the same tiny BERT is also exported
to ONNX to check that the ONNX backend encodes pairs exactly as sentence-transformers does.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from retrieve_helpers import policy_with

from citebound.errors import ConfigError
from citebound.index import update_indexes
from citebound.index.embedder import OnnxEmbedder
from citebound.rerank import (
    CrossEncoderReranker,
    OnnxCrossEncoderReranker,
    PassthroughReranker,
    load_reranker,
    order_by_scores,
)
from citebound.retrieve import Retriever
from citebound.store.memory import MemoryStore

QUESTION = "What torque for the impeller bolts of the pump?"


class ShortestFirst:
    """A deterministic reranker: shorter chunk text first."""

    name = "shortest-first"

    def rerank(self, query: str, chunk_ids: Sequence[str], texts: Sequence[str]) -> list[str]:
        return order_by_scores(chunk_ids, [-len(t) for t in texts])


def test_passthrough_and_order_by_scores() -> None:
    assert PassthroughReranker().rerank("q", ["b", "a"], ["x", "y"]) == ["b", "a"]
    assert order_by_scores(["c", "a", "b"], [0.5, 0.5, 0.9]) == ["b", "a", "c"]


def test_retriever_reorders_only_the_first_n2(
    build_store: Callable[..., MemoryStore], embedder: OnnxEmbedder
) -> None:
    store = build_store()
    update_indexes(store, "default", embedder=embedder)
    pol = policy_with(n2_rerank_top_k=4, per_hit_neighbors=0, min_score=0.0, min_chunks=1)
    plain = Retriever(store, policy=pol, embedder=embedder).retrieve(QUESTION)
    reranked = Retriever(store, policy=pol, embedder=embedder, reranker=ShortestFirst()).retrieve(
        QUESTION
    )
    head = sorted(plain.results[:4], key=lambda r: (len(r.chunk_text), r.chunk_id))
    assert [r.chunk_id for r in reranked.results[:4]] == [r.chunk_id for r in head]
    assert [r.chunk_id for r in reranked.results[4:]] == [r.chunk_id for r in plain.results[4:]]
    sims = {r.chunk_id: r.similarity for r in plain.results}
    assert all(sims[r.chunk_id] == r.similarity for r in reranked.results)  # never rescored
    assert [r.rank for r in reranked.results] == list(range(len(reranked.results)))
    assert (plain.reranker, reranked.reranker) == ("passthrough", ShortestFirst.name)


def _tiny_cross_encoder(path: Path, initializer_range: float = 0.02) -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (optional extra)")
    transformers = pytest.importorskip(
        "transformers", reason="transformers is not installed (optional extra)"
    )
    pytest.importorskip("sentence_transformers", reason="sentence-transformers not installed")
    words = [
        "pump",
        "bolt",
        "torque",
        "valve",
        "leak",
        "seal",
        "the",
        "of",
        "for",
        "what",
        "is",
        "to",
        "nm",
        "40",
        "planet",
    ]
    path.mkdir()
    (path / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n", "utf-8"
    )
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(path / "vocab.txt"))
    config = transformers.BertConfig(
        vocab_size=5 + len(words),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=1,
        initializer_range=initializer_range,
    )
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(config)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)


@pytest.mark.slow
def test_cross_encoder_from_a_tiny_local_model(tmp_path: Path) -> None:
    model_dir = tmp_path / "tiny-ce"
    _tiny_cross_encoder(model_dir)
    ce = CrossEncoderReranker(model_dir, max_length=32)
    assert ce.name == "cross-encoder:tiny-ce"
    texts = ["pump bolt torque 40 nm", "valve leak", "the planet", "seal of the pump"]
    scores = ce.scores("what torque for the pump bolt", texts)
    assert len(scores) == 4 and len(set(scores)) > 1
    assert scores == CrossEncoderReranker(model_dir, max_length=32).scores(
        "what torque for the pump bolt", texts
    )  # deterministic across loads
    ids = ["d", "c", "b", "a"]
    order = ce.rerank("what torque for the pump bolt", ids, texts)
    by_id = dict(zip(ids, scores, strict=True))
    assert sorted(order) == sorted(ids)
    assert [by_id[i] for i in order] == sorted(scores, reverse=True)
    assert ce.scores("q", []) == []


def test_cross_encoder_path_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config\.json"):
        CrossEncoderReranker(tmp_path)


def _export_onnx(model_dir: Path) -> None:
    """model.onnx beside the weights, as `optimum-cli export onnx` would write it."""
    import torch
    import transformers

    model = transformers.BertForSequenceClassification.from_pretrained(model_dir).eval()
    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = tuple(torch.ones((1, 8), dtype=torch.int64) for _ in names)
    axes = {n: {0: "batch", 1: "seq"} for n in names} | {"logits": {0: "batch"}}
    with warnings.catch_warnings():  # the TorchScript exporter warns that it is deprecated
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            sample,
            str(model_dir / "model.onnx"),
            input_names=names,
            output_names=["logits"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )


@pytest.mark.slow
def test_onnx_export_scores_like_sentence_transformers(tmp_path: Path) -> None:
    model_dir = tmp_path / "tiny-ce"
    _tiny_cross_encoder(model_dir, initializer_range=0.5)  # spread-out scores
    _export_onnx(model_dir)
    texts = ["pump bolt torque 40 nm", "valve leak", "seal of the pump " * 20, "torque 40 " * 30]
    for query, max_length in [("what torque for the pump bolt", 32), ("pump bolt " * 10, 16)]:
        onnx = load_reranker(model_dir, max_length=max_length)  # ONNX wins over the weights
        assert isinstance(onnx, OnnxCrossEncoderReranker)
        st = CrossEncoderReranker(model_dir, max_length=max_length)
        logits = np.array(onnx.scores(query, texts))
        # sentence-transformers reports sigmoid(logit) for a one-label model: same order
        assert np.allclose(1 / (1 + np.exp(-logits)), st.scores(query, texts), atol=1e-6)
    cut = OnnxCrossEncoderReranker(model_dir, max_length=16).scores("pump", texts[2:])
    assert not np.allclose(cut, OnnxCrossEncoderReranker(model_dir).scores("pump", texts[2:]))
