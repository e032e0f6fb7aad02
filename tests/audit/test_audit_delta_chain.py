"""The audit chain on a Delta table (issue 34 item 4): `citebound audit verify` detects an
edit, a deletion, a reorder, a forged append and (against an anchor) a truncated tail, naming
the record, as on SQLite and PostgreSQL. Tampering rewrites the table's files as someone with
write access to them can (`delta.appendOnly` refuses a delete or update commit)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from chain_tamper import records, rehashed
from click.testing import CliRunner

deltalake = pytest.importorskip("deltalake")
pa = pytest.importorskip("pyarrow")

from citebound.audit.columns import to_row  # noqa: E402
from citebound.audit.delta import DeltaAuditSink, arrow_schema, records_to_arrow  # noqa: E402
from citebound.cli import main  # noqa: E402

Rows = list[dict[str, Any]]


def _table(tmp_path: Path, n: int = 5) -> Path:
    path = tmp_path / "audit.delta"
    sink = DeltaAuditSink(path)
    for r in records(n):
        sink.append(r)
    return path


def _rewrite(path: Path, change: Callable[[Rows], Rows]) -> None:
    """Read every row, change them, write the table anew (files replaced by hand)."""
    rows = sorted(deltalake.DeltaTable(str(path)).to_pyarrow_table().to_pylist(),
                  key=lambda r: r["chain_seq"] if r["chain_seq"] is not None else 0)  # fmt: skip
    rows = change(rows)
    shutil.rmtree(path)
    schema = arrow_schema(chain=True)
    deltalake.DeltaTable.create(str(path), schema=schema)
    deltalake.write_deltalake(str(path), pa.Table.from_pylist(rows, schema=schema), mode="append")


def _edit(rows: Rows) -> Rows:
    rows[2]["question"] = "What is forged?"
    return rows


def _edit_rehashed(rows: Rows) -> Rows:
    forged = to_row(rehashed(records()[2], question="What is forged?"), lists_as_json=False)
    rows[2] |= forged
    return rows


def _delete(rows: Rows) -> Rows:
    return rows[:2] + rows[3:]


def _reorder(rows: Rows) -> Rows:
    rows[1]["chain_seq"], rows[2]["chain_seq"] = rows[2]["chain_seq"], rows[1]["chain_seq"]
    return rows


def _forge_append(rows: Rows) -> Rows:
    forged = to_row(rehashed(records()[4], request_id="req-forged"), lists_as_json=False)
    return [*rows, forged | {"chain_seq": None, "prev_hash": None, "chain_hash": None}]


def _forge_append_with_copied_chain(rows: Rows) -> Rows:
    forged = to_row(rehashed(records()[4], request_id="req-forged"), lists_as_json=False)
    head = rows[-1]["chain_hash"]
    return [*rows, forged | {"chain_seq": 6, "prev_hash": head, "chain_hash": head}]


TAMPERING: list[tuple[Callable[[Rows], Rows], str, str]] = [
    (_edit, "EDITED", "req-2"),
    (_edit_rehashed, "EDITED", "req-2"),
    (_delete, "MISSING", "req-3"),
    (_reorder, "REORDERED", "req-2"),
    (_forge_append, "UNCHAINED", "req-forged"),
    (_forge_append_with_copied_chain, "UNCHAINED", "req-forged"),
]


def _verify(path: Path, *extra: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["audit", "verify", "--audit", str(path), *extra])
    return result.exit_code, result.stdout, result.stderr


def test_an_untouched_table_verifies_and_prints_its_anchor(tmp_path: Path) -> None:
    path = _table(tmp_path)
    code, out, err = _verify(path)
    assert code == 0, out + err
    assert "ok: 5 records, chain intact" in out and "anchor 5:sha256:" in err
    report = DeltaAuditSink(path).verify_chain()
    assert report.ok and report.count == 5


@pytest.mark.parametrize(
    ("tamper", "kind", "who"), TAMPERING, ids=lambda x: getattr(x, "__name__", x)
)
def test_verify_names_each_kind_of_tampering(
    tmp_path: Path, tamper: Callable[[Rows], Rows], kind: str, who: str
) -> None:
    path = _table(tmp_path)
    _rewrite(path, tamper)
    code, out, err = _verify(path)
    assert code == 2, out
    problems = [line.split("\t") for line in out.splitlines() if "\t" in line]
    assert (kind, who) in {(p[0], p[2]) for p in problems}, out
    assert "Traceback" not in out + err


def test_a_truncated_tail_is_caught_by_the_anchor(tmp_path: Path) -> None:
    path = _table(tmp_path)
    anchor = DeltaAuditSink(path).verify_chain().anchor
    _rewrite(path, lambda rows: rows[:3])
    assert _verify(path)[0] == 0  # a consistent prefix: only the anchor shows the loss
    code, out, _ = _verify(path, "--anchor", anchor)
    assert code == 2 and "TRUNCATED" in out


def test_a_table_from_before_the_chain_is_chained_from_its_first_record(tmp_path: Path) -> None:
    """Rows written without chain columns (an older citebound) are chained from the first
    record: appends after them verify, and deleting one of them breaks the chain."""
    path = tmp_path / "audit.delta"
    old_schema = arrow_schema()
    deltalake.DeltaTable.create(
        str(path), schema=old_schema, configuration={"delta.appendOnly": "true"}
    )
    deltalake.write_deltalake(str(path), records_to_arrow(records(3)), mode="append")
    sink = DeltaAuditSink(path)  # evolves the schema: the chain columns are added
    sink.append(rehashed(records(5)[3]))
    sink.append_many([rehashed(records(5)[4])])
    report = sink.verify_chain()
    assert report.ok and report.count == 5, report.problems
    _rewrite(path, lambda rows: [r for r in rows if r["request_id"] != "req-1"])
    code, out, _ = _verify(path)
    assert code == 2 and "MISSING" in out
