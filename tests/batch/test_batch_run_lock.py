"""One driver per batch run id: a second driver on a live run fails closed at once
(BATCH_RUN_LOCKED, nothing of the run touched); a dead driver's lock is taken over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from batch_helpers import batch_config
from click.testing import CliRunner

from citebound.audit.location import table_location
from citebound.batch.answer import answer_batch
from citebound.batch.run_lock import LEASE_NAME, RunLocked, run_lock
from citebound.batch.staging import Staging
from citebound.batch.tables import read_questions
from citebound.cli import main

# A driver in another process: takes the run's lock, says so, and holds it until killed.
HOLDER = """
import sys, time
from citebound.audit.location import table_location
from citebound.batch.run_lock import run_lock
from citebound.batch.staging import Staging
with run_lock(Staging(table_location(sys.argv[1]), sys.argv[2])):
    print("held", flush=True)
    time.sleep(600)
"""


def _holder(out: Path, run: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out), run], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_driver_fails_closed_and_a_dead_drivers_lock_is_taken_over(
    spark: Any, demo_store_dir: Path, questions_file: Path, tmp_path: Path
) -> None:
    questions = read_questions(questions_file)
    config = batch_config(demo_store_dir)
    where = table_location(tmp_path)
    staging = Staging(where, "shared")
    proc = _holder(tmp_path, "shared")
    try:
        with pytest.raises(RunLocked, match=rf"BATCH_RUN_LOCKED: .*pid {proc.pid} on "):
            answer_batch(spark, questions, config, where, run_id="shared")
        # Failed closed: nothing of the run was read, written or asked.
        assert staging.read_manifest() is None and staging.part_files() == []
        assert not (tmp_path / "answers").exists()
        q = tmp_path / "q.jsonl"
        q.write_text("".join(json.dumps({"_id": r, "text": t}) + "\n" for r, t in questions))
        result = CliRunner().invoke(
            main,
            ["batch", "answer", "--questions", str(q), "--out", str(tmp_path), "--store",
             str(demo_store_dir), "--collection", "demo", "--run-id", "shared"],
        )  # fmt: skip
        assert result.exit_code == 2
        (line,) = result.output.strip().splitlines()
        assert line.startswith("citebound: BATCH_RUN_LOCKED: run 'shared'")
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # the driver dies holding the lock
        proc.wait(timeout=30)
        assert proc.stdout is not None
        proc.stdout.close()
    summary = answer_batch(spark, questions, config, where, run_id="shared")
    assert summary.audit_records == len(questions)  # the lock was taken over, the run ran


def _lease_holder(staging: Staging, expires_in: float) -> None:
    staging.write_object(
        LEASE_NAME,
        {"pid": 1, "host": "elsewhere", "started_utc": "x", "token": "t",
         "expires": time.time() + expires_in},
    )  # fmt: skip


def _until(condition: Callable[[], bool], limit_s: float = 60.0) -> None:
    """Poll `condition` until it holds; fail after `limit_s` (a hung heartbeat)."""
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, "the heartbeat never got there"
        time.sleep(0.02)


def test_an_object_store_lease_refuses_a_live_holder_and_takes_over_an_expired_one(
    tmp_path: Path,
) -> None:
    """The lease used where no OS lock reaches (s3://, abfss://, gs://), run on a local
    directory through the same object-store calls."""
    staging = Staging(table_location(tmp_path), "leased")
    _lease_holder(staging, 60.0)
    with (
        pytest.raises(RunLocked, match=r"BATCH_RUN_LOCKED: .*pid 1 on elsewhere"),
        run_lock(staging, kind="object"),
    ):
        pass
    _lease_holder(staging, -1.0)  # its driver died a while ago: the lease expired
    # 3 s: a renewal starved for a second or two on a loaded host must not lose the lease.
    with run_lock(staging, kind="object", lease_seconds=3.0) as lock:
        mine = staging.read_object(LEASE_NAME)
        assert mine is not None and mine["pid"] == os.getpid()
        first = lock.valid_until
        assert first is not None
        # Past the first expiry, held by a renewal: waited for, not slept for (a renewal
        # delayed on a loaded host must only make the test wait).
        _until(lambda: first < time.monotonic() < (lock.valid_until or 0.0))
        renewed = staging.read_object(LEASE_NAME)
        assert renewed is not None and renewed["expires"] > mine["expires"]
        lock.check()
        # Taken over (this driver looked dead to another), by a live driver that renews its
        # lease as ours does: a heartbeat caught between its read and its write overwrites
        # one takeover (the object store has no conditional write, docs/batch.md), never
        # every renewal. Noticed by the heartbeat, not merely expired.
        _until(lambda: _lease_holder(staging, 60.0) or lock.lost)
        with pytest.raises(RunLocked, match="being written by another driver") as refused:
            lock.check()  # the next commit is refused
        assert "keeps its lease until it expires" in str(refused.value)  # not the OS lock's
    assert staging.read_object(LEASE_NAME)["host"] == "elsewhere"  # not ours to delete


def test_the_lease_is_released_at_the_end(tmp_path: Path) -> None:
    staging = Staging(table_location(tmp_path), "released")
    with run_lock(staging, kind="object"):
        assert staging.read_object(LEASE_NAME) is not None
    assert staging.read_object(LEASE_NAME) is None
    with run_lock(staging):  # and the OS lock is free again after its block
        pass
    with run_lock(staging):
        pass


def test_a_lease_left_unrenewed_past_its_expiry_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Renewals that keep failing (the store unreachable from this driver) let the lease
    expire: another driver may take it over, so the next commit must be refused even though
    this driver never saw the other's lease."""
    staging = Staging(table_location(tmp_path), "unrenewed")
    with run_lock(staging, kind="object", lease_seconds=0.3) as lock:
        lock.check()

        def unreachable(name: str, data: dict[str, Any]) -> None:
            raise OSError("store unreachable")

        monkeypatch.setattr(staging, "write_object", unreachable)
        time.sleep(0.6)  # twice the lease: expired, never renewed
        with pytest.raises(RunLocked, match="expired"):
            lock.check()
        monkeypatch.undo()


def test_a_commit_stops_at_the_next_group_once_the_lock_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large run commits in groups (COMMIT_ROWS), one Delta commit each, and can take long
    enough for its lease to be lost meanwhile; Delta appends are blind, so a driver that went
    on would write the records its successor writes too. The commit checks the lock before
    each group and stops, leaving the rest staged for the driver that holds the run now."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "audit"))
    from audit_samples import record_for

    from citebound.audit.delta import DeltaAuditSink
    from citebound.batch import commit
    from citebound.batch.staging import slice_key
    from citebound.contracts.public import PublicResponse

    out = table_location(tmp_path)
    staging = Staging(out, "big")
    key = slice_key("big", "a")
    for rid in ("a", "b", "c"):  # three staged files, one group each below
        response = PublicResponse.model_validate(
            {"request_id": rid, "status": "NO_EVIDENCE", "answer": "Not in the documents.",
             "token_usage": {"prompt": 0, "completion": 0, "total": 0}, "latency_ms": 1.0}
        )  # fmt: skip
        record = record_for("refusal", request_id=rid, run_id="big")
        staging.write_part(key, [(rid, response.model_dump_json(), record.model_dump_json())])
    audit_at, answers_at = out.child("audit"), out.child("answers")
    DeltaAuditSink(audit_at)
    monkeypatch.setattr(commit, "COMMIT_ROWS", 1)
    checks: list[int] = []

    def check() -> None:
        checks.append(1)
        if len(checks) > 1:  # the lease was taken over while the first group was written
            raise RunLocked("BATCH_RUN_LOCKED: lost")

    with pytest.raises(RunLocked):
        commit.commit_staged(staging, {"a", "b", "c"}, audit_at, answers_at, check=check)
    assert len(commit.run_request_ids(audit_at, "big")) == 1  # the first group only
    assert len(staging.part_files()) == 2  # left for the driver that holds the run now
    done = commit.commit_staged(staging, {"a", "b", "c"}, audit_at, answers_at)
    assert done.audit_appended == 2 and len(DeltaAuditSink(audit_at).records()) == 3
