"""ingest_paths: determinism, incremental re-ingest, deletions, skips that never abort, hook."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import citebound.index
from citebound.contracts.ingest import ChunkerConfig, SkipReason
from citebound.errors import ConfigError
from citebound.ingest import file_knowledge_id, ingest_paths
from citebound.store import SqliteStore


def write_corpus(root: Path) -> Path:
    docs = root / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("# Alpha\n\nAlpha pumps run at 50 Hz.\n", encoding="utf-8")
    (docs / "b.txt").write_text("Beta notes.\n\nSecond paragraph.\n", encoding="utf-8")
    (docs / "sub" / "c.html").write_text("<h1>Gamma</h1><p>Gamma valves.</p>", encoding="utf-8")
    (docs / "records.jsonl").write_text(
        '{"_id": "r1", "title": "One", "text": "Record one."}\n'
        '{"_id": "r2", "title": "Two", "text": "Record two."}\n',
        encoding="utf-8",
    )
    (docs / "image.png").write_bytes(b"\x89PNG")
    (docs / ".hidden.md").write_text("# Hidden\n\nnot ingested", encoding="utf-8")
    return docs


def snapshot(store: SqliteStore, collection: str = "default") -> list[tuple[object, ...]]:
    return [
        (c.chunk_id, c.knowledge_id, c.chunk_index, c.text, c.heading_path, c.char_start)
        for c in store.iter_chunks(collection)
    ]


def test_ingest_counts_and_ids(tmp_path: Path, store: SqliteStore) -> None:
    docs = write_corpus(tmp_path)
    report = ingest_paths(store, [docs], progress=False, update_index=False)
    assert (report.files_seen, report.files_added, report.files_ignored) == (4, 4, 1)
    # A document with a hidden name is never read, but listed with the reason (#34).
    assert [(s.source_path, s.reason) for s in report.skipped] == [
        ("docs/.hidden.md", SkipReason.HIDDEN)
    ]
    assert "starts with '.'" in report.skipped[0].message
    assert report.documents_written == 5
    assert report.chunks_total == report.chunks_written == store.chunk_count("default")
    paths = sorted({d.source_path for d in store.list_documents()})
    assert paths == ["docs/a.md", "docs/b.txt", "docs/records.jsonl", "docs/sub/c.html"]
    assert store.get_document("r1") is not None  # JSONL ids are kept verbatim
    assert store.get_document(file_knowledge_id("default", "docs/a.md")) is not None
    assert report.index_version == store.index_version("default")


def test_ingest_twice_changes_nothing(tmp_path: Path, store: SqliteStore) -> None:
    docs = write_corpus(tmp_path)
    first = ingest_paths(store, [docs], progress=False, update_index=False)
    before = snapshot(store)
    second = ingest_paths(store, [docs], progress=False, update_index=False)
    assert (second.files_unchanged, second.files_added, second.chunks_written) == (4, 0, 0)
    assert snapshot(store) == before
    assert second.index_version == first.index_version


def test_different_orders_and_stores_give_the_same_store(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path)
    one = SqliteStore(tmp_path / "s1")
    two = SqliteStore(tmp_path / "s2")
    try:
        ingest_paths(one, [docs / "a.md", docs], progress=False, update_index=False)
        ingest_paths(two, [docs, docs / "a.md"], progress=False, update_index=False)
        assert snapshot(one) == snapshot(two)
        assert one.index_version("default") == two.index_version("default")
    finally:
        one.close()
        two.close()


def test_incremental_change_and_delete(tmp_path: Path, store: SqliteStore) -> None:
    docs = write_corpus(tmp_path)
    ingest_paths(store, [docs], progress=False, update_index=False)
    version = store.index_version("default")
    b_chunks = [c.chunk_id for c in store.iter_chunks() if c.source_path == "docs/b.txt"]
    (docs / "a.md").write_text("# Alpha\n\nAlpha pumps run at 60 Hz now.\n", encoding="utf-8")
    (docs / "sub" / "c.html").unlink()
    report = ingest_paths(store, [docs], progress=False, update_index=False)
    assert (report.files_updated, report.files_deleted, report.files_unchanged) == (1, 1, 2)
    assert "60 Hz" in store.get_document(file_knowledge_id("default", "docs/a.md")).text  # type: ignore[union-attr]
    assert store.get_document(file_knowledge_id("default", "docs/sub/c.html")) is None
    assert [c.chunk_id for c in store.iter_chunks() if c.source_path == "docs/b.txt"] == b_chunks
    assert store.index_version("default") != version


def test_removed_jsonl_line_is_deleted(tmp_path: Path, store: SqliteStore) -> None:
    docs = write_corpus(tmp_path)
    ingest_paths(store, [docs], progress=False, update_index=False)
    (docs / "records.jsonl").write_text('{"_id": "r1", "text": "Record one."}\n', "utf-8")
    report = ingest_paths(store, [docs], progress=False, update_index=False)
    assert report.files_updated == 1
    assert store.get_document("r2") is None and store.get_document("r1") is not None


def test_file_argument_never_deletes_siblings(tmp_path: Path, store: SqliteStore) -> None:
    docs = write_corpus(tmp_path)
    ingest_paths(store, [docs], progress=False, update_index=False)
    report = ingest_paths(store, [docs / "a.md"], progress=False, update_index=False)
    assert (report.files_seen, report.files_unchanged, report.files_deleted) == (1, 1, 0)
    assert len(store.list_sources("default")) == 4


def test_other_root_and_collection_untouched(tmp_path: Path, store: SqliteStore) -> None:
    docs = write_corpus(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.md").write_text("# X\n\nOther root.\n", encoding="utf-8")
    ingest_paths(store, [docs], progress=False, update_index=False)
    ingest_paths(store, [other], progress=False, update_index=False)
    ingest_paths(store, [docs], collection="copy", progress=False, update_index=False)
    shutil.rmtree(docs)
    docs.mkdir()
    report = ingest_paths(store, [docs], progress=False, update_index=False)
    assert report.files_deleted == 4
    assert [s.source_path for s in store.list_sources("default")] == ["other/x.md"]
    assert len(store.list_sources("copy")) == 3  # r1/r2 ids belong to the default collection
    assert store.collections() == ["copy", "default"]


def test_bad_files_are_skipped_and_never_abort(
    tmp_path: Path, store: SqliteStore, make_pdf: Callable[..., Path]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nGood text.\n", encoding="utf-8")
    (docs / "empty.md").write_text("", encoding="utf-8")
    (docs / "blank.txt").write_text("  \n\n ", encoding="utf-8")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a pdf at all")
    (docs / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (docs / "binary.txt").write_bytes(b"abc\x00def")
    make_pdf(docs / "locked.pdf", ["Secret text."], owner_password="o", user_password="u")
    make_pdf(docs / "scan.pdf", [""])
    (docs / "bad-meta.md").write_text("# M\n\ntext\n", encoding="utf-8")
    (docs / "bad-meta.md.meta.json").write_text('{"event_date": "yesterday"}', encoding="utf-8")
    report = ingest_paths(store, [docs], progress=False, update_index=False)
    reasons = {s.source_path.split("/", 1)[1]: s.reason for s in report.skipped}
    assert reasons == {
        "bad-meta.md": SkipReason.BAD_METADATA,
        "binary.txt": SkipReason.CORRUPT,
        "blank.txt": SkipReason.EMPTY,
        "broken.pdf": SkipReason.CORRUPT,
        "empty.md": SkipReason.EMPTY,
        "latin1.txt": SkipReason.UNREADABLE,
        "locked.pdf": SkipReason.ENCRYPTED,
        "scan.pdf": SkipReason.EMPTY,
    }
    assert all(s.message for s in report.skipped)
    assert report.files_added == 1 and report.files_skipped == 8
    assert [d.title for d in store.list_documents()] == ["Good"]


def test_file_that_becomes_unreadable_loses_its_old_version(
    tmp_path: Path, store: SqliteStore
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nOld content.\n", encoding="utf-8")
    ingest_paths(store, [docs], progress=False, update_index=False)
    (docs / "a.md").write_bytes(b"\xff\xfe broken")
    report = ingest_paths(store, [docs], progress=False, update_index=False)
    assert report.files_deleted == 1 and report.skipped[0].reason == SkipReason.UNREADABLE
    assert "previous version was removed" in report.skipped[0].message
    assert store.chunk_count("default") == 0


def test_sidecar_change_triggers_reingest(tmp_path: Path, store: SqliteStore) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    (docs / "a.md.meta.json").write_text('{"equipment_id": "P-1"}', encoding="utf-8")
    ingest_paths(store, [docs], progress=False, update_index=False)
    version = store.index_version("default")
    (docs / "a.md.meta.json").write_text('{"equipment_id": "P-2"}', encoding="utf-8")
    report = ingest_paths(store, [docs], progress=False, update_index=False)
    assert report.files_updated == 1
    assert [c.equipment_id for c in store.iter_chunks()] == ["P-2"]
    assert store.index_version("default") != version  # metadata is part of the version


def test_duplicate_jsonl_ids_across_files_are_skipped(tmp_path: Path, store: SqliteStore) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.jsonl").write_text('{"_id": "x", "text": "first"}\n', encoding="utf-8")
    (docs / "b.jsonl").write_text(
        '{"_id": "x", "text": "second"}\n{"_id": "y", "text": "why"}\n', encoding="utf-8"
    )
    report = ingest_paths(store, [docs], progress=False, update_index=False)
    assert [(s.source_path, s.reason) for s in report.skipped] == [
        ("docs/b.jsonl", SkipReason.DUPLICATE_ID)
    ]
    assert store.get_document("x").text == "first"  # type: ignore[union-attr]
    assert store.get_document("y") is not None


def test_missing_path_and_bad_collection_are_config_errors(
    tmp_path: Path, store: SqliteStore
) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        ingest_paths(store, [tmp_path / "nope"], progress=False)
    for bad in (" ", "../x", "a/b", "", "-x"):
        with pytest.raises(ConfigError, match="invalid collection name"):
            ingest_paths(store, [tmp_path], collection=bad, progress=False)


def test_store_directory_inside_root_is_not_ingested(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path)
    inner = SqliteStore(docs / "store-here")
    try:
        (inner.root / "notes.md").write_text("# Not a doc\n\nx", encoding="utf-8")
        report = ingest_paths(inner, [docs], progress=False, update_index=False)
        assert report.files_seen == 4
    finally:
        inner.close()


def test_index_hook_runs_after_ingest_and_failures_are_reported(
    tmp_path: Path, store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = write_corpus(tmp_path)
    calls: list[tuple[int, str]] = []

    def update_indexes(s: SqliteStore, collection: str, progress: object) -> str:
        assert callable(progress)
        calls.append((s.chunk_count(collection), collection))
        return f"idx-built-{len(calls)}"

    monkeypatch.setattr(citebound.index, "update_indexes", update_indexes, raising=False)
    report = ingest_paths(store, [docs], progress=False, config=ChunkerConfig(chunk_tokens=64))
    assert report.index_status == "updated" and calls == [(report.chunks_total, "default")]
    assert report.search_index_version == "idx-built-1"

    def broken(s: SqliteStore, collection: str, progress: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(citebound.index, "update_indexes", broken)
    report = ingest_paths(store, [docs], progress=False)
    assert (report.index_status, report.index_message) == ("failed", "RuntimeError: disk full")
    assert report.search_index_version is None


def test_index_hook_absent_is_unavailable(
    tmp_path: Path, store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(citebound.index, "update_indexes", raising=False)
    report = ingest_paths(store, [write_corpus(tmp_path)], progress=False)
    assert report.index_status == "unavailable"


def test_deleted_document_comes_back_on_next_ingest(tmp_path: Path, store: SqliteStore) -> None:
    docs = write_corpus(tmp_path)
    ingest_paths(store, [docs], progress=False, update_index=False)
    store.delete_document("r2")
    report = ingest_paths(store, [docs], progress=False, update_index=False)
    assert report.files_updated == 1 and store.get_document("r2") is not None


def test_new_chunk_settings_rechunk_unchanged_files(tmp_path: Path, store: SqliteStore) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\n" + "Sentence here. " * 80, encoding="utf-8")
    ingest_paths(store, [docs], progress=False, update_index=False)
    n_default = store.chunk_count()
    report = ingest_paths(
        store, [docs], config=ChunkerConfig(chunk_tokens=50, overlap_tokens=0), progress=False
    )
    assert report.files_updated == 1 and store.chunk_count() > n_default
