"""`batch ingest` on real Spark (load, chunk and embed on the executors): the same store and
index as `citebound ingest`; reads never leave the ingested folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from citebound.batch.ingest import ingest_batch
from citebound.index.build import index_dir, version_files
from citebound.ingest import ingest_paths
from citebound.sample_corpus import copy_sample_corpus
from citebound.store.sqlite import SqliteStore

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_batch_ingest_builds_the_same_index(spark: Any, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    copy_sample_corpus(docs)
    with SqliteStore(tmp_path / "plain") as plain:
        report = ingest_paths(plain, [docs], collection="c", progress=False)
    batch = ingest_batch(spark, tmp_path / "batch", [docs], collection="c", partitions=3)
    assert batch.partitions == 3
    assert batch.embedded_on_executors == report.chunks_total > 20
    assert batch.embedded_on_driver == 0
    assert batch.search_index_version == report.search_index_version
    strip = {"seconds"}
    assert batch.ingest.model_dump(exclude=strip) == report.model_dump(exclude=strip)
    with SqliteStore(tmp_path / "plain") as a_store, SqliteStore(tmp_path / "batch") as b_store:
        assert a_store.list_sources("c") == b_store.list_sources("c")
        assert a_store.list_documents("c") == b_store.list_documents("c")
        assert list(a_store.iter_chunks("c")) == list(b_store.iter_chunks("c"))
        assert a_store.index_version("c") == b_store.index_version("c")
    (va_file, a_rows, _), (vb_file, b_rows, _) = (
        version_files(index_dir(tmp_path / name, "c"), batch.search_index_version)
        for name in ("plain", "batch")
    )
    assert json.loads(a_rows.read_text()) == json.loads(b_rows.read_text())
    va, vb = np.load(va_file), np.load(vb_file)
    assert va.shape == vb.shape
    np.testing.assert_array_equal(va, vb)

    # Incremental: nothing new to embed on a second run; the index is unchanged.
    again = ingest_batch(spark, tmp_path / "batch", [docs], collection="c", partitions=2)
    assert again.embedded_on_executors == 0 and again.ingest.files_unchanged > 0
    assert again.search_index_version == batch.search_index_version


def test_executors_never_read_outside_the_folder(tmp_path: Path) -> None:
    """What an executor runs for one listed file: a file that resolves outside the folder it
    was listed in (a link swapped in after the listing) is skipped unread."""
    from citebound.contracts.ingest import ChunkerConfig, SkipReason
    from citebound.ingest.discover import Candidate
    from citebound.ingest.pipeline import Prepared, prepare_file

    docs, outside = tmp_path / "docs", tmp_path / "secret.md"
    docs.mkdir()
    outside.write_text("# Secret\n\nThe vault code is 1234.\n")
    (docs / "a.md").write_text("# A\n\nThe pump runs at 40 bar.\n")
    root = docs.resolve()
    ok = prepare_file(Candidate(docs / "a.md", "docs/a.md", root), "c", ChunkerConfig(), None)
    assert isinstance(ok, Prepared) and ok.documents
    (docs / "a.md").unlink()
    (docs / "a.md").symlink_to(outside)
    out = prepare_file(Candidate(docs / "a.md", "docs/a.md", root), "c", ChunkerConfig(), None)
    assert not isinstance(out, Prepared)
    assert [s.reason for s in out.skipped] == [SkipReason.OUTSIDE_ROOT]


def test_batch_ingest_parses_in_the_bounded_worker(spark: Any, tmp_path: Path) -> None:
    """#34: `batch ingest` takes the `[ingest]` limits and parses as `citebound ingest` does,
    in a worker process on the executor: a file past the time limit (one 80,000-character
    word, whose tokens take minutes to count) is stopped and refused OVER_LIMIT with the limit
    to raise, and the good files beside it ingest."""
    from citebound.contracts.ingest import IngestLimits, SkipReason

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a_good.md").write_text("# Pump\n\nThe pump runs at 40 bar.\n", encoding="utf-8")
    (docs / "b_slow.txt").write_text("z" * 80_000 + "\n", encoding="utf-8")
    (docs / "c_good.md").write_text("# Seal\n\nThe seal is inspected weekly.\n", "utf-8")
    limits = IngestLimits(max_seconds_per_file=2.0)
    batch = ingest_batch(
        spark, tmp_path / "st", [docs], collection="c", partitions=2, limits=limits
    )
    (entry,) = batch.ingest.skipped
    assert (entry.source_path, entry.reason) == ("docs/b_slow.txt", SkipReason.OVER_LIMIT)
    assert "parsing ran past 2 s and was stopped" in entry.message
    assert "raise [ingest] max_seconds_per_file" in entry.message
    with SqliteStore(tmp_path / "st") as store:
        assert [s.source_path for s in store.list_sources("c")] == [
            "docs/a_good.md",
            "docs/c_good.md",
        ]
