"""Usage errors of `citebound batch` end in one line and exit 2, before any Spark work."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from citebound.cli import main
from citebound.errors import ConfigError


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["batch", *args])
    return result.exit_code, result.output


def test_errors_are_one_line_with_exit_2(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text('{"_id": "1", "text": "What torque?"}\n')
    code, out = _run(
        "answer",
        "--questions",
        str(q),
        "--out",
        str(tmp_path / "o"),
        "--database",
        "postgresql://u:hunter2@127.0.0.1:9/x?connect_timeout=2",
    )
    assert code == 2 and "cannot reach the" in out and "hunter2" not in out
    code, out = _run(
        "answer",
        "--questions",
        str(q),
        "--out",
        str(tmp_path / "o"),
        "--store",
        str(tmp_path / "nostore"),
    )
    assert code == 2 and "no citebound store at" in out
    code, out = _run("answer", "--questions", str(q), "--out", "hdfs://nn/x")
    assert code == 2 and "unsupported table URI scheme 'hdfs'" in out
    q.write_text('{"_id": "1", "text": ""}\n')
    code, out = _run("answer", "--questions", str(q), "--out", str(tmp_path / "o"))
    assert code == 2 and "row 1: `text` must be a non-empty string" in out
    assert "Traceback" not in out


def test_cli_start_does_not_import_pyspark() -> None:
    import subprocess

    code = "import sys; from citebound.cli import main; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_run_id_is_one_path_segment(tmp_path: Path) -> None:
    # `--run-id a/../b` would point the run's staging, lock and call journal at another run's
    # folder; such ids fail before anything is written.
    from citebound.audit.location import table_location
    from citebound.batch.staging import Staging

    out = table_location(tmp_path / "o")
    for bad in ("a/../b", "../x", "..", "a/b", "", ".hidden", "x" * 129, "a\\b"):
        with pytest.raises(ConfigError, match="run id"):
            Staging(out, bad)
    for good in ("r", "batch-0123456789abcdef", "eval-2026.11.26_a"):
        assert Staging(out, good).run_id == good
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("error", "code"), [(ConfigError("the run is locked"), 2), (RuntimeError("bug"), 1)]
)
def test_spark_stops_when_a_job_fails(
    monkeypatch: pytest.MonkeyPatch, error: Exception, code: int
) -> None:
    """A job that raises (a CiteboundError: one line, exit 2; anything else: click's exit 1)
    still stops the Spark it started: a session left to interpreter exit can abort the
    process (`_shutdown`)."""
    import click

    from citebound.cli import batch

    stopped: list[bool] = []
    monkeypatch.setattr(batch, "_active_spark", lambda: None)  # none before the command
    monkeypatch.setattr(batch, "_shutdown", lambda stop_spark: stopped.append(stop_spark))

    def body() -> Any:
        raise error

    command = click.command("job")(batch._job()(body))
    result = CliRunner().invoke(command, [])
    assert result.exit_code == code and stopped == [True]
    if code == 2:
        assert result.output == "citebound: the run is locked\n"
