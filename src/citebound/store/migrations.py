"""Numbered schema migrations of `store.sqlite`, applied in order when a store opens.

Never edit a released migration: add a new one. `tests/ingest/test_ingest_store_schema.py`
pins the resulting schema exactly.
"""

from __future__ import annotations

import sqlite3

from citebound.errors import StoreError

MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "initial",
        """
        CREATE TABLE collections (
            name TEXT PRIMARY KEY
        );
        CREATE TABLE sources (
            collection TEXT NOT NULL REFERENCES collections(name),
            source_path TEXT NOT NULL,
            content_sha256 TEXT NOT NULL,
            meta_sha256 TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (collection, source_path)
        );
        CREATE TABLE documents (
            knowledge_id TEXT PRIMARY KEY,
            collection TEXT NOT NULL REFERENCES collections(name),
            source_path TEXT NOT NULL,
            title TEXT NOT NULL,
            text TEXT NOT NULL,
            content_sha256 TEXT NOT NULL,
            knowledge_type TEXT NOT NULL,
            equipment_id TEXT,
            event_date TEXT,
            page_offsets TEXT NOT NULL
        );
        CREATE INDEX documents_by_source ON documents (collection, source_path);
        CREATE TABLE chunks (
            chunk_id TEXT PRIMARY KEY,
            knowledge_id TEXT NOT NULL REFERENCES documents(knowledge_id) ON DELETE CASCADE,
            collection TEXT NOT NULL,
            chunk_index INTEGER NOT NULL,
            text TEXT NOT NULL,
            heading_path TEXT NOT NULL,
            page INTEGER,
            page_end INTEGER,
            char_start INTEGER NOT NULL,
            char_end INTEGER NOT NULL,
            token_count INTEGER NOT NULL,
            row_sha256 TEXT NOT NULL,
            UNIQUE (knowledge_id, chunk_index)
        );
        CREATE INDEX chunks_by_collection ON chunks (collection, knowledge_id, chunk_index);
        CREATE TABLE index_versions (
            scope TEXT PRIMARY KEY,
            version TEXT NOT NULL,
            embedding_model TEXT NOT NULL,
            chunk_count INTEGER NOT NULL
        );
        CREATE TABLE settings (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
    ),
    (
        2,
        "chunk_ocr",
        # Chunks read by OCR from scanned PDF pages (extra `ocr`) say so in their citation.
        "ALTER TABLE chunks ADD COLUMN ocr INTEGER NOT NULL DEFAULT 0;",
    ),
]


def migrate(conn: sqlite3.Connection) -> list[int]:
    """Apply pending migrations, each in its own transaction; return the ids applied.

    Raises:
        StoreError: the store was written by a newer citebound (unknown migration ids).
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT id FROM _migrations")}
    known = {m[0] for m in MIGRATIONS}
    if done - known:
        newest = max(done)
        raise StoreError(
            f"store schema is at migration {newest}, newer than this citebound knows "
            f"({max(known)}); upgrade citebound"
        )
    applied: list[int] = []
    for number, name, sql in MIGRATIONS:
        if number in done:
            continue
        try:
            conn.execute("BEGIN IMMEDIATE")
            if conn.execute("SELECT 1 FROM _migrations WHERE id = ?", (number,)).fetchone():
                conn.execute("COMMIT")  # another process applied it while we waited
                continue
            for statement in sql.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO _migrations (id, name) VALUES (?, ?)", (number, name))
            conn.execute("COMMIT")
        except sqlite3.Error as err:
            conn.execute("ROLLBACK")
            raise StoreError(f"migration {number} ({name}) failed: {err}") from err
        applied.append(number)
    return applied
