"""`citebound ingest` and `citebound documents list` through click's runner and a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from citebound.cli import main


def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nAlpha text.\n", encoding="utf-8")
    (docs / "empty.txt").write_text("", encoding="utf-8")
    return docs


def test_ingest_prints_summary_with_skips(tmp_path: Path) -> None:
    docs = corpus(tmp_path)
    store = tmp_path / "store"
    result = CliRunner().invoke(main, ["ingest", str(docs), "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "collection default: 2 files (1 added" in result.output
    assert "docs/empty.txt  EMPTY  file is empty" in result.output
    again = CliRunner().invoke(main, ["ingest", str(docs), "--store", str(store), "--json"])
    report = json.loads(again.output)
    assert (report["files_unchanged"], report["chunks_written"]) == (1, 0)


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(main, ["ingest", str(tmp_path / "nope"), "--store", str(tmp_path)])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    assert runner.invoke(main, ["ingest"]).exit_code == 2
    bad = runner.invoke(main, ["ingest", str(tmp_path), "--chunk-tokens", "20", "--overlap", "15"])
    assert bad.exit_code == 2 and "overlap_tokens" in bad.output


def test_documents_list(tmp_path: Path) -> None:
    docs = corpus(tmp_path)
    store = tmp_path / "store"
    runner = CliRunner()
    runner.invoke(main, ["ingest", str(docs), "--store", str(store), "--collection", "c1"])
    listed = runner.invoke(main, ["documents", "list", "--store", str(store), "--json"])
    rows = [json.loads(line) for line in listed.output.splitlines()]
    assert [(r["collection"], r["source_path"], r["title"]) for r in rows] == [
        ("c1", "docs/a.md", "Alpha")
    ]
    none = runner.invoke(main, ["documents", "list", "--store", str(tmp_path / "absent")])
    assert none.exit_code == 2 and "no store" in none.output


def test_ingest_and_documents_list_use_the_configs_store_and_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The shared --store / --collection (#32 item 6): omitted, the config's, as for `ask`
    # (ingest once filled ./.citebound while ask read the configured store).
    corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    for var in ("CITEBOUND_STORE", "CITEBOUND_COLLECTION", "CITEBOUND_DATABASE_URL"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "citebound.toml").write_text(
        'store = "kb"\ncollection = "manuals"\n', encoding="utf-8"
    )
    runner = CliRunner()
    result = runner.invoke(main, ["ingest", "docs"])
    assert result.exit_code == 0, result.output
    assert "collection manuals:" in result.output
    assert (tmp_path / "kb" / "store.sqlite").is_file()
    assert not (tmp_path / ".citebound").exists()
    listed = runner.invoke(main, ["documents", "list", "--json"])
    assert [json.loads(line)["collection"] for line in listed.output.splitlines()] == ["manuals"]


def _python_m_ingest(tmp_path: Path, docs: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m citebound ingest DOCS --store TMP/s` in a fresh interpreter."""
    src = str(Path(__file__).resolve().parents[2] / "src")
    return subprocess.run(
        [sys.executable, "-m", "citebound", "ingest", str(docs), "--store", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": src, **env},
        check=False,
    )


@pytest.mark.integration
def test_python_m_citebound_ingest(tmp_path: Path) -> None:
    proc = _python_m_ingest(tmp_path, corpus(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "1 added" in proc.stdout and proc.stderr == ""  # no progress bar off a terminal


@pytest.mark.integration
def test_ingest_on_a_terminal_shows_an_embedding_bar(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Pump\n\nTorque the bolts to 40 Nm.\n", encoding="utf-8")
    # FORCE_COLOR makes rich treat the pipe as a terminal, as a user's shell would be.
    proc = _python_m_ingest(tmp_path, docs, FORCE_COLOR="1")
    assert proc.returncode == 0, proc.stderr
    assert "index updated (search index idx-" in proc.stdout
    assert "embedding chunks" in proc.stderr and "1/1" in proc.stderr
