"""U+0000 in PostgreSQL audit rows: a reversible escape at the store boundary.

PostgreSQL's TEXT and jsonb cannot hold U+0000 (NUL). Questions holding one are refused up
front, but a model's output cannot be refused before it exists: a reply with a NUL in it
(`raw_model_text`, an answer, an unsupported sentence, a model call's text, a provider's error
message) reached the model, so it must be audited, and the INSERT failed ("invalid byte
sequence" / "unsupported Unicode escape sequence"): the request that reached the model was
withheld as AUDIT_FAILED, or, in `ask`, reported as an audit failure.

So a row holding a NUL in any of `ESCAPED_COLUMNS` is written with every string in those
columns escaped (`\\` -> `\\\\`, NUL -> `\\0`; in the jsonb columns every string value and
object key) and the row's `text_escape` column set to `ESCAPE_NUL_V1`. Reading such a row undoes
the escape, so the record reads back byte-identical and its `record_hash`, computed by the
contract on the original text before any sink sees it, still verifies: replay and verification
agree with the SQLite and Delta sinks, which store NUL as it is. A row without a NUL (nearly
all of them) is written exactly as before, `text_escape` NULL, so SQL over those rows reads
plain text, and rows written before the escape existed read back unchanged.

Not escaped: the identity and ordering columns (`request_id`, `run_id`, `timestamp_utc`,
`record_hash` and the enum and hash columns in `UNESCAPED_TEXT`): lookups and the
one-record-per-request index compare them as written. A NUL can only reach them through an
id, which every entry point refuses; if one still does, the append fails closed with a message
naming the column (AUDIT_FAILED), never a half-written or silently altered row.
"""

from __future__ import annotations

import re
from typing import Any

from citebound.audit.columns import COLUMNS
from citebound.errors import AuditError

# The value of `text_escape` on a row whose ESCAPED_COLUMNS went through `escape_text`.
ESCAPE_NUL_V1 = "nul-v1"
ESCAPE_COLUMN = "text_escape"

# Every text-bearing column of AuditRecord that can carry model, provider or caller text: the
# one list. `tests/postgres/test_pg_nul.py` checks that every text/json column is either here
# or in UNESCAPED_TEXT, so a new column has to be placed on purpose.
ESCAPED_COLUMNS: tuple[str, ...] = (
    "failure_reason",
    "reason_codes",
    "llm_failure_reason",
    "suspicious_new_ids",
    "validated_citations",
    "validated_answer_text",
    "raw_model_text",
    "model_name",
    "provider",
    "response_id",
    "embedding_model",
    "index_version",
    "citation_style",
    "template_id",
    "anchor_map",
    "evidence",
    "evidence_texts",
    "question",
    "prompt_text",
    "reranker",
    "unsupported_sentences",
    "model_calls",
    "conversation",
    "display_anchors",
)
# Identity, ordering, enum and digest columns: compared by SQL as written, never escaped.
UNESCAPED_TEXT: tuple[str, ...] = (
    "request_id",
    "run_id",
    "timestamp_utc",
    "status",
    "assembly_status",
    "generation_status",
    "llm_generation_status",
    "validation_status",
    "policy_version",
    "policy_fingerprint",
    "validator_version",
    "prompt_sha256",
    "record_hash",
)
# The feedback table's caller text (`POST /v1/feedback` comment).
ESCAPED_FEEDBACK_COLUMNS: tuple[str, ...] = ("comment",)

_TEXT_KINDS = ("text", "text_list", "json")
_UNESCAPE = re.compile(r"\\([\\0])")


def text_columns() -> tuple[str, ...]:
    """Every column of the audit layout that holds text or JSON."""
    return tuple(c.name for c in COLUMNS if c.kind in _TEXT_KINDS)


def escape_text(text: str) -> str:
    """Reversible: backslashes doubled first, then each NUL written as backslash-zero."""
    return text.replace("\\", "\\\\").replace("\x00", "\\0")


def unescape_text(text: str) -> str:
    return _UNESCAPE.sub(lambda m: "\x00" if m.group(1) == "0" else "\\", text)


def _walk(value: Any, fn: Any) -> Any:
    """`value` (text, or JSON data of a jsonb column) with `fn` applied to every string,
    object keys included."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_walk(v, fn) for v in value]
    if isinstance(value, dict):
        return {fn(k): _walk(v, fn) for k, v in value.items()}
    return value


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    if isinstance(value, dict):
        return any("\x00" in k or _has_nul(v) for k, v in value.items())
    return False


def escape_row(
    row: dict[str, Any], columns: tuple[str, ...], *, what: str, unescaped: tuple[str, ...] = ()
) -> dict[str, Any]:
    """`row` ready for PostgreSQL: unchanged (and `text_escape` NULL) when no column holds a
    NUL, else `columns` escaped and `text_escape` = ESCAPE_NUL_V1. AuditError when a NUL sits
    in one of `unescaped` (an id), which no escape may alter."""
    for name in unescaped:
        if _has_nul(row.get(name)):
            raise AuditError(
                f"{what}: column {name} holds U+0000 (a NUL character), which PostgreSQL cannot "
                "store and which is never escaped in an id; not stored. Remove it from the id"
            )
    if not any(_has_nul(row[name]) for name in columns):
        return {**row, ESCAPE_COLUMN: None}
    out = {**row, ESCAPE_COLUMN: ESCAPE_NUL_V1}
    for name in columns:
        out[name] = _walk(row[name], escape_text)
    return out


def unescape_row(row: dict[str, Any], columns: tuple[str, ...], *, what: str) -> dict[str, Any]:
    """The row as `escape_row` was given it (the escape column dropped)."""
    flag = row.pop(ESCAPE_COLUMN, None)
    if flag is None:
        return row
    if flag != ESCAPE_NUL_V1:
        raise AuditError(
            f"{what}: text escape {flag!r} is unknown to this citebound (written by a newer "
            "version): upgrade citebound to read it"
        )
    for name in columns:
        row[name] = _walk(row[name], unescape_text)
    return row
