"""`citebound retrieve` in-process via click's CliRunner, on a MemoryStore passed as ctx.obj."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from citebound.cli import main
from citebound.contracts.retrieval import RetrievalBundle
from citebound.index import update_indexes
from citebound.index.embedder import OnnxEmbedder
from citebound.store.memory import MemoryStore


@pytest.fixture
def store(build_store: Callable[..., MemoryStore], embedder: OnnxEmbedder) -> MemoryStore:
    s = build_store()
    update_indexes(s, "default", embedder=embedder)
    return s


def _run(store: MemoryStore, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["retrieve", *args], obj={"store": store})
    return result.exit_code, result.stdout, result.stderr


def test_json_output_is_a_bundle(store: MemoryStore) -> None:
    code, out, _ = _run(store, "impeller bolt torque", "--json", "--policy", "hybridrag")
    bundle = RetrievalBundle.model_validate_json(out)
    assert code == 0 and bundle.retrieval_status.value == "SUCCESS"
    assert bundle.results[0].knowledge_id == "pump-manual"


def test_table_and_refusal_exit_code(store: MemoryStore) -> None:
    code, out, _ = _run(store, "impeller bolt torque", "--policy", "hybridrag")
    assert code == 0 and "gate: passed" in out and "Torque the impeller" in out.replace("\n", " ")
    # strict-v1's gate asks for a high top similarity: an off-topic question is refused (exit 3)
    code, out, _ = _run(store, "best pasta recipe with tomatoes")
    assert code == 3 and "GATE_BELOW_MIN_SCORE" in out


def test_filters_and_failures(store: MemoryStore) -> None:
    code, out, _ = _run(store, "leak", "--json", "--policy", "hybridrag", "--equipment-id", "V-7")
    assert {r["equipment_id"] for r in json.loads(out)["results"]} == {"V-7"}
    code, _, err = _run(store, "leak", "--date-from", "yesterday")
    assert code == 2 and "YYYY-MM-DD" in err
    code, _, err = _run(store, "leak", "--collection", "nope")
    assert code == 2 and "ingest" in err
    code, _, err = _run(store)
    assert code == 2 and "either a QUESTION or --queries" in err
    code, _, err = _run(store, "x", "--policy", "no-such-preset")
    assert code == 2 and "unknown policy" in err


def test_queries_file_writes_one_bundle_per_line(store: MemoryStore, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"_id": "q1", "text": "impeller bolt torque"}\n\n{"_id": "q2", "text": "valve leak"}\n',
        "utf-8",
    )
    out = tmp_path / "out.jsonl"
    code, _, err = _run(
        store, "--queries", str(queries), "--out", str(out), "--policy", "hybridrag"
    )
    lines = out.read_text("utf-8").splitlines()
    bundles = [RetrievalBundle.model_validate_json(line) for line in lines]
    assert code == 0 and "wrote 2 bundles" in err
    assert [b.request_id for b in bundles] == ["q1", "q2"]
    assert bundles[1].results[0].knowledge_id == "valve-report"
    code, stdout, _ = _run(store, "--queries", str(queries))
    assert code == 0 and len(stdout.splitlines()) == 2
    queries.write_text('{"_id": "q1"}\n', "utf-8")
    code, _, err = _run(store, "--queries", str(queries))
    assert code == 2 and "q.jsonl:1" in err


def test_reranker_from_option_or_config_file(
    store: MemoryStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citebound.rerank import OnnxCrossEncoderReranker, order_by_scores
    from citebound.testing.tiny_cross_encoder import write_tiny_cross_encoder

    monkeypatch.chdir(tmp_path)  # no ./citebound.toml
    model = write_tiny_cross_encoder(tmp_path / "tiny-xenc")
    question = "What torque for the pump bolt?"
    base = ["--json", "--policy", "hybridrag"]
    plain = RetrievalBundle.model_validate_json(_run(store, question, *base)[1])
    code, out, _ = _run(store, question, *base, "--reranker", str(model))
    reranked = RetrievalBundle.model_validate_json(out)
    n2 = 50  # hybridrag's N2 covers the whole small corpus
    head = plain.results[:n2]
    scores = OnnxCrossEncoderReranker(model).scores(question, [r.chunk_text for r in head])
    assert code == 0
    assert [r.chunk_id for r in reranked.results] == order_by_scores(
        [r.chunk_id for r in head], scores
    )[: len(reranked.results)]
    assert [r.chunk_id for r in reranked.results] != [r.chunk_id for r in plain.results]
    # the same from citebound.toml: [rerank] and [limits] apply to `retrieve` as to `ask`
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[rerank]\nmodel_path = "{model}"\n', "utf-8")
    code, out, _ = _run(store, question, *base, "--config", str(cfg))
    assert code == 0 and RetrievalBundle.model_validate_json(out).results == reranked.results
    cfg.write_text(f'[rerank]\nmodel_path = "{model}"\n[limits]\nn2_rerank_top_k = 1\n', "utf-8")
    code, out, _ = _run(store, question, *base, "--config", str(cfg))
    assert RetrievalBundle.model_validate_json(out).results == plain.results  # N2 = 1: no reorder
    code, _, err = _run(store, question, "--reranker", str(tmp_path / "nope"))
    assert code == 2 and "does not exist" in err
