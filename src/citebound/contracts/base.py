"""Base model for every contract: frozen, closed (extra="forbid"), canonical JSON."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict
from pydantic_core import PydanticCustomError


class Contract(BaseModel):
    """Frozen pydantic model with `extra="forbid"`; the only kind of object crossing a stage."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def _json_integer(value: Any) -> Any:
    # pydantic's lax mode turns "5", true and 5.0 into 5; a request field typed integer takes
    # a JSON integer only, as the OpenAPI says (numpy integers built internally pass).
    if isinstance(value, str | bytes | bool | float):
        raise PydanticCustomError("int_type", "Input should be an integer (a JSON number)")
    return value


def _json_number(value: Any) -> Any:
    if isinstance(value, str | bytes | bool):
        raise PydanticCustomError("float_type", "Input should be a number (a JSON number)")
    return value


def _json_boolean(value: Any) -> Any:
    # Lax mode reads "yes", "on", 1 and 0 as booleans; JSON Schema's boolean is true or false.
    if isinstance(value, str | bytes | int | float) and not isinstance(value, bool):
        raise PydanticCustomError("bool_type", "Input should be true or false")
    return value


JsonInt = Annotated[int, BeforeValidator(_json_integer)]
"""An `int` field that refuses a string, a boolean and a float (5.0): a JSON integer only."""
JsonFloat = Annotated[float, BeforeValidator(_json_number)]
"""A `float` field that refuses a string and a boolean: any JSON number."""
JsonBool = Annotated[bool, BeforeValidator(_json_boolean)]
"""A `bool` field that refuses "true", 1 and the like: JSON true or false only."""


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
