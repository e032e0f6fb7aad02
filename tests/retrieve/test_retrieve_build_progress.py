"""Index builds report embedding progress, embedding in slices changes no vector, and ingest
reports the index version bundles record. (The terminal progress bar: tests/ingest.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from citebound.index import build, index_dir, index_text, update_indexes
from citebound.index.embedder import OnnxEmbedder
from citebound.store.memory import MemoryStore

Build = Callable[..., MemoryStore]


def test_progress_counts_every_slice_and_slices_change_no_vector(
    build_store: Build, embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = build_store()
    chunks = sorted(store.iter_chunks("default"), key=lambda c: c.chunk_id)
    assert len(chunks) >= 5
    monkeypatch.setattr(build, "EMBED_SLICE", 2)
    calls: list[tuple[int, int]] = []
    update_indexes(store, "default", embedder=embedder, progress=lambda d, t: calls.append((d, t)))
    n = len(chunks)
    expected = [(0, n)] + [(min(i + 2, n), n) for i in range(0, n, 2)]
    assert calls == expected
    directory = index_dir(store.root, "default")
    manifest = build.read_manifest(directory)
    assert manifest is not None
    stored = np.load(build.version_files(directory, manifest.index_version)[0])
    whole = embedder.embed([index_text(c) for c in chunks])  # one call, one batch plan
    assert stored.dtype == np.float32 and np.array_equal(stored, whole)


def test_no_progress_when_nothing_needs_embedding(
    build_store: Build, embedder: OnnxEmbedder
) -> None:
    store = build_store()
    update_indexes(store, "default", embedder=embedder)
    calls: list[tuple[int, int]] = []
    update_indexes(store, "default", embedder=embedder, progress=lambda d, t: calls.append((d, t)))
    assert calls == []


def test_ingest_reports_the_index_version_bundles_record(
    tmp_path: Path, embedder: OnnxEmbedder
) -> None:
    from citebound.ingest import ingest_paths
    from citebound.retrieve import Retriever
    from citebound.store import SqliteStore

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Pump\n\nTorque the bolts to 40 Nm.\n", encoding="utf-8")
    store = SqliteStore(tmp_path / "s")
    try:
        report = ingest_paths(store, [docs], progress=False)
        bundle = Retriever(store, embedder=embedder).retrieve("bolt torque", request_id="r")
        assert report.search_index_version is not None
        assert bundle.index_version == report.search_index_version
    finally:
        store.close()


def test_progress_moves_every_embed_slice_and_shows_an_eta() -> None:
    # 1,024-chunk slices left the bar at 0/2542 for 70 s with no ETA on a 2-core machine.
    from rich.progress import TimeRemainingColumn

    from citebound.ingest.pipeline import _progress

    assert build.EMBED_SLICE <= 128
    columns = _progress(True).columns
    assert any(isinstance(c, TimeRemainingColumn) for c in columns)


def test_default_slices_report_progress_on_a_real_embedder(embedder: OnnxEmbedder) -> None:
    texts = [f"pump {i} impeller bolt torque check" for i in range(300)]
    calls: list[tuple[int, int]] = []
    out = build._embed_slices(embedder, texts, lambda d, t: calls.append((d, t)))
    assert out.shape == (300, embedder.dim)
    assert calls == [(0, 300), (128, 300), (256, 300), (300, 300)]
