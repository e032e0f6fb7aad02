"""Numbered migrations of the PostgreSQL store (`citebound.store.postgres`).

The tables mirror `store.migrations` (SQLite) column for column, so rows, row hashes and
index_version are the same in both. Key columns use `COLLATE "C"` so every ORDER BY is byte
order, as SQLite's BINARY collation is (a locale collation would order `B` and `a` differently
and change iteration order and index_version). Never edit a released migration: add one.
"""

from __future__ import annotations

STORE_MIGRATIONS_TABLE = "citebound_store_migrations"
STORE_LOCK_KEY = "citebound-store-migrations"

_C = 'TEXT COLLATE "C"'

STORE_MIGRATIONS: list[tuple[int, str, tuple[str, ...]]] = [
    (
        1,
        "initial",
        (
            # pgvector must be installed on the server; creating it needs a privileged role
            # once (docs/postgres.md). IF NOT EXISTS makes this a no-op when it is there.
            "CREATE EXTENSION IF NOT EXISTS vector",
            f"CREATE TABLE collections (name {_C} PRIMARY KEY)",
            f"""CREATE TABLE sources (
                collection {_C} NOT NULL REFERENCES collections(name),
                source_path {_C} NOT NULL,
                content_sha256 TEXT NOT NULL,
                meta_sha256 TEXT NOT NULL DEFAULT '',
                PRIMARY KEY (collection, source_path)
            )""",
            f"""CREATE TABLE documents (
                knowledge_id {_C} PRIMARY KEY,
                collection {_C} NOT NULL REFERENCES collections(name),
                source_path {_C} NOT NULL,
                title TEXT NOT NULL,
                text TEXT NOT NULL,
                content_sha256 TEXT NOT NULL,
                knowledge_type TEXT NOT NULL,
                equipment_id TEXT,
                event_date TEXT,
                page_offsets TEXT NOT NULL
            )""",
            "CREATE INDEX documents_by_source ON documents (collection, source_path)",
            f"""CREATE TABLE chunks (
                chunk_id {_C} PRIMARY KEY,
                knowledge_id {_C} NOT NULL REFERENCES documents(knowledge_id) ON DELETE CASCADE,
                collection {_C} NOT NULL,
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
            )""",
            "CREATE INDEX chunks_by_collection ON chunks (collection, knowledge_id, chunk_index)",
            # A counter per scope (collection, or '*'), bumped in the same transaction as every
            # write. Cached index versions are keyed by it, so a version computed from an older
            # snapshot can never be served after a newer write (see postgres.py).
            f"CREATE TABLE generations (scope {_C} PRIMARY KEY, generation BIGINT NOT NULL)",
            f"""CREATE TABLE index_versions (
                scope {_C} NOT NULL,
                generation BIGINT NOT NULL,
                embedding_model TEXT NOT NULL,
                version TEXT NOT NULL,
                chunk_count INTEGER NOT NULL,
                PRIMARY KEY (scope, generation, embedding_model)
            )""",
            f"CREATE TABLE settings (key {_C} PRIMARY KEY, value TEXT NOT NULL)",
            # Embeddings by (model, chunk_id). chunk_id is a content hash, so a vector stays
            # valid for as long as a chunk of that id exists; no foreign key, so re-ingesting
            # a document does not throw its vectors away.
            f"""CREATE TABLE chunk_vectors (
                model {_C} NOT NULL,
                chunk_id {_C} NOT NULL,
                embedding vector NOT NULL,
                PRIMARY KEY (model, chunk_id)
            )""",
            # The index manifest each collection was last built with (IndexManifest JSON):
            # replicas rebuild their local lexical index and vector matrix from it.
            f"CREATE TABLE index_manifests (collection {_C} PRIMARY KEY, manifest TEXT NOT NULL)",
        ),
    ),
    (
        2,
        "api_keys",
        (
            # API keys every replica accepts (`citebound apikey NAME --database URL`): only
            # the sha256 of a key is stored, as in [[api.keys]].
            f"""CREATE TABLE api_keys (
                name {_C} PRIMARY KEY,
                sha256 TEXT NOT NULL UNIQUE CHECK (sha256 ~ '^[0-9a-f]{{64}}$'),
                role TEXT NOT NULL CHECK (role IN ('reader', 'admin')),
                collections TEXT NOT NULL,
                created_utc TIMESTAMPTZ NOT NULL DEFAULT now()
            )""",
        ),
    ),
    (
        3,
        "chunk_ocr",
        # Chunks read by OCR from scanned PDF pages, as SQLite's migration 2.
        ("ALTER TABLE chunks ADD COLUMN ocr BOOLEAN NOT NULL DEFAULT FALSE",),
    ),
]
