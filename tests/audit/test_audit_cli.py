"""`citebound audit list|show|export|replay` against a real SQLite store."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest
from audit_samples import EVIDENCE, PATHS, record_for
from click.testing import CliRunner

from citebound.audit import AuditRecord, SQLiteAuditSink, audit_json
from citebound.cli import main
from citebound.contracts.base import canonical_json, sha256_hex


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "audit.sqlite"
    with SQLiteAuditSink(path) as sink:
        for i, p in enumerate(PATHS):
            ts = f"2026-01-01T00:00:0{i}.000000Z"
            sink.append(record_for(p, request_id=p, timestamp=ts, store_evidence_text=p == "ok"))
    return path


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["audit", *args])
    return r.exit_code, r.stdout, r.stderr


def test_list(store: Path) -> None:
    code, out, _ = _run("list", "--audit", str(store))
    assert code == 0
    lines = [line.split("\t") for line in out.splitlines()]
    assert [x[1] for x in lines] == list(PATHS)
    assert lines[0][3:6] == ["OK", "PASSED", "-"]
    assert lines[2][3:6] == ["FAILED", "FAILED", "INVALID_CITATION_REFERENCE"]
    assert all(len(x) == 7 for x in lines)  # the question is the last column


def test_show_and_missing(store: Path) -> None:
    code, out, _ = _run("show", "ok", "--audit", str(store))
    assert code == 0 and json.loads(out)["request_id"] == "ok"
    code, _, err = _run("show", "ghost", "--audit", str(store))
    assert code == 2 and "no audit record" in err
    code, _, err = _run("list", "--audit", str(store.parent / "none.sqlite"))
    assert code == 2 and "no audit store" in err


def test_export_jsonl_and_parquet(store: Path, tmp_path: Path) -> None:
    code, out, _ = _run("export", "--format", "jsonl", "--audit", str(store))
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["request_id"] for r in rows] == list(PATHS)
    assert all(AuditRecord.model_validate_json(line).hash_ok() for line in out.splitlines())
    pq = pytest.importorskip("pyarrow.parquet")
    target = tmp_path / "audit.parquet"
    code, _, _ = _run("export", "--format", "parquet", "--out", str(target), "--audit", str(store))
    assert code == 0
    assert pq.read_table(target).column("request_id").to_pylist() == list(PATHS)
    code, _, err = _run("export", "--format", "parquet", "--audit", str(store))
    assert code == 2 and "--out" in err


def test_export_jsonl_keeps_non_finite_numbers(tmp_path: Path) -> None:
    """A NaN support score exported and read back still verifies: pydantic's own JSON writes
    null for it, which changes the hashed bytes."""
    path = tmp_path / "audit.sqlite"
    record = record_for("ok", request_id="nan").model_copy(
        update={"min_support": math.nan, "latency_ms": math.inf}
    )
    with SQLiteAuditSink(path) as sink:
        sink.append(record.model_copy(update={"record_hash": record.compute_hash()}))
    code, out, _ = _run("export", "--format", "jsonl", "--audit", str(path))
    assert code == 0
    back = AuditRecord.model_validate_json(out.strip())
    assert back.hash_ok() and math.isnan(back.min_support or 0.0) and back.latency_ms == math.inf


def _nan_store(tmp_path: Path) -> Path:
    path = tmp_path / "audit.sqlite"
    record = record_for("ok", request_id="nan").model_copy(
        update={"min_support": math.nan, "latency_ms": math.inf}
    )
    with SQLiteAuditSink(path) as sink:
        sink.append(record.model_copy(update={"record_hash": record.compute_hash()}))
    return path


def test_show_and_export_print_the_same_compact_canonical_json(tmp_path: Path) -> None:
    """`audit show` and `export` print one encoding (audit_json): the canonical bytes the hash
    covers, NaN and infinities as tokens, no spaces after separators."""
    path = _nan_store(tmp_path)
    code, shown, _ = _run("show", "nan", "--audit", str(path))
    assert code == 0
    code, exported, _ = _run("export", "--format", "jsonl", "--audit", str(path))
    assert code == 0
    assert shown == exported  # one line each, byte for byte
    back = AuditRecord.model_validate_json(shown.strip())
    assert back.hash_ok() and math.isnan(back.min_support or 0.0)
    assert shown.strip() == audit_json(back) == canonical_json(back)
    assert '"min_support":NaN' in shown and '"latency_ms":Infinity' in shown


def test_an_unreadable_real_is_reported_not_a_traceback(tmp_path: Path) -> None:
    path = _nan_store(tmp_path)
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER audit_records_no_update")
    conn.execute("UPDATE audit_records SET min_support = 'lots' WHERE request_id = 'nan'")
    conn.commit()
    conn.close()
    for args in (("show", "nan"), ("export", "--format", "jsonl"), ("list",)):
        code, _, err = _run(*args, "--audit", str(path))
        assert code == 2 and "unreadable real in column min_support" in err, err


def test_replay_exit_codes(store: Path, tmp_path: Path) -> None:
    code, out, err = _run("replay", "ok", "--audit", str(store))
    assert code == 0 and json.loads(out)["verdict_changed"] is False and "same verdict" in err
    code, _, err = _run("replay", "rejected", "--audit", str(store))
    assert code == 2 and "store_evidence_text" in err
    evidence = tmp_path / "ev.json"
    evidence.write_text(json.dumps({sha256_hex(t)[:16]: t for t in EVIDENCE}), encoding="utf-8")
    code, _, _ = _run("replay", "rejected", "--evidence", str(evidence), "--audit", str(store))
    assert code == 0
    code, _, err = _run("replay", "gate", "--audit", str(store))
    assert code == 2 and "not called" in err


def test_show_detects_tampering_done_behind_the_triggers(store: Path) -> None:
    conn = sqlite3.connect(store)
    conn.execute("DROP TRIGGER audit_records_no_update")
    conn.execute("UPDATE audit_records SET latency_ms = 1 WHERE request_id = 'ok'")
    conn.commit()
    conn.close()
    code, _, err = _run("show", "ok", "--audit", str(store))
    assert code == 2 and "altered" in err
