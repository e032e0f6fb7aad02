"""`citebound chat` as a user runs it: a real subprocess reading questions from stdin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from citebound.audit import SQLiteAuditSink
from citebound.contracts import PublicResponse
from citebound.store.sqlite import SqliteStore

OIL = "What oil grade does the GB-7 gearbox use?"
HOLD = "How many litres of it does it hold?"


def _chat(
    store: SqliteStore, tmp_path: Path, stdin: str, *args: str
) -> subprocess.CompletedProcess[str]:
    src = Path(__file__).resolve().parents[2] / "src"
    env = {
        **os.environ,
        "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        "CITEBOUND_AUDIT_SQLITE_PATH": str(tmp_path / "audit.sqlite"),
    }
    return subprocess.run(
        [sys.executable, "-m", "citebound", "chat", "--store", str(store.root),
         "--collection", "demo", *args],
        input=stdin, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )  # fmt: skip


def test_chat_answers_a_follow_up_from_the_conversation(
    demo_store: SqliteStore, tmp_path: Path
) -> None:
    done = _chat(demo_store, tmp_path, f"{OIL}\n\n{HOLD}\n/reset\n{HOLD}\n", "--json")
    assert done.returncode == 0, done.stderr
    answers = [PublicResponse.model_validate_json(line) for line in done.stdout.splitlines()]
    assert [a.status.value for a in answers] == ["OK", "OK", "NO_EVIDENCE"]
    assert "ISO VG 220" in answers[0].answer
    assert "18 litres" in answers[1].answer and answers[1].citations
    assert "follow-up searched as 'How many litres of it does it hold GB-7 ISO VG?'" in done.stderr
    assert "conversation forgotten" in done.stderr
    # Every turn was recorded once, the follow-up with the conversation template.
    sink = SQLiteAuditSink(tmp_path / "audit.sqlite")
    try:
        records = [sink.find(a.request_id) for a in answers]
    finally:
        sink.close()
    assert [len(r) for r in records] == [1, 1, 1]
    assert [r[0].template_id for r in records[:2]] == ["qa_v1", "qa_conversation_v1"]
    # The follow-up's record keeps the turn it was asked after; /reset forgot it.
    conv = [r[0].conversation for r in records]
    assert conv[0] is None and conv[2] is None
    assert conv[1] is not None and [t.question for t in conv[1].turns] == [OIL]


def test_chat_text_output_and_commands(demo_store: SqliteStore, tmp_path: Path) -> None:
    done = _chat(demo_store, tmp_path, f"{OIL}\n/nonsense\n/exit\n{HOLD}\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Answer:\n") and "Sources:" in done.stdout
    assert done.stdout.count("Answer:") == 1  # /exit ended the session before the follow-up
    assert "unknown command '/nonsense'" in done.stderr
