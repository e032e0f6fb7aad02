"""The ONNX cross-encoder reranker on a tiny model that the test writes itself (no torch).

The tiny model's logit is the word overlap of query and text (citebound.testing.
tiny_cross_encoder), so every expected score and order below is worked out by hand.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from retrieve_helpers import policy_with

from citebound.errors import ConfigError
from citebound.index import update_indexes
from citebound.index.embedder import OnnxEmbedder
from citebound.rerank import (
    OnnxCrossEncoderReranker,
    PassthroughReranker,
    load_reranker,
    order_by_scores,
    reranker_backend,
)
from citebound.retrieve import Retriever
from citebound.store.memory import MemoryStore
from citebound.testing.tiny_cross_encoder import (
    write_image_model,
    write_sentence_embedder,
    write_tiny_cross_encoder,
)

QUERY = "What torque for the pump bolt?"
TEXTS = {
    "c-a": "Pump bolt torque: 40 Nm.",  # pump, bolt, torque -> 3
    "c-b": "Valve leak.",  # 0
    "c-c": "The planet.",  # 0
    "c-d": "Seal of the pump; the pump again.",  # pump: 1 in the query x 2 in the text -> 2
    "c-e": "Torque",  # 1
}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_cross_encoder(tmp_path_factory.mktemp("models") / "tiny-xenc")


@pytest.fixture(scope="module")
def reranker(model_dir: Path) -> OnnxCrossEncoderReranker:
    return OnnxCrossEncoderReranker(model_dir)


def test_scores_are_the_hand_computed_overlap(reranker: OnnxCrossEncoderReranker) -> None:
    assert reranker.name == "onnx-cross-encoder:tiny-xenc"
    assert reranker.scores(QUERY, list(TEXTS.values())) == [3.0, 0.0, 0.0, 2.0, 1.0]
    assert reranker.scores(QUERY, []) == []
    # the score depends on the query, not on the text alone: a cross-encoder
    assert reranker.scores("valve", list(TEXTS.values())) == [0.0, 1.0, 0.0, 0.0, 0.0]


def test_rerank_orders_by_score_then_chunk_id(reranker: OnnxCrossEncoderReranker) -> None:
    ids, texts = list(TEXTS), list(TEXTS.values())
    assert reranker.rerank(QUERY, ids, texts) == ["c-a", "c-d", "c-e", "c-b", "c-c"]
    # c-b and c-c tie at 0: chunk_id asc, whatever order they came in
    for perm in itertools.permutations(range(len(ids))):
        got = reranker.rerank(QUERY, [ids[i] for i in perm], [texts[i] for i in perm])
        assert got == ["c-a", "c-d", "c-e", "c-b", "c-c"]
    assert reranker.rerank(QUERY, [], []) == []


def test_deterministic_across_loads_and_batch_sizes(model_dir: Path) -> None:
    texts = [*TEXTS.values(), "pump " * 30, "torque bolt", "", "pump valve leak seal torque"]
    runs = [
        OnnxCrossEncoderReranker(model_dir, batch_size=b).scores(QUERY, texts)
        for b in (1, 2, 3, 32)
    ]
    assert runs[0][:5] == [3.0, 0.0, 0.0, 2.0, 1.0] and runs[0][5] == 30.0
    assert all(r == runs[0] for r in runs)
    again = OnnxCrossEncoderReranker(model_dir)
    assert [again.rerank(QUERY, [str(i) for i in range(9)], texts) for _ in range(3)] == [
        order_by_scores([str(i) for i in range(9)], runs[0])
    ] * 3


def test_pairs_are_truncated_longest_first(model_dir: Path) -> None:
    # [CLS] torque [SEP] + text + [SEP] within 8 tokens leaves 4 text tokens: the late
    # "torque" is cut, the query is kept (longest_first trims the longer side first).
    short = OnnxCrossEncoderReranker(model_dir, max_length=8)
    assert short.max_length == 8
    assert short.scores("torque", ["the the the the torque", "torque the the the the"]) == [
        0.0,
        1.0,
    ]
    assert OnnxCrossEncoderReranker(model_dir).scores("torque", ["the the the the torque"]) == [1.0]
    # a long query against a short text: the query is what gets cut
    assert short.scores("pump pump pump pump pump torque", ["torque"]) == [0.0]


def test_layouts_and_signatures(tmp_path: Path, reranker: OnnxCrossEncoderReranker) -> None:
    texts = list(TEXTS.values())
    hub = write_tiny_cross_encoder(tmp_path / "hub-layout", layout="onnx-subdir")
    assert (hub / "onnx" / "model.onnx").is_file() and not (hub / "model.onnx").exists()
    from_hub = load_reranker(hub)
    assert isinstance(from_hub, OnnxCrossEncoderReranker)
    assert from_hub.name == "onnx-cross-encoder:hub-layout"
    one_file = OnnxCrossEncoderReranker(hub / "onnx" / "model.onnx")  # e.g. a quantized variant
    assert one_file.name == "onnx-cross-encoder:hub-layout/model.onnx"
    no_types = OnnxCrossEncoderReranker(
        write_tiny_cross_encoder(tmp_path / "nt", token_type_ids=False)
    )
    expected = reranker.scores(QUERY, texts)
    assert from_hub.scores(QUERY, texts) == one_file.scores(QUERY, texts) == expected
    assert no_types.scores(QUERY, texts) == expected


def test_max_length_follows_the_model_files(tmp_path: Path) -> None:
    capped = write_tiny_cross_encoder(tmp_path / "capped", max_position_embeddings=64)
    assert OnnxCrossEncoderReranker(capped).max_length == 64
    assert OnnxCrossEncoderReranker(capped, max_length=16).max_length == 16
    hub = write_tiny_cross_encoder(
        tmp_path / "hub", layout="onnx-subdir", max_position_embeddings=48
    )  # config.json at the root, the model in onnx/
    assert OnnxCrossEncoderReranker(hub).max_length == 48
    assert OnnxCrossEncoderReranker(hub / "onnx" / "model.onnx").max_length == 48
    with pytest.raises(ConfigError, match=r"max_length 128 exceeds .* 64"):
        OnnxCrossEncoderReranker(capped, max_length=128)
    (capped / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 32}), "utf-8")
    assert OnnxCrossEncoderReranker(capped).max_length == 32
    # Hugging Face's "no limit" sentinel is ignored, not used as a cap
    (capped / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 10**30}))
    assert OnnxCrossEncoderReranker(capped).max_length == 64


def test_broken_directories_are_config_errors(tmp_path: Path, model_dir: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_reranker(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"expected model\.onnx .*tokenizer\.json"):
        load_reranker(tmp_path / "empty")
    with pytest.raises(ConfigError, match=r"model\.onnx \(or onnx/model\.onnx\) missing"):
        OnnxCrossEncoderReranker(tmp_path / "empty")
    no_tok = write_tiny_cross_encoder(tmp_path / "no-tok")
    (no_tok / "tokenizer.json").unlink()
    with pytest.raises(ConfigError, match=r"no tokenizer\.json"):
        load_reranker(no_tok)
    with pytest.raises(ConfigError, match=r"inputs are \['pixel_values'\].*input_ids"):
        load_reranker(write_image_model(tmp_path / "image"))
    with pytest.raises(ConfigError, match="sentence embedder"):
        load_reranker(write_sentence_embedder(tmp_path / "embedder"))
    with pytest.raises(ConfigError, match="3 output labels"):
        load_reranker(write_tiny_cross_encoder(tmp_path / "nli", n_labels=3))
    # a symbolic label dimension is only found out on the first batch
    late = load_reranker(
        write_tiny_cross_encoder(tmp_path / "nli2", n_labels=2, static_labels=False)
    )
    with pytest.raises(ConfigError, match="2 output labels"):
        late.rerank(QUERY, ["a"], ["pump"])
    garbage = write_tiny_cross_encoder(tmp_path / "garbage")
    (garbage / "model.onnx").write_bytes(b"not a protobuf")
    with pytest.raises(ConfigError, match="cannot load ONNX model"):
        load_reranker(garbage)
    bad_tok = write_tiny_cross_encoder(tmp_path / "bad-tok")
    (bad_tok / "tokenizer.json").write_text("{", "utf-8")
    with pytest.raises(ConfigError, match=r"cannot read .*tokenizer\.json"):
        load_reranker(bad_tok)
    with pytest.raises(ConfigError, match=r"expected model\.onnx"):
        load_reranker(model_dir / "tokenizer.json")  # a file, but not a model


def test_backend_follows_the_directory(tmp_path: Path, model_dir: Path) -> None:
    assert isinstance(load_reranker(""), PassthroughReranker)
    assert isinstance(load_reranker(None), PassthroughReranker)
    assert reranker_backend(model_dir) == "onnx"
    st_dir = tmp_path / "st"
    st_dir.mkdir()
    (st_dir / "config.json").write_text("{}", "utf-8")
    with pytest.raises(ConfigError, match="sentence-transformers model"):
        reranker_backend(st_dir)  # config.json without weights is not a model
    (st_dir / "model.safetensors").write_bytes(b"")
    assert reranker_backend(st_dir) == "sentence-transformers"
    # a clone of the Hub repository has both: ONNX wins (no torch needed)
    write_tiny_cross_encoder(st_dir, layout="onnx-subdir")
    assert reranker_backend(st_dir) == "onnx"


def test_retriever_reranks_the_first_n2_with_the_onnx_model(
    build_store: Callable[..., MemoryStore], embedder: OnnxEmbedder, model_dir: Path
) -> None:
    store = build_store()
    update_indexes(store, "default", embedder=embedder)
    pol = policy_with(n2_rerank_top_k=5, per_hit_neighbors=0, min_score=0.0, min_chunks=1)
    plain = Retriever(store, policy=pol, embedder=embedder).retrieve(QUERY)
    xenc = OnnxCrossEncoderReranker(model_dir)
    reranked = Retriever(store, policy=pol, embedder=embedder, reranker=xenc).retrieve(QUERY)
    # overlap with "torque", "pump", "bolt" ("bolts" and "torqued" are other words)
    by_start = {
        "Torque the impeller bolts of pump": 2.0,
        "Bolts on rotating equipment are usually torqued": 0.0,
        "Check the mechanical seal for leaks after restarting the pump": 1.0,
        "Safety: isolate the pump": 1.0,
        "The valve V-7 actuator": 0.0,
    }
    head = plain.results[:5]
    scores = [next(v for k, v in by_start.items() if r.chunk_text.startswith(k)) for r in head]
    assert xenc.scores(QUERY, [r.chunk_text for r in head]) == scores
    got = [r.chunk_id for r in reranked.results]
    assert got[:5] == order_by_scores([r.chunk_id for r in head], scores)
    assert got[:5] != [r.chunk_id for r in head]  # the cross-encoder did reorder
    assert reranked.results[0].chunk_text.startswith("Torque the impeller")
    assert got[5:] == [r.chunk_id for r in plain.results[5:]]  # beyond N2: untouched
    sims = {r.chunk_id: r.similarity for r in plain.results}
    assert all(sims[r.chunk_id] == r.similarity for r in reranked.results)  # never rescored
