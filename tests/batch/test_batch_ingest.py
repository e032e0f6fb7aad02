"""`batch ingest` on real Spark: the same store and index as `citebound ingest`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from citebound.batch.ingest import ingest_batch
from citebound.index.build import index_dir
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
    a, b = index_dir(tmp_path / "plain", "c"), index_dir(tmp_path / "batch", "c")
    assert json.loads((a / "rows.json").read_text()) == json.loads((b / "rows.json").read_text())
    va, vb = np.load(a / "vectors.npy"), np.load(b / "vectors.npy")
    assert va.shape == vb.shape
    np.testing.assert_array_equal(va, vb)

    # Incremental: nothing new to embed on a second run; the index is unchanged.
    again = ingest_batch(spark, tmp_path / "batch", [docs], collection="c", partitions=2)
    assert again.embedded_on_executors == 0 and again.ingest.files_unchanged > 0
    assert again.search_index_version == batch.search_index_version
