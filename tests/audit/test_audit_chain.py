"""The audit chain on SQLite (issue 34 item 4): `citebound audit verify` detects an edit, a
deletion, a reorder, a forged append and a truncated tail, naming the record; `audit list`
and `audit export` flag it. Before the chain, each of these verified record by record."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from chain_tamper import records, rehashed, row_of
from click.testing import CliRunner

from citebound.audit.chain import GENESIS, link
from citebound.audit.migrations import MIGRATIONS
from citebound.audit.sqlite import SQLiteAuditSink
from citebound.cli import main


def _store(tmp_path: Path, n: int = 5) -> Path:
    path = tmp_path / "audit.sqlite"
    with SQLiteAuditSink(path) as sink:
        for r in records(n):
            sink.append(r)
    return path


def _raw(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f"DROP TRIGGER {name}")  # anyone with write access to the file can
    return conn


def _set(conn: sqlite3.Connection, seq: int, row: dict[str, object]) -> None:
    conn.execute(
        f"UPDATE audit_records SET {', '.join(f'{k} = ?' for k in row)} WHERE seq = ?",
        (*row.values(), seq),
    )


def _edit(path: Path) -> None:
    _raw(path).execute("UPDATE audit_records SET question = 'What is forged?' WHERE seq = 3")


def _edit_rehashed(path: Path) -> None:
    _set(_raw(path), 3, row_of(rehashed(records()[2], question="What is forged?")))


def _delete(path: Path) -> None:
    _raw(path).execute("DELETE FROM audit_records WHERE seq = 3")


def _reorder(path: Path) -> None:
    conn = _raw(path)
    cols = [c[1] for c in conn.execute("PRAGMA table_info(audit_records)") if c[1] != "seq"]
    two, three = (
        dict(
            zip(
                cols,
                conn.execute(
                    f"SELECT {', '.join(cols)} FROM audit_records WHERE seq = ?", (s,)
                ).fetchone(),
                strict=True,
            )
        )
        for s in (2, 3)
    )
    conn.execute("DROP INDEX audit_records_request_run")
    _set(conn, 2, three)
    _set(conn, 3, two)


def _forge_append(path: Path) -> None:
    forged = rehashed(records()[4], request_id="req-forged")
    row = row_of(forged)
    _raw(path).execute(
        f"INSERT INTO audit_records ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
        tuple(row.values()),
    )


def _forge_append_with_copied_chain(path: Path) -> None:
    conn = _raw(path)
    _prev, chain = conn.execute(
        "SELECT prev_hash, chain_hash FROM audit_records WHERE seq = 5"
    ).fetchone()
    row = row_of(rehashed(records()[4], request_id="req-forged")) | {
        "prev_hash": chain,
        "chain_hash": chain,
    }
    conn.execute(
        f"INSERT INTO audit_records ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
        tuple(row.values()),
    )


def _truncate(path: Path) -> None:
    _raw(path).execute("DELETE FROM audit_records WHERE seq >= 4")


TAMPERING: list[tuple[Callable[[Path], None], str, str]] = [
    (_edit, "EDITED", "req-2"),
    (_edit_rehashed, "EDITED", "req-2"),
    (_delete, "MISSING", "req-3"),
    (_reorder, "REORDERED", "req-2"),
    (_forge_append, "UNCHAINED", "req-forged"),
    (_forge_append_with_copied_chain, "UNCHAINED", "req-forged"),
    (_truncate, "TRUNCATED", "req-2"),
]


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["audit", *args])
    return result.exit_code, result.stdout, result.stderr


def test_an_untouched_store_verifies_and_prints_its_anchor(tmp_path: Path) -> None:
    path = _store(tmp_path)
    with SQLiteAuditSink(path) as sink:
        report = sink.verify_chain()
        rows = sink.chain_rows()
    assert report.ok and report.count == 5
    assert rows[0].prev_hash == GENESIS
    assert all(b.prev_hash == a.chain_hash for a, b in itertools.pairwise(rows))
    assert report.head == link(rows[-1].prev_hash or "", rows[-1].record.record_hash)
    code, out, err = _cli("verify", "--audit", str(path))
    assert code == 0 and f"head {report.anchor}" in out and report.anchor in err
    assert _cli("verify", "--audit", str(path), "--anchor", report.anchor)[0] == 0


@pytest.mark.parametrize(
    ("tamper", "kind", "request_id"), TAMPERING, ids=lambda x: getattr(x, "__name__", str(x))
)
def test_verify_names_each_kind_of_tampering(
    tmp_path: Path, tamper: Callable[[Path], None], kind: str, request_id: str
) -> None:
    path = _store(tmp_path)
    tamper(path)
    with SQLiteAuditSink(path) as sink:
        report = sink.verify_chain()
    assert not report.ok
    assert (kind, request_id) in {(p.kind, p.request_id) for p in report.problems}, report.problems
    code, out, err = _cli("verify", "--audit", str(path))
    assert code == 2 and kind in out and request_id in out
    # audit list and export serve the records but flag what fails, and exit 2.
    code, out, err = _cli("list", "--audit", str(path))
    assert code == 2 and kind in err and "audit chain problem" in err
    code, out, err = _cli("export", "--audit", str(path))
    assert code == 2 and out.count("\n") >= 2 and kind in err


def test_a_rewritten_tail_is_caught_by_the_anchor(tmp_path: Path) -> None:
    path = _store(tmp_path)
    with SQLiteAuditSink(path) as sink:
        anchor = sink.verify_chain().anchor
    conn = _raw(path)
    conn.execute("DELETE FROM audit_records WHERE seq = 5")
    conn.execute("UPDATE sqlite_sequence SET seq = 4 WHERE name = 'audit_records'")
    with SQLiteAuditSink(path) as sink:
        assert sink.verify_chain().ok  # consistent without the anchor: what the chain cannot see
        report = sink.verify_chain(anchor)
    assert [p.kind for p in report.problems] == ["TRUNCATED"]
    # Rewritten with the code from record 3 on: the anchored record 5 is another.
    path2 = _store(tmp_path / "b")
    with SQLiteAuditSink(path2) as sink:
        anchor = sink.verify_chain().anchor
    conn = _raw(path2)
    conn.execute("DELETE FROM audit_records WHERE seq >= 3")
    conn.execute("UPDATE sqlite_sequence SET seq = 2 WHERE name = 'audit_records'")
    with SQLiteAuditSink(path2) as sink:
        for r in records()[2:]:
            sink.append(rehashed(r, question="What was rewritten?"))
        assert sink.verify_chain().ok
        assert [p.kind for p in sink.verify_chain(anchor).problems] == ["ANCHOR"]
    code, _, err = _cli("verify", "--audit", str(path2), "--anchor", "nonsense")
    assert code == 2 and "N:sha256:HEX" in err


def test_an_existing_store_is_chained_from_its_first_record(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "CREATE TABLE _migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    for version, name, steps in MIGRATIONS[:8]:
        for step in steps:
            assert isinstance(step, str)
            conn.execute(step)
        conn.execute("INSERT INTO _migrations VALUES (?, ?, 'then')", (version, name))
    for r in records(3):
        row = row_of(r)
        conn.execute(
            f"INSERT INTO audit_records ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            tuple(row.values()),
        )
    conn.close()
    with SQLiteAuditSink(path) as sink:
        assert sink.schema_version() == 9
        report = sink.verify_chain()
        sink.append(records(4)[3])
        assert report.ok and report.count == 3
        assert sink.verify_chain().ok and sink.verify_chain().count == 4
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        sqlite3.connect(path).execute("UPDATE audit_records SET prev_hash = 'x'")
