"""The packaged all-MiniLM-L6-v2 int8 ONNX embedder: offline, shape, normalization, order."""

from __future__ import annotations

import numpy as np
import pytest

from citebound.errors import ConfigError
from citebound.index.embedder import (
    DEFAULT_MODEL_NAME,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    load_embedder,
    minilm_paths,
)


def test_packaged_model_loads_offline(embedder: OnnxEmbedder) -> None:
    # the autouse guard blocks every non-loopback socket and sets HF_HUB_OFFLINE
    model, tokenizer = minilm_paths()
    assert model.is_file() and tokenizer.is_file()
    assert embedder.name == DEFAULT_MODEL_NAME and embedder.dim == 384
    assert load_embedder(DEFAULT_MODEL_NAME) is embedder


def test_shape_dtype_and_unit_norm(embedder: OnnxEmbedder) -> None:
    texts = ["pump", "The impeller bolts need 40 Nm.", "word " * 600, ""]
    vecs = embedder.embed(texts)
    assert vecs.shape == (4, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_batching_by_length_keeps_input_order(embedder: OnnxEmbedder) -> None:
    texts = ["a much longer sentence about valves and leaks " * 3, "short", "medium length text"]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-4)


def test_meaning_is_captured(embedder: OnnxEmbedder) -> None:
    q, para, other = embedder.embed(
        [
            "How tight should the pump bolts be?",
            "Torque the pump bolts to 40 Nm.",
            "Jupiter has moons.",
        ]
    )
    assert float(q @ para) > float(q @ other) + 0.2


def test_missing_files_and_models_fail_clearly(tmp_path: object) -> None:
    with pytest.raises(ConfigError, match="not found"):
        OnnxEmbedder(tmp_path / "none.onnx", tmp_path / "tok.json", name="x")  # type: ignore[operator]
    with pytest.raises(ConfigError):
        SentenceTransformerEmbedder(tmp_path / "absent")  # type: ignore[operator]
