"""Base model for every contract: frozen, closed (extra="forbid"), canonical JSON."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict


class Contract(BaseModel):
    """Frozen pydantic model with `extra="forbid"`; the only kind of object crossing a stage."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def canonical_json(value: Any) -> str:
    """Canonical JSON: sorted keys, no insignificant whitespace, UTF-8 kept (not escaped).

    This is a contract: hashes of records and policies are computed over these bytes.
    """
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(value: Any) -> str:
    """`sha256:<hex>` of the canonical JSON of `value` (the algorithm is part of the string)."""
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def sha256_hex(data: str | bytes) -> str:
    """Plain hex sha256 of text (UTF-8) or bytes."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()
