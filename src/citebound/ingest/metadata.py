"""Document metadata from Markdown front matter and `<file>.meta.json` sidecars.

Front matter is parsed as a strict `key: value` subset of YAML (no YAML library needed):
top-level `key: value` lines with optional single or double quotes, `#` comments and blank
lines. Indented or `- ` lines continue the previous key (nested YAML); such values are ignored
for unknown keys and rejected for the keys we read. Anything else is BAD_METADATA: we do not
guess at metadata that filters depend on.
"""

from __future__ import annotations

import datetime as dt
import json
import re

from citebound.contracts.ingest import SkipReason
from citebound.errors import StageError

# Keys citebound reads; every other front-matter key (layout, tags, ...) is ignored.
METADATA_KEYS = ("title", "knowledge_type", "equipment_id", "event_date")
_KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*?))?\s*$")
_FENCE = re.compile(r"^---[ \t]*$")


def bad_metadata(message: str) -> StageError:
    """The StageError every metadata problem raises (the file is skipped with BAD_METADATA)."""
    return StageError(message, stage="ingest", reason_code=SkipReason.BAD_METADATA)


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Split `---` front matter off Markdown source.

    Returns the validated metadata and the body (the text after the closing `---` line).
    Text without an opening `---` first line, or without a closing one, has no front matter.
    """
    if not text.startswith("---"):
        return {}, text
    lines = text.splitlines(keepends=True)
    if not _FENCE.match(lines[0].rstrip("\r\n")):
        return {}, text
    for i in range(1, len(lines)):
        if _FENCE.match(lines[i].rstrip("\r\n")):
            body = "".join(lines[i + 1 :])
            return parse_front_matter([ln.rstrip("\r\n") for ln in lines[1:i]]), body
    return {}, text


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    if value[:1] in "'\"":
        raise bad_metadata(f"unterminated quoted value: {value!r}")
    # A bare value may carry a trailing ` # comment`, as in YAML.
    return value.split(" #", 1)[0].rstrip()


def parse_front_matter(lines: list[str]) -> dict[str, str]:
    """Parse the strict subset described in the module docstring; return validated keys."""
    raw: dict[str, str | None] = {}
    last: str | None = None
    for n, line in enumerate(lines, start=2):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if line[:1].isspace() or stripped.startswith("- "):
            if last is None:
                raise bad_metadata(f"front matter line {n} is indented with no key above it")
            raw[last] = None  # nested value: fine for unknown keys, rejected below for ours
            continue
        m = _KEY_LINE.match(line)
        if m is None:
            raise bad_metadata(f"front matter line {n} is not `key: value`: {line!r}")
        key, value = m.group(1), m.group(2)
        last = key
        raw[key] = None if value is None else _unquote(value)
    out: dict[str, str | None] = {}
    for key in METADATA_KEYS:
        if key not in raw:
            continue
        value = raw[key]
        if value is None:
            raise bad_metadata(f"front matter `{key}` must be a single value on its line")
        out[key] = value
    return validate_metadata(out, where="front matter")


def validate_metadata(values: dict[str, str | None], *, where: str) -> dict[str, str]:
    """Check types and formats; drop nulls. `event_date` must be an ISO date (YYYY-MM-DD)."""
    out: dict[str, str] = {}
    for key, value in values.items():
        if key not in METADATA_KEYS:
            allowed = ", ".join(METADATA_KEYS)
            raise bad_metadata(f"{where}: unknown key `{key}` (allowed: {allowed})")
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise bad_metadata(f"{where}: `{key}` must be a non-empty string")
        value = value.strip()
        if key == "event_date":
            try:
                value = dt.date.fromisoformat(value).isoformat()
            except ValueError:
                raise bad_metadata(
                    f"{where}: event_date {value!r} is not an ISO date (YYYY-MM-DD)"
                ) from None
        out[key] = value
    return out


def parse_sidecar(raw: bytes) -> dict[str, str]:
    """Parse a `<file>.meta.json` sidecar: a JSON object with only the METADATA_KEYS."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise bad_metadata(f"sidecar is not valid UTF-8 JSON: {err}") from None
    if not isinstance(data, dict):
        raise bad_metadata("sidecar must be a JSON object")
    for key, value in data.items():
        if value is not None and not isinstance(value, str):
            raise bad_metadata(f"sidecar `{key}` must be a string or null")
    return validate_metadata(data, where="sidecar")
