"""The exact schema of store.sqlite, and how migrations are applied."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from citebound.errors import StoreError
from citebound.store import SqliteStore
from citebound.store.migrations import MIGRATIONS

# (name, type, notnull, default, pk position) per column, as PRAGMA table_info reports them.
EXPECTED_TABLES = {
    "_migrations": [("id", "INTEGER", 0, None, 1), ("name", "TEXT", 1, None, 0)],
    "collections": [("name", "TEXT", 0, None, 1)],
    "sources": [
        ("collection", "TEXT", 1, None, 1),
        ("source_path", "TEXT", 1, None, 2),
        ("content_sha256", "TEXT", 1, None, 0),
        ("meta_sha256", "TEXT", 1, "''", 0),
    ],
    "documents": [
        ("knowledge_id", "TEXT", 0, None, 1),
        ("collection", "TEXT", 1, None, 0),
        ("source_path", "TEXT", 1, None, 0),
        ("title", "TEXT", 1, None, 0),
        ("text", "TEXT", 1, None, 0),
        ("content_sha256", "TEXT", 1, None, 0),
        ("knowledge_type", "TEXT", 1, None, 0),
        ("equipment_id", "TEXT", 0, None, 0),
        ("event_date", "TEXT", 0, None, 0),
        ("page_offsets", "TEXT", 1, None, 0),
    ],
    "chunks": [
        ("chunk_id", "TEXT", 0, None, 1),
        ("knowledge_id", "TEXT", 1, None, 0),
        ("collection", "TEXT", 1, None, 0),
        ("chunk_index", "INTEGER", 1, None, 0),
        ("text", "TEXT", 1, None, 0),
        ("heading_path", "TEXT", 1, None, 0),
        ("page", "INTEGER", 0, None, 0),
        ("page_end", "INTEGER", 0, None, 0),
        ("char_start", "INTEGER", 1, None, 0),
        ("char_end", "INTEGER", 1, None, 0),
        ("token_count", "INTEGER", 1, None, 0),
        ("row_sha256", "TEXT", 1, None, 0),
        ("ocr", "INTEGER", 1, "0", 0),  # migration 2
    ],
    "index_versions": [
        ("scope", "TEXT", 0, None, 1),
        ("version", "TEXT", 1, None, 0),
        ("embedding_model", "TEXT", 1, None, 0),
        ("chunk_count", "INTEGER", 1, None, 0),
    ],
    "settings": [("key", "TEXT", 0, None, 1), ("value", "TEXT", 1, None, 0)],
}
EXPECTED_INDEXES = {
    "chunks_by_collection": ("chunks", ["collection", "knowledge_id", "chunk_index"]),
    "documents_by_source": ("documents", ["collection", "source_path"]),
}


def test_exact_schema(tmp_path: Path) -> None:
    SqliteStore(tmp_path).close()
    conn = sqlite3.connect(tmp_path / "store.sqlite")
    tables = {
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    }
    assert tables == set(EXPECTED_TABLES)
    for table, columns in EXPECTED_TABLES.items():
        info = [tuple(r[1:]) for r in conn.execute(f"PRAGMA table_info({table})")]
        assert info == columns, table
    indexes = {
        r[0]: r[1]
        for r in conn.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        )
    }
    assert set(indexes) == set(EXPECTED_INDEXES)
    for name, (table, cols) in EXPECTED_INDEXES.items():
        assert indexes[name] == table
        assert [r[2] for r in conn.execute(f"PRAGMA index_info({name})")] == cols
    fks = [(*tuple(r[2:5]), r[6]) for r in conn.execute("PRAGMA foreign_key_list(chunks)")]
    assert fks == [("documents", "knowledge_id", "knowledge_id", "CASCADE")]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert [r[0] for r in conn.execute("SELECT id FROM _migrations")] == [m[0] for m in MIGRATIONS]
    conn.close()


def test_migrations_are_applied_once(tmp_path: Path) -> None:
    SqliteStore(tmp_path).close()
    SqliteStore(tmp_path).close()  # reopening applies nothing and fails nothing
    conn = sqlite3.connect(tmp_path / "store.sqlite")
    assert conn.execute("SELECT COUNT(*) FROM _migrations").fetchone()[0] == len(MIGRATIONS)
    conn.close()


def test_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    SqliteStore(tmp_path).close()
    conn = sqlite3.connect(tmp_path / "store.sqlite")
    conn.execute("INSERT INTO _migrations VALUES (999, 'future')")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer than this citebound"):
        SqliteStore(tmp_path)


def test_unwritable_location_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(StoreError, match="cannot open store"):
        SqliteStore(blocker / "store")
