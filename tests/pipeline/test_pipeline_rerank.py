"""`[rerank] model_path` from citebound.toml / CITEBOUND_RERANK_* reaches the rerank stage of
`ask` (and `config show`), on the demo store with a tiny ONNX cross-encoder the test writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citebound.audit import SQLiteAuditSink
from citebound.cli import main
from citebound.config import ENV_VARS, load_config
from citebound.errors import ConfigError
from citebound.pipeline import Pipeline, PipelineContext, RequestState
from citebound.rerank import OnnxCrossEncoderReranker, PassthroughReranker, order_by_scores
from citebound.store.sqlite import SqliteStore
from citebound.testing.tiny_cross_encoder import write_tiny_cross_encoder

TORQUE = "What torque should the HP-220 impeller bolts be tightened to?"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_cross_encoder(tmp_path_factory.mktemp("xenc") / "tiny-xenc")


def _config_file(tmp_path: Path, store: SqliteStore, rerank: str) -> Path:
    f = tmp_path / "citebound.toml"
    f.write_text(
        f'store = "{store.root}"\ncollection = "demo"\n'
        f'[limits]\nn2_rerank_top_k = 8\n[audit]\nsqlite_path = "{tmp_path / "audit.sqlite"}"\n'
        f"{rerank}",
        "utf-8",
    )
    return f


def _run(config_file: Path, store: SqliteStore) -> tuple[RequestState, PipelineContext]:
    ctx = PipelineContext(load_config(config_file, env={}), store_override=store)
    try:
        return Pipeline(ctx).run(TORQUE), ctx
    finally:
        ctx.close()


def test_rerank_section_file_env_and_errors(tmp_path: Path, model_dir: Path) -> None:
    assert {
        "CITEBOUND_RERANK_MODEL_PATH",
        "CITEBOUND_RERANK_BATCH_SIZE",
        "CITEBOUND_RERANK_MAX_LENGTH",
    } <= set(ENV_VARS)
    default = load_config(None, env={})
    assert (default.rerank.model_path, default.rerank.batch_size) == ("", 32)
    f = tmp_path / "c.toml"
    f.write_text(f'[rerank]\nmodel_path = "{model_dir}"\nbatch_size = 4\n', "utf-8")
    c = load_config(f, env={})
    assert (c.rerank.model_path, c.rerank.batch_size, c.rerank.max_length) == (
        str(model_dir),
        4,
        0,
    )
    env = load_config(f, env={"CITEBOUND_RERANK_MODEL_PATH": "elsewhere"})
    assert env.rerank.model_path == "elsewhere" and env.fingerprint != c.fingerprint
    with pytest.raises(ConfigError, match=r"rerank\.batch_size"):
        load_config(f, env={"CITEBOUND_RERANK_BATCH_SIZE": "0"})
    with pytest.raises(ConfigError, match=r"rerank\.modle_path"):
        f.write_text('[rerank]\nmodle_path = "x"\n', "utf-8")
        load_config(f, env={})
    # a missing model fails when the context is built, not on the first request
    missing = load_config(None, env={"CITEBOUND_RERANK_MODEL_PATH": str(tmp_path / "nope")})
    with pytest.raises(ConfigError, match="does not exist") as err:
        PipelineContext(missing)
    assert err.value.field == "rerank.model_path"


def test_pipeline_from_a_config_file_reranks_and_traces_the_model(
    demo_store: SqliteStore, tmp_path: Path, model_dir: Path
) -> None:
    state, ctx = _run(
        _config_file(tmp_path, demo_store, f'[rerank]\nmodel_path = "{model_dir}"\n'), demo_store
    )
    assert isinstance(ctx.reranker, OnnxCrossEncoderReranker)
    assert ctx.retriever.reranker is ctx.reranker
    head = state.views_by_stage["retrieval"][:8]  # N2 from [limits], not a constant
    reranked = state.views_by_stage["reranked"]
    by_id = state.rows_by_id()
    scores = OnnxCrossEncoderReranker(model_dir).scores(
        state.extras["query"], [by_id[i].chunk_text for i in head]
    )
    assert sorted(reranked) == sorted(head)  # the candidate set never changes
    assert reranked == order_by_scores(head, scores) and reranked != head
    assert max(scores) >= 2.0  # torque, impeller, bolts all count
    record = next(r for r in state.stage_log if r.stage == "reranked")
    assert record.note == "reranker onnx-cross-encoder:tiny-xenc"
    assert record.kept == reranked
    assert state.response is not None and state.response.status.value == "OK"
    # Named where an auditor looks: the bundle, its trace and the hashed audit record.
    assert state.retrieval_bundle is not None and state.answer_bundle is not None
    assert state.retrieval_bundle.reranker == "onnx-cross-encoder:tiny-xenc"
    assert state.answer_bundle.trace.reranker == "onnx-cross-encoder:tiny-xenc"
    with SQLiteAuditSink(tmp_path / "audit.sqlite") as sink:
        (audit,) = sink.find(state.request_id)
    assert audit.reranker == "onnx-cross-encoder:tiny-xenc" and audit.hash_ok()

    plain, plain_ctx = _run(_config_file(tmp_path, demo_store, ""), demo_store)
    assert isinstance(plain_ctx.reranker, PassthroughReranker)
    assert plain.views_by_stage["retrieval"][:8] == head  # same retrieval either way
    assert plain.views_by_stage["reranked"] == head
    assert next(r for r in plain.stage_log if r.stage == "reranked").note == (
        "reranker passthrough"
    )
    with SQLiteAuditSink(tmp_path / "audit.sqlite") as sink:
        (plain_audit,) = sink.find(plain.request_id)
    assert plain_audit.reranker == "passthrough" and plain_audit.hash_ok()


def _cli(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    env = {"CITEBOUND_AUDIT_SQLITE_PATH": str(tmp_path / "audit.sqlite"), **(env or {})}
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_ask_reranker_option_config_show_and_bad_paths(
    demo_store: SqliteStore, tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    where = ["--store", str(demo_store.root), "--collection", "demo"]
    code, out, _ = _cli(tmp_path, "ask", TORQUE, "--step", "--reranker", str(model_dir), *where)
    assert code == 0 and "reranker onnx-cross-encoder:tiny-xenc" in out
    # the option beats the environment, which beats the (absent) file
    env = {"CITEBOUND_RERANK_MODEL_PATH": str(tmp_path / "missing")}
    code, out, _ = _cli(
        tmp_path, "ask", TORQUE, "--step", "--reranker", str(model_dir), *where, env=env
    )
    assert code == 0 and "reranker onnx-cross-encoder:tiny-xenc" in out
    code, _, err = _cli(tmp_path, "ask", TORQUE, *where, env=env)
    assert code == 2 and "does not exist" in err and "missing" in err
    (tmp_path / "empty").mkdir()
    code, _, err = _cli(tmp_path, "ask", TORQUE, "--reranker", str(tmp_path / "empty"), *where)
    assert code == 2 and "expected model.onnx" in err
    code, out, _ = _cli(tmp_path, "config", "show", env={"CITEBOUND_RERANK_MODEL_PATH": "m"})
    shown = json.loads(out)["config"]["rerank"]
    assert code == 0 and shown == {"model_path": "m", "batch_size": 32, "max_length": 0}
