"""`batch answer` on real Spark: same rows for 1 and 4 partitions, one audit record per
question, deterministic ids, tables readable back by Spark, runs written once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from batch_helpers import batch_config as _config

from citebound.audit.location import table_location
from citebound.batch.answer import answer_batch
from citebound.batch.tables import (
    read_delta_arrow,
    read_delta_spark,
    read_questions,
    without_clock_fields,
)
from citebound.errors import ConfigError
from citebound.respond.renumber import relabel_text

pytestmark = [pytest.mark.integration, pytest.mark.slow]

_unclocked = without_clock_fields


def _rows(uri: str) -> list[dict[str, Any]]:
    table = read_delta_arrow(table_location(uri)).to_pylist()
    return sorted((_unclocked(r) for r in table), key=lambda r: r["request_id"])


def test_same_rows_for_1_and_4_partitions(two_runs: tuple[Any, Any, Any]) -> None:
    one, four, questions = two_runs
    assert (one.partitions, four.partitions) == (1, 4)
    assert one.statuses == four.statuses
    assert set(one.statuses) == {"OK", "NO_EVIDENCE"}  # both paths exercised
    answers_1, answers_4 = _rows(one.answers_uri), _rows(four.answers_uri)
    assert answers_1 == answers_4 and len(answers_1) == len(questions)
    audit_1, audit_4 = _rows(one.audit_uri), _rows(four.audit_uri)
    assert audit_1 == audit_4


def test_one_audit_record_per_question_with_deterministic_ids(
    two_runs: tuple[Any, Any, Any],
) -> None:
    from citebound.audit.delta import DeltaAuditSink

    one, _, questions = two_runs
    records = DeltaAuditSink(one.audit_uri).records()
    assert one.audit_records == len(records) == len(questions)
    assert sorted(r.request_id for r in records) == [rid for rid, _ in questions]
    assert {r.run_id for r in records} == {"r"}
    assert all(r.hash_ok() for r in records)
    by_id = {r.request_id: r for r in records}
    answers = {r["request_id"]: r for r in _rows(one.answers_uri)}
    # The demo's answerable questions are answered: the relabelling below is exercised.
    assert any(row["status"] == "OK" for row in answers.values())
    for rid, row in answers.items():  # the answer table is what the audit says was returned
        assert row["status"] == by_id[rid].status.value
        assert row["run_id"] == "r"
        if row["status"] == "OK":
            # The audit keeps the prompt's anchors and what the reader was shown instead.
            shown = by_id[rid].display_anchors or {}
            raw = by_id[rid].validated_answer_text or ""
            assert row["answer"] == relabel_text(raw, shown, "C")
            assert [c["anchor"] for c in row["citations"]] == [
                shown[a] for a in by_id[rid].validated_citations
            ]


def test_spark_reads_the_tables_back(spark: Any, two_runs: tuple[Any, Any, Any]) -> None:
    one, _, questions = two_runs
    answers = read_delta_spark(spark, table_location(one.answers_uri))
    assert answers.count() == len(questions)
    ok = answers.where("status = 'OK'").select("request_id", "citations").collect()
    assert ok and all(len(r["citations"]) >= 1 for r in ok)
    audit = read_delta_spark(spark, table_location(one.audit_uri))
    assert audit.select("request_id").distinct().count() == len(questions)


def test_default_run_id_is_deterministic_and_a_run_is_written_once(
    spark: Any, demo_store_dir: Path, questions_file: Path, tmp_path: Path
) -> None:
    questions = read_questions(questions_file)[:4]
    config = _config(demo_store_dir)
    first = answer_batch(spark, questions, config, table_location(tmp_path), partitions=2)
    assert first.run_id.startswith("batch-")
    with pytest.raises(ConfigError, match="already holds 4 rows of run"):
        answer_batch(spark, questions, config, table_location(tmp_path), partitions=3)
    again = answer_batch(
        spark, questions, config, table_location(tmp_path), run_id="rerun", partitions=3
    )
    assert again.audit_records == 4
    assert len(_rows(again.audit_uri)) == 8  # appended, both runs kept


def test_cli_batch_answer(demo_store_dir: Path, questions_file: Path, tmp_path: Path) -> None:
    """The command end to end in a fresh process (its own local[1] session)."""
    import os
    import subprocess
    import sys

    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from citebound.cli import main; main()",
            "batch",
            "answer",
            "--questions",
            str(questions_file),
            "--out",
            f"file://{out}",
            "--store",
            str(demo_store_dir),
            "--collection",
            "demo",
            "--master",
            "local[1]",
            "--partitions",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "CITEBOUND_PROVIDER": "extractive"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    n = len(read_questions(questions_file))
    assert summary["answers"] == summary["audit_records"] == n
    assert len(_rows(str(out / "audit"))) == n


def test_bad_questions_fail_with_the_row(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"_id": "a", "text": "x?"}\n{"_id": "a", "text": "y?"}\n')
    with pytest.raises(ConfigError, match="row 2: id 'a' repeats row 1"):
        read_questions(path)
    path.write_text('{"text": "same?"}\n{"text": ""}\n')
    with pytest.raises(ConfigError, match="row 2: `text` must be a non-empty string"):
        read_questions(path)
    path.write_text('{"text": "same?"}\n{"text": "nul\\u0000?"}\n')
    with pytest.raises(ConfigError, match=r"row 2: `text` or its id contains U\+0000"):
        read_questions(path)
    path.write_text('{"text": "same?"}\n{"_id": "q\\u0000x", "text": "other?"}\n')
    with pytest.raises(ConfigError, match=r"row 2: `text` or its id contains U\+0000"):
        read_questions(path)
    path.write_text('{"text": "same?"}\n')
    ((rid, _),) = read_questions(path)
    assert rid.startswith("q-") and read_questions(path)[0][0] == rid
