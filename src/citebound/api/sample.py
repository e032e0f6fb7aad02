"""A ready store over the bundled sample corpus (`citebound serve --demo`, tests, benchmarks)."""

from __future__ import annotations

import json
from pathlib import Path

from citebound.sample_corpus import copy_sample_corpus
from citebound.store.sqlite import SqliteStore

# The generated PDF has no front matter: its metadata comes from a sidecar file.
PDF_METADATA = {
    "title": "CX-9 Compressor Quick Reference",
    "knowledge_type": "specification",
    "equipment_id": "CX-9",
    "event_date": "2025-01-01",
}


def build_sample_store(root: Path, *, collection: str = "demo") -> Path:
    """Copy the sample corpus under `root/docs`, ingest it into `root/store`, return the store dir.

    Example:
        >>> store_dir = build_sample_store(Path("/tmp/cb-demo"))  # doctest: +SKIP
    """
    # Lazy: citebound.ingest (loaders, markdown-it, multiprocessing) costs ~120 ms of importing the
    # app, paid only when the sample store is built.
    from citebound.ingest import ingest_paths

    docs = root / "docs"
    copy_sample_corpus(docs)
    for pdf in docs.glob("*.pdf"):
        pdf.with_name(pdf.name + ".meta.json").write_text(
            json.dumps(PDF_METADATA), encoding="utf-8"
        )
    store_dir = root / "store"
    with SqliteStore(store_dir) as store:
        ingest_paths(store, [docs], collection=collection, progress=False)
    return store_dir
