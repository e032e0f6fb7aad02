"""A cold `citebound ask` as a shell runs it: a new process, the query embedder loading in a
helper process (cli/_embedder_process.py) or on a thread (cli/_warm.py), and an exit without
the interpreter's teardown (cli/_exit.py). Results must not depend on any of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from citebound.audit import SQLiteAuditSink
from citebound.store.sqlite import SqliteStore

QUESTIONS = [
    ("q1", "What torque should the HP-220 impeller bolts be tightened to?"),
    ("q2", "What is the CX-9 safety valve set pressure?"),
    ("q3", "Who is the CEO of the company that operates this plant?"),
]
# Wall-clock fields (and the hash over them): the only ones allowed to differ between two runs
# of the same questions.
TIMING = {"latency_ms", "llm_latency_ms", "timestamp_utc", "record_hash"}

# How the query embedder loads: `python -m citebound` owns its process and forks the helper
# process (cli/_embedder_process.py); `main(argv)` does not own it and loads on threads
# (cli/_warm.py); with the background loads switched off everything loads on the main thread
# when the request first needs it, as in a library caller.
LOADERS = {
    "helper": ["-m", "citebound"],
    "thread": ["-c", "import sys\nfrom citebound.cli import main\nmain(sys.argv[1:])\n"],
    "none": [
        "-c",
        "import sys\n"
        "import citebound.cli._warm as warm\n"
        "warm.prewarm_embedder = lambda: None\n"
        "warm.prewarm_tokenizer = lambda name: None\n"
        "from citebound.cli import main\n"
        "main(sys.argv[1:])\n",
    ],
}


def _run(
    argv: list[str], audit: Path, *, loader: str = "helper"
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, CITEBOUND_AUDIT_SQLITE_PATH=str(audit))
    return subprocess.run(
        [sys.executable, *LOADERS[loader], *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _ask_batch(store: SqliteStore, tmp: Path, loader: str) -> tuple[list[Any], list[Any]]:
    tmp.mkdir()
    qfile = tmp / "q.jsonl"
    qfile.write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in QUESTIONS))
    argv = ["ask", "--questions", str(qfile), "--run-id", "r1"]
    argv += ["--store", str(store.root), "--collection", "demo"]
    done = _run(argv, tmp / "audit.sqlite", loader=loader)
    assert done.returncode == 0, done.stderr
    responses = [json.loads(line) for line in done.stdout.splitlines()]
    with SQLiteAuditSink(tmp / "audit.sqlite") as sink:
        records = [r.model_dump(mode="json") for r in sink.records()]
    return _untimed(responses), _untimed(sorted(records, key=lambda r: r["request_id"]))


def _untimed(value: Any) -> Any:
    """`value` with every wall-clock field (at any depth, e.g. each model call's) set to None."""
    if isinstance(value, dict):
        return {k: None if k in TIMING else _untimed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


@pytest.mark.integration
def test_answers_and_audit_records_do_not_depend_on_the_background_loads(
    demo_store: SqliteStore, tmp_path: Path
) -> None:
    runs = {loader: _ask_batch(demo_store, tmp_path / loader, loader) for loader in LOADERS}
    responses, records = runs["helper"]
    assert [r["status"] for r in responses] == ["OK", "OK", "NO_EVIDENCE"]
    assert len(records) == 3
    # Byte for byte, retrieval scores, evidence, hashes and answers included.
    expected = json.dumps(runs["none"], sort_keys=True)
    assert json.dumps(runs["helper"], sort_keys=True) == expected
    assert json.dumps(runs["thread"], sort_keys=True) == expected


@pytest.mark.integration
def test_a_cold_ask_writes_all_its_output_and_a_durable_audit_record(
    demo_store: SqliteStore, tmp_path: Path
) -> None:
    # The process ends with os._exit after the answer: stdout through a pipe still arrives
    # whole, the exit code is the answer's, and the audit record is committed and readable.
    base = ["--store", str(demo_store.root), "--collection", "demo"]
    audit = tmp_path / "audit.sqlite"
    done = _run(["ask", QUESTIONS[1][1], "--json", *base], audit)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "OK"
    refused = _run(["ask", QUESTIONS[2][1], *base], audit)
    assert refused.returncode == 3
    assert refused.stdout.startswith("Answer:\nNO_EVIDENCE")
    assert refused.stderr.startswith("citebound: NO_EVIDENCE: ")
    with SQLiteAuditSink(audit) as sink:
        assert sink.integrity_check() == "ok"
        assert len(sink.records()) == 2
