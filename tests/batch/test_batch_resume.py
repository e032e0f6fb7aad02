"""`batch answer` survives a job that dies part-way: audit records are staged as the job goes,
and a re-run of the same run commits what was staged, asks the model only for the rest, and
never writes a record twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from batch_helpers import batch_config, support_policy

from citebound.audit.delta import DeltaAuditSink
from citebound.audit.location import table_location
from citebound.batch import worker
from citebound.batch.answer import answer_batch, executor_config
from citebound.batch.staging import Staging, call_file
from citebound.batch.tables import read_delta_arrow, read_questions
from citebound.batch.worker import answer_partitions
from citebound.contracts.audit import AuditRecord
from citebound.errors import ConfigError
from citebound.testing import ScriptedLLMServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ANSWER = "This is covered in the maintenance documentation [C0]."


def _audit_ids(out: Path) -> list[str]:
    return [r.request_id for r in DeltaAuditSink(out / "audit").records()]


def test_rerun_commits_staged_rows_and_answers_only_the_rest(
    spark: Any, demo_store_dir: Path, questions_file: Path, tmp_path: Path
) -> None:
    """The driver died after the executors staged some rows (nothing committed yet)."""
    import pandas as pd

    questions = read_questions(questions_file)
    config = batch_config(demo_store_dir)
    staging = Staging(table_location(tmp_path), "crashed")
    first = questions[:5]  # what a dead job's task had staged, 2 rows per file
    fn = answer_partitions(executor_config(config).model_dump_json(), "crashed", staging, 2)
    frame = pd.DataFrame(first, columns=["request_id", "text"])
    assert [len(f) for f in fn(iter([frame]))] == [5]
    assert len(staging.part_files()) == 3

    summary = answer_batch(
        spark, questions, config, table_location(tmp_path), run_id="crashed", partitions=3
    )
    assert summary.resumed == 5
    ids = _audit_ids(tmp_path)
    assert sorted(ids) == [rid for rid, _ in questions]  # every question once, none twice
    answers = read_delta_arrow(table_location(tmp_path / "answers")).column("request_id")
    assert sorted(answers.to_pylist()) == sorted(ids)
    assert staging.part_files() == []  # committed, then removed
    assert staging.read_manifest() is not None and staging.read_manifest()["complete"]
    with pytest.raises(ConfigError, match="a run is written once"):
        answer_batch(spark, questions, config, table_location(tmp_path), run_id="crashed")


def test_a_run_resumes_only_with_the_same_questions(
    spark: Any, demo_store_dir: Path, questions_file: Path, tmp_path: Path
) -> None:
    questions = read_questions(questions_file)
    config = batch_config(demo_store_dir)
    staging = Staging(table_location(tmp_path), "r")
    staging.write_manifest({"run_id": "r", "questions": 1, "complete": False})
    with pytest.raises(ConfigError, match="was started with other questions"):
        answer_batch(spark, questions, config, table_location(tmp_path), run_id="r")


def _cli(
    questions: Path, out: Path, store: Path, server: ScriptedLLMServer, policy: Path
) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from citebound.cli import main; main()",
        "batch",
        "answer",
        "--questions",
        str(questions),
        "--out",
        str(out),
        "--store",
        str(store),
        "--collection",
        "demo",
        "--provider",
        "openai",
        "--base-url",
        server.base_url,
        "--model",
        "scripted",
        "--policy",
        str(policy),
        "--run-id",
        "crash",
        "--master",
        "local[1]",
    ]


def _prompt_sha(request: Any) -> str:
    from citebound.contracts.base import sha256_hex

    return sha256_hex(request.prompt_text())


def test_killed_job_then_rerun_audits_every_question_once(
    demo_store_dir: Path, questions_file: Path, tmp_path: Path
) -> None:
    """The whole job (driver, JVM, Python workers) is killed while the model is answering its
    third call; the re-run asks the model only for rows without a staged record, and the call
    that was in flight is audited (FAILED, LLM_INTERRUPTED) instead of being asked again:
    every request the model received is in exactly one audit record."""
    out = tmp_path / "out"
    n = len(read_questions(questions_file))
    with ScriptedLLMServer(default_text=ANSWER) as server:
        server.reply(ANSWER, delay_s=0.3)
        server.reply(ANSWER, delay_s=0.3)
        server.reply(ANSWER, delay_s=120)  # still unanswered when the job is killed
        cmd = _cli(questions_file, out, demo_store_dir, server, support_policy(tmp_path, 0.0))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )
        deadline = time.monotonic() + 300
        while len(server.requests) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL, "the job ended before it was killed"

        staging = Staging(table_location(out), "crash")
        rows, bad = staging.read_parts(staging.part_files())
        staged = {r[0] for r in rows}
        assert bad == 0 and len(staged) >= 2  # local[1]: two answers were staged before call 3
        assert not (out / "audit").exists() or _audit_ids(out) == []
        # The call in flight was journaled before it was sent, with the prompt it sent.
        (lost_file,) = staging.call_files()
        intent = staging.read_object(f"calls/{lost_file}") or {}
        lost_id = intent["request_id"]
        assert lost_id not in staged and lost_file == call_file(lost_id)
        assert intent["prompt_sha256"] == [_prompt_sha(server.requests[2])]

        before = len(server.requests)
        again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert again.returncode == 0, again.stderr[-2000:]
        asked = len(server.requests) - before
        sent = [_prompt_sha(r) for r in server.requests]
    summary = json.loads(again.stdout)
    assert summary["resumed"] == len(staged)
    assert summary["audit_records"] == summary["answers"] == n
    records = DeltaAuditSink(out / "audit").records()
    counts = Counter(r.request_id for r in records)
    assert len(counts) == n and max(counts.values()) == 1  # every question once, none twice
    assert all(r.run_id == "crash" and r.hash_ok() for r in records)
    (lost,) = [r for r in records if r.llm_failure_reason == "LLM_INTERRUPTED"]
    assert lost.request_id == lost_id and lost.status.value == "FAILED"
    assert [c.prompt_sha256 for c in lost.model_calls or []] == intent["prompt_sha256"]
    # Every request the model received is audited, and no question was asked twice.
    audited_prompts = Counter(c.prompt_sha256 for r in records for c in r.model_calls or [])
    assert Counter(sent) == audited_prompts
    assert len(sent) == sum(r.attempts for r in records)
    # The model was asked again only for rows that had neither a staged record nor a call.
    assert asked == sum(r.attempts for r in records if r.request_id not in staged | {lost_id})
    assert sum(r.attempts for r in records if r.request_id in staged) >= 2
    assert staging.part_files() == [] and staging.call_files() == set()


def test_a_retried_task_audits_the_call_it_lost_instead_of_asking_again(
    demo_store_dir: Path, questions_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task dies after the model answered a call but before the row was staged (here: the
    staging write fails); Spark's retry of the task stages the FAILED LLM_INTERRUPTED record
    of that request, calls the model only for the others, and clears the intent."""
    import pandas as pd

    questions = read_questions(questions_file)[:3]
    staging = Staging(table_location(tmp_path), "retried")
    with ScriptedLLMServer(default_text=ANSWER) as server:
        config = batch_config(
            demo_store_dir,
            **{
                "provider.name": "openai",
                "provider.base_url": server.base_url,
                "provider.model": "scripted",
                "policy": str(support_policy(tmp_path, 0.0)),
            },
        )
        config_json = executor_config(config).model_dump_json()
        fn = answer_partitions(config_json, "retried", staging, 64)
        try:
            frame = pd.DataFrame(questions, columns=["request_id", "text"])
            real_write = Staging.write_part

            def lost(self: Staging, key: str, rows: list[tuple[str, str, str]]) -> str:
                raise OSError("the executor died")

            monkeypatch.setattr(Staging, "write_part", lost)
            with pytest.raises(OSError, match="died"):
                list(fn(iter([frame])))
            assert len(server.requests) == 1  # the first question reached the model
            monkeypatch.setattr(Staging, "write_part", real_write)
            out = pd.concat(list(fn(iter([frame]))))
            assert sorted(out["request_id"]) == sorted(rid for rid, _ in questions)
            asked_again = [_prompt_sha(r) for r in server.requests[1:]]
        finally:  # this process's worker context: its HTTP client to the scripted server
            pipe, _ = worker._CONTEXTS.pop(config_json)
            client = pipe.ctx.provider.inner._client
            pipe.ctx.close()
    assert client.is_closed  # the client inside the call journal is the context's to close
    assert _prompt_sha(server.requests[0]) not in asked_again  # not asked twice
    rows, _ = staging.read_parts(staging.part_files())
    records = {rid: AuditRecord.model_validate_json(a) for rid, _, a in rows}
    first = records[questions[0][0]]
    assert first.llm_failure_reason == "LLM_INTERRUPTED" and first.hash_ok()
    assert len(asked_again) == sum(r.attempts for r in records.values()) - 1
    assert staging.call_files() == set()


def test_eval_rerun_commits_staged_rows_and_audits_each_question_once(
    spark: Any, demo_store_dir: Path, questions_file: Path, tmp_path: Path
) -> None:
    """`batch eval` audits its pipeline runs the same way: an eval that died after staging
    some rows is re-run; those rows are committed, not asked again, and the metrics match a
    clean run."""
    import pandas as pd

    from citebound.batch.evaluate import eval_batch, eval_partitions

    questions = read_questions(questions_file)
    config = batch_config(demo_store_dir)
    clean = eval_batch(spark, questions, config, table_location(tmp_path / "clean"), qrels={})
    run = clean.run_id
    staging = Staging(table_location(tmp_path / "crashed"), run)
    fn = eval_partitions(executor_config(config).model_dump_json(), run, {}, {}, staging, {})
    frame = pd.DataFrame(questions[:4], columns=["request_id", "text"])
    assert [len(f) for f in fn(iter([frame]))] == [4]
    assert staging.part_files()

    again = eval_batch(spark, questions, config, table_location(tmp_path / "crashed"), qrels={})
    assert again.run_id == run and again.audit_records == len(questions)
    assert sorted(_audit_ids(tmp_path / "crashed")) == [rid for rid, _ in questions]
    strip = {"seconds", "out_uri", "audit_uri"}
    assert again.model_dump(exclude=strip) == clean.model_dump(exclude=strip)
    assert staging.part_files() == []
