"""Persistent documents and chunks: the `Store` protocol and the embedded SQLite store."""

from citebound.store.base import IngestStore, Store
from citebound.store.sqlite import DEFAULT_ROOT, SqliteStore, check_collection_name

__all__ = ["DEFAULT_ROOT", "IngestStore", "SqliteStore", "Store", "check_collection_name"]
