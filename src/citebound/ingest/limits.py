"""The refusal a file over an `[ingest]` limit gets (`IngestLimits`, docs/ingest.md "Limits").

One line: what was measured, the limit it broke, and how to raise it (the citebound.toml key
and its environment variable), so the person who owns the file can act on it.
"""

from __future__ import annotations

from citebound.contracts.ingest import SkipReason
from citebound.errors import StageError


def how_to_raise(name: str) -> str:
    """Where `name` (an `IngestLimits` field) is set."""
    return f"raise [ingest] {name} in citebound.toml or $CITEBOUND_INGEST_{name.upper()}"


def limit_message(name: str, measured: str, limit: object) -> str:
    """`{measured}, over [ingest] {name} = {limit}; raise ...` (one line)."""
    shown = f"{limit:,}" if isinstance(limit, int) else str(limit)
    return f"{measured}, over [ingest] {name} = {shown}; {how_to_raise(name)}"


def over_limit(name: str, measured: str, limit: object) -> StageError:
    """The error that skips the file as `OVER_LIMIT`."""
    return StageError(
        limit_message(name, measured, limit), stage="ingest", reason_code=SkipReason.OVER_LIMIT
    )
