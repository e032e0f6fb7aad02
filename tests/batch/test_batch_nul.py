"""`batch answer`'s write path keeps a model reply holding U+0000, on either store.

The executors stage each audit record and response as JSON in Parquet, and the driver commits
them to the Delta tables: no PostgreSQL TEXT on the way, whichever store the questions are
answered from. This proves it end to end for the task function the executors run (without
Spark: the same function on a pandas frame, as Spark's mapInPandas calls it) and the driver's
commit: one audit record per question, the NUL kept, the hash verifying after the round trip.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from batch_helpers import batch_config, support_policy
from click.testing import CliRunner

from citebound.audit.delta import DeltaAuditSink
from citebound.audit.location import table_location
from citebound.batch import worker
from citebound.batch.answer import executor_config
from citebound.batch.commit import commit_staged
from citebound.batch.staging import Staging
from citebound.batch.tables import read_delta_arrow
from citebound.batch.worker import answer_partitions
from citebound.cli import main
from citebound.testing import ScriptedLLMServer

NUL = "\x00"
REPLY = f"The GB-7 gearbox uses ISO VG 220{NUL} oil \\0 [C0]."
QUESTIONS = [
    ("gb7-oil", "What is the GB-7 gearbox oil grade?"),
    ("gb7-oil-b", "Which oil grade does the GB-7 gearbox take?"),
]
CORPUS = Path(__file__).resolve().parents[2] / "src" / "citebound" / "sample_corpus"


@pytest.mark.integration
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_nul_in_the_model_reply_is_staged_committed_and_verifies(
    backend: str,
    request: pytest.FixtureRequest,
    demo_store_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pandas as pd

    store, extra = demo_store_dir, {}
    if backend == "postgres":
        url = request.getfixturevalue("pg_url")
        store, extra = tmp_path / "cache", {"database": url}
        docs = tmp_path / "docs"
        docs.mkdir()
        (docs / "gb7.md").write_text((CORPUS / "gb7_specification.md").read_text("utf-8"))
        r = CliRunner().invoke(main, ["ingest", str(docs), "--collection", "demo", "--store",
                                      str(store), "--database", url, "--no-progress"])  # fmt: skip
        assert r.exit_code == 0, r.output
    out = table_location(tmp_path / "out")
    staging = Staging(out, "nul")
    with ScriptedLLMServer(default_text=REPLY) as server:
        config = batch_config(
            store,
            **{
                **extra,
                "provider.name": "openai",
                "provider.base_url": server.base_url,
                "provider.model": "scripted",
                "policy": str(support_policy(tmp_path, 0.0)),
            },
        )
        config_json = executor_config(config).model_dump_json()
        fn = answer_partitions(config_json, "nul", staging, 64)
        try:
            done = pd.concat(
                list(fn(iter([pd.DataFrame(QUESTIONS, columns=["request_id", "text"])])))
            )
        finally:
            pipe, _ = worker._CONTEXTS.pop(config_json)
            pipe.ctx.close()
        asked = len(server.requests)
    assert sorted(done["request_id"]) == sorted(rid for rid, _ in QUESTIONS)
    staged, bad = staging.read_parts(staging.part_files())
    assert bad == 0 and len(staged) == len(QUESTIONS)
    audit_at, answers_at = out.child("audit"), out.child("answers")
    DeltaAuditSink(audit_at)
    commit_staged(staging, {rid for rid, _ in QUESTIONS}, audit_at, answers_at)
    records = DeltaAuditSink(audit_at).records()
    assert sorted(r.request_id for r in records) == sorted(rid for rid, _ in QUESTIONS)
    assert sum(r.attempts for r in records) == asked >= len(QUESTIONS)  # each call audited once
    for record in records:
        assert record.hash_ok() and record.raw_model_text == REPLY
        assert all(c.raw_output == REPLY for c in record.model_calls or [])
    answers: list[dict[str, Any]] = read_delta_arrow(answers_at).to_pylist()
    assert len(answers) == len(QUESTIONS)
