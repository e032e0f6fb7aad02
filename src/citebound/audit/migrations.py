"""Numbered SQLite migrations of the audit store. Applied in order when a sink opens.

Migrations are history: never edit one that has shipped; add the next number instead.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from citebound.audit.chain import GENESIS, link

# A step is SQL, or a function run on the connection inside the migration's transaction.
Step = str | Callable[[sqlite3.Connection], None]


def _chain_existing(conn: sqlite3.Connection) -> None:
    """Migration 9: chain the records a store already holds, from its first (seq order)."""
    prev = GENESIS
    rows = conn.execute("SELECT seq, record_hash FROM audit_records ORDER BY seq").fetchall()
    for seq, record_hash in rows:
        chain = link(prev, record_hash)
        conn.execute(
            "UPDATE audit_records SET prev_hash = ?, chain_hash = ? WHERE seq = ?",
            (prev, chain, seq),
        )
        prev = chain


_NO_UPDATE = (
    "CREATE TRIGGER audit_records_no_update BEFORE UPDATE ON audit_records "
    "BEGIN SELECT RAISE(ABORT, 'audit_records is append-only: UPDATE refused'); END"
)

AUDIT_TABLE = """CREATE TABLE audit_records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    schema_version INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    run_id TEXT,
    timestamp_utc TEXT NOT NULL,
    status TEXT NOT NULL,
    assembly_status TEXT,
    generation_status TEXT NOT NULL,
    llm_generation_status TEXT,
    validation_status TEXT,
    failure_reason TEXT,
    reason_codes TEXT NOT NULL,
    llm_failure_reason TEXT,
    citation_count INTEGER NOT NULL,
    uncited_sentence_count INTEGER NOT NULL,
    invalid_anchor_count INTEGER NOT NULL,
    suspicious_new_ids TEXT NOT NULL,
    refusal_detected INTEGER NOT NULL,
    length_ratio_flag INTEGER NOT NULL,
    attribution_coverage REAL,
    min_support REAL,
    low_confidence INTEGER NOT NULL,
    validated_citations TEXT NOT NULL,
    validated_answer_text TEXT,
    raw_model_text TEXT,
    model_name TEXT,
    provider TEXT,
    response_id TEXT,
    embedding_model TEXT,
    index_version TEXT,
    policy_version TEXT NOT NULL,
    policy_fingerprint TEXT NOT NULL,
    validator_version TEXT,
    citation_style TEXT,
    prompt_sha256 TEXT,
    template_id TEXT,
    anchor_map TEXT NOT NULL,
    evidence TEXT NOT NULL,
    evidence_chars INTEGER NOT NULL,
    evidence_texts TEXT,
    attempts INTEGER NOT NULL,
    llm_latency_ms REAL,
    latency_ms REAL NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    total_tokens INTEGER,
    question TEXT NOT NULL,
    prompt_text TEXT,
    record_hash TEXT NOT NULL
)"""

MIGRATIONS: tuple[tuple[int, str, tuple[Step, ...]], ...] = (
    (
        1,
        "audit_records",
        (
            AUDIT_TABLE,
            "CREATE UNIQUE INDEX audit_records_request_run "
            "ON audit_records (request_id, ifnull(run_id, ''))",
            "CREATE INDEX audit_records_time ON audit_records (timestamp_utc, request_id)",
        ),
    ),
    (
        2,
        "feedback",
        (
            "CREATE TABLE feedback (\n"
            "    seq INTEGER PRIMARY KEY AUTOINCREMENT,\n"
            "    request_id TEXT NOT NULL,\n"
            "    verdict TEXT NOT NULL CHECK (verdict IN ('correct', 'incorrect')),\n"
            "    comment TEXT NOT NULL,\n"
            "    timestamp_utc TEXT NOT NULL\n"
            ")",
            "CREATE INDEX feedback_request ON feedback (request_id, seq)",
        ),
    ),
    (
        3,
        "append_only_triggers",
        tuple(
            f"CREATE TRIGGER {table}_no_{op.lower()} BEFORE {op} ON {table} "
            f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: {op} refused'); END"
            for table in ("audit_records", "feedback")
            for op in ("UPDATE", "DELETE")
        ),
    ),
    (4, "reranker", ("ALTER TABLE audit_records ADD COLUMN reranker TEXT",)),
    (
        5,
        "unsupported_sentences",
        ("ALTER TABLE audit_records ADD COLUMN unsupported_sentences TEXT",),
    ),
    (6, "model_calls", ("ALTER TABLE audit_records ADD COLUMN model_calls TEXT",)),
    # 6 is taken by another v4 column; numbers are applied as a set, so either lands first.
    (7, "conversation", ("ALTER TABLE audit_records ADD COLUMN conversation TEXT",)),
    (8, "display_anchors", ("ALTER TABLE audit_records ADD COLUMN display_anchors TEXT",)),
    # The audit chain (audit/chain.py): existing records are chained in seq order, the
    # UPDATE trigger lifted for that one transaction only.
    (
        9,
        "audit_chain",
        (
            "ALTER TABLE audit_records ADD COLUMN prev_hash TEXT",
            "ALTER TABLE audit_records ADD COLUMN chain_hash TEXT",
            "DROP TRIGGER audit_records_no_update",
            _chain_existing,
            _NO_UPDATE,
        ),
    ),
)
