"""SIGKILL a writer mid-stream: the file stays sound and no acknowledged record is lost."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from citebound.audit import SQLiteAuditSink

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"


@pytest.mark.integration
def test_sigkill_mid_stream_loses_no_acknowledged_record(tmp_path: Path) -> None:
    db = tmp_path / "audit.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(HERE)])}
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "audit_writer.py"), str(db)],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert proc.stdout is not None
    acknowledged: list[str] = []
    try:
        while len(acknowledged) < 60:
            line = proc.stdout.readline()
            assert line, f"writer exited early with {proc.poll()}"
            acknowledged.append(line.strip())
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    # Ids printed between our last read and the kill were acknowledged too.
    rest = proc.stdout.read()
    proc.stdout.close()
    acknowledged += [x for x in rest.split("\n")[:-1] if x]  # drop a possibly partial last line
    assert proc.returncode == -signal.SIGKILL

    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    sink = SQLiteAuditSink(db)
    assert sink.integrity_check() == "ok"
    for rid in acknowledged:
        found = sink.find(rid)
        assert len(found) == 1, rid
        assert found[0].hash_ok(), rid
    stored = sink.records()
    assert len(stored) >= len(acknowledged)
    assert all(r.hash_ok() for r in stored)
    sink.close()
