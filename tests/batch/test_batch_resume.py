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
from citebound.batch.answer import answer_batch, executor_config
from citebound.batch.staging import Staging
from citebound.batch.tables import read_delta_arrow, read_questions
from citebound.batch.worker import answer_partitions
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


def test_killed_job_then_rerun_audits_every_question_once(
    demo_store_dir: Path, questions_file: Path, tmp_path: Path
) -> None:
    """The whole job (driver, JVM, Python workers) is killed while the model is answering;
    the re-run asks the model only for rows without a staged record."""
    out = tmp_path / "out"
    n = len(read_questions(questions_file))
    with ScriptedLLMServer(default_text=ANSWER) as server:
        for _ in range(4 * n):  # slow answers, so the job is surely mid-way when killed
            server.reply(ANSWER, delay_s=0.3)
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

        before = len(server.requests)
        again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert again.returncode == 0, again.stderr[-2000:]
        asked = len(server.requests) - before
    summary = json.loads(again.stdout)
    assert summary["resumed"] == len(staged)
    assert summary["audit_records"] == summary["answers"] == n
    records = DeltaAuditSink(out / "audit").records()
    counts = Counter(r.request_id for r in records)
    assert len(counts) == n and max(counts.values()) == 1  # every question once, none twice
    assert all(r.run_id == "crash" and r.hash_ok() for r in records)
    # The model was asked again only for rows that had no staged record.
    assert asked == sum(r.attempts for r in records if r.request_id not in staged)
    assert sum(r.attempts for r in records if r.request_id in staged) >= 2
    assert staging.part_files() == []


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
