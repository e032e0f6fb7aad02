"""`citebound serve` with `[rerank] model_path`: /v1/retrieve and /v1/steps use the configured
cross-encoder (a tiny ONNX one the test writes), loaded once at start-up."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from api_helpers import PLANT_QUESTION
from fastapi.testclient import TestClient

from citebound.api import create_app
from citebound.config import Config
from citebound.errors import ConfigError
from citebound.rerank import OnnxCrossEncoderReranker, order_by_scores
from citebound.testing.tiny_cross_encoder import write_tiny_cross_encoder


def test_server_reranks_with_the_configured_model(
    make_config: Callable[..., Config], tmp_path: Path
) -> None:
    model = write_tiny_cross_encoder(tmp_path / "tiny-xenc")
    with TestClient(create_app(make_config()), base_url="http://localhost") as plain_client:
        plain = plain_client.post("/v1/retrieve", json={"question": PLANT_QUESTION}).json()
    app = create_app(make_config(**{"rerank.model_path": str(model)}))
    with TestClient(app, base_url="http://localhost") as client:
        runtime = app.state.runtime
        assert "reranker" in runtime.ctx.__dict__  # loaded by warm-up, not by a request
        got = client.post("/v1/retrieve", json={"question": PLANT_QUESTION}).json()
        steps = client.post("/v1/steps", json={"question": PLANT_QUESTION, "to_end": True})
    ids = [r["chunk_id"] for r in got["results"]]
    xenc = OnnxCrossEncoderReranker(model)
    scores = xenc.scores(PLANT_QUESTION, [r["chunk_text"] for r in got["results"]])
    # the first N2 (50) were reranked, then cut to top_k (20): the rows are in score order,
    # and none of the plain top 20 that was left out scores higher than the last one kept
    assert ids == order_by_scores(ids, scores) and ids != [r["chunk_id"] for r in plain["results"]]
    left_out = [r["chunk_text"] for r in plain["results"] if r["chunk_id"] not in ids]
    assert all(s <= scores[-1] for s in xenc.scores(PLANT_QUESTION, left_out))
    assert steps.status_code == 200, steps.text
    assert "reranker onnx-cross-encoder:tiny-xenc" in steps.text


def test_server_refuses_to_start_without_the_model(
    make_config: Callable[..., Config], tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        create_app(make_config(**{"rerank.model_path": str(tmp_path / "nope")}))
