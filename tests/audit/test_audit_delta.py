"""Delta sink: the same contract suite, append-only table, enforced schema, pandas-readable."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_samples import record_for, with_conversation
from audit_sink_contract import AuditSinkContract

deltalake = pytest.importorskip("deltalake")
pa = pytest.importorskip("pyarrow")

from citebound.audit import COLUMN_NAMES, open_sink  # noqa: E402
from citebound.audit.delta import DeltaAuditSink  # noqa: E402
from citebound.contracts.audit import ADDED_IN_VERSION  # noqa: E402
from citebound.errors import AuditError  # noqa: E402


@pytest.fixture
def sink(tmp_path: Path) -> DeltaAuditSink:
    return DeltaAuditSink(tmp_path / "audit.delta")


class TestDeltaContract(AuditSinkContract):
    pass


def test_table_is_append_only_and_readable_by_arrow(sink: DeltaAuditSink) -> None:
    sink.append(record_for("ok"))
    table = deltalake.DeltaTable(str(sink.path))
    assert table.metadata().configuration.get("delta.appendOnly") == "true"
    with pytest.raises(Exception):  # noqa: B017 - any refusal will do; the row must survive
        table.delete("request_id = 'req-1'")
    t = deltalake.DeltaTable(str(sink.path)).to_pyarrow_table()
    assert t.column_names == [*COLUMN_NAMES, "chain_seq", "prev_hash", "chain_hash"]
    assert t.column("request_id").to_pylist() == ["req-1"]
    assert t.column("validated_citations").to_pylist() == [["C0", "C1"]]


def test_readable_by_pandas(sink: DeltaAuditSink) -> None:
    pytest.importorskip("pandas", reason="pandas is not installed")
    sink.append(record_for("ok"))
    df = deltalake.DeltaTable(str(sink.path)).to_pandas()
    assert df["request_id"].tolist() == ["req-1"]


def test_schema_is_enforced(sink: DeltaAuditSink) -> None:
    wrong = pa.table({"request_id": ["x"], "surprise": [1]})
    with pytest.raises(Exception):  # noqa: B017
        deltalake.write_deltalake(str(sink.path), wrong, mode="append")
    assert sink.records() == []


def test_foreign_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.delta"
    deltalake.write_deltalake(str(path), pa.table({"a": [1]}))
    with pytest.raises(AuditError, match="not the citebound audit schema"):
        DeltaAuditSink(path)


def test_open_sink_picks_delta(tmp_path: Path) -> None:
    DeltaAuditSink(tmp_path / "t.delta")
    assert isinstance(open_sink(tmp_path / "t.delta"), DeltaAuditSink)


def test_a_version_1_table_gains_the_new_columns(tmp_path: Path) -> None:
    """A table created before the reranker column: opened, evolved, old rows still verify."""
    import pyarrow as pa

    from citebound.audit.delta import arrow_schema, records_to_arrow

    path = tmp_path / "audit.delta"
    later = tuple(ADDED_IN_VERSION)  # every field added after version 1
    v1_schema = pa.schema([f for f in arrow_schema() if f.name not in later])
    deltalake.DeltaTable.create(
        str(path), schema=v1_schema, configuration={"delta.appendOnly": "true"}
    )
    new = record_for("ok", request_id="old")
    old = new.model_copy(update={"schema_version": 1, **dict.fromkeys(later)})
    old = old.model_copy(update={"record_hash": old.compute_hash()})
    deltalake.write_deltalake(
        str(path), records_to_arrow([old]).drop_columns(list(later)), mode="append"
    )

    sink = DeltaAuditSink(path)
    fields = [f.name for f in deltalake.DeltaTable(str(path)).schema().fields]
    assert fields == [*COLUMN_NAMES, "chain_seq", "prev_hash", "chain_hash"]
    (back,) = sink.find("old")
    assert back == old and back.reranker is None and back.hash_ok()
    named = record_for("ok", request_id="new").model_copy(update={"reranker": "rr"})
    sink.append(named.model_copy(update={"record_hash": named.compute_hash()}))
    assert {r.request_id: r.reranker for r in sink.records()} == {"old": None, "new": "rr"}
    follow = with_conversation(record_for("ok", request_id="follow-up"))
    sink.append(follow)
    (back,) = sink.find("follow-up")
    assert back == follow and back.hash_ok() and back.conversation is not None
