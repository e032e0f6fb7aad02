"""Fail-fast validation of a retrieval bundle: checks V1-V5 (docs/design.md).

Returns reason-coded issues instead of raising, so a bad bundle becomes `assembly_status =
FAILED` with a message a person can act on, never a traceback.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from citebound.contracts.enums import ReasonCode
from citebound.contracts.retrieval import RetrievalBundle
from citebound.policy import Policy

TRACE_FIELDS = frozenset({"request_id", "index_version", "embedding_model", "top_k"})
# Ids go into evidence headers: characters that would break the header line are refused.
_UNSAFE_ID = re.compile(r"[\[\]|\x00-\x1f\x7f]")
_MAX_ISSUES = 20


@dataclass(frozen=True)
class Issue:
    code: ReasonCode
    message: str


RawBundle = RetrievalBundle | Mapping[str, Any] | str | bytes


def _request_id_of(raw: object) -> str | None:
    if isinstance(raw, Mapping):
        rid = raw.get("request_id")
        return rid if isinstance(rid, str) and rid else None
    return None


def parse_bundle(raw: RawBundle) -> tuple[RetrievalBundle | None, str | None, list[Issue]]:
    """Parse any input form into a RetrievalBundle: (bundle, request_id, V1 issues)."""
    if isinstance(raw, RetrievalBundle):
        return raw, raw.request_id, []
    if isinstance(raw, (str, bytes)):
        try:
            raw = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            return (
                None,
                None,
                [Issue(ReasonCode.V1_SCHEMA, f"retrieval bundle is not valid JSON: {err}")],
            )
    if not isinstance(raw, Mapping):
        kind = type(raw).__name__
        return (
            None,
            None,
            [Issue(ReasonCode.V1_SCHEMA, f"retrieval bundle must be an object, got {kind}")],
        )
    request_id = _request_id_of(raw)
    try:
        return RetrievalBundle.model_validate(raw), request_id, []
    except ValidationError as err:
        issues = []
        for e in err.errors()[:_MAX_ISSUES]:
            where = ".".join(str(p) for p in e["loc"]) or "<bundle>"
            top = str(e["loc"][0]) if e["loc"] else ""
            code = ReasonCode.MISSING_TRACE if top in TRACE_FIELDS else ReasonCode.V1_SCHEMA
            issues.append(Issue(code, f"{where}: {e['msg']}"))
        return None, request_id, issues


def check_bundle(bundle: RetrievalBundle, policy: Policy) -> list[Issue]:
    """V1 (ids), V2 rank integrity, V3 similarity integrity, V4 text integrity, V5 domain."""
    issues: list[Issue] = []
    seen: set[str] = set()
    for i, row in enumerate(bundle.results):
        for name, value in (("chunk_id", row.chunk_id), ("knowledge_id", row.knowledge_id)):
            if not value.strip() or _UNSAFE_ID.search(value):
                issues.append(
                    Issue(
                        ReasonCode.V1_SCHEMA,
                        f"results.{i}.{name} {value!r} is empty or has [ ] | or control chars",
                    )
                )
        if row.chunk_id in seen:
            issues.append(
                Issue(ReasonCode.V1_SCHEMA, f"results.{i}.chunk_id {row.chunk_id!r} is duplicated")
            )
        seen.add(row.chunk_id)
        if not math.isfinite(row.similarity) or not 0.0 <= row.similarity <= 1.0:
            issues.append(
                Issue(
                    ReasonCode.V3_SIMILARITY_INTEGRITY,
                    f"results.{i}.similarity {row.similarity!r} must be finite and in [0, 1]",
                )
            )
        if not row.chunk_text.strip():
            issues.append(Issue(ReasonCode.V4_TEXT_INTEGRITY, f"results.{i}.chunk_text is empty"))
        if not policy.allows_knowledge_type(row.knowledge_type_effective):
            issues.append(
                Issue(
                    ReasonCode.V5_DOMAIN_INTEGRITY,
                    f"results.{i}.knowledge_type_effective {row.knowledge_type_effective!r} "
                    f"is not in the allowed set {policy.allowed_knowledge_types}",
                )
            )
    ranks = sorted(row.rank for row in bundle.results)
    if ranks:
        if len(set(ranks)) != len(ranks):
            issues.append(Issue(ReasonCode.V2_RANK_INTEGRITY, "ranks are not unique"))
        if ranks[0] != 0:
            issues.append(
                Issue(ReasonCode.V2_RANK_INTEGRITY, f"ranks must start at 0, lowest is {ranks[0]}")
            )
    return issues[:_MAX_ISSUES]
