"""A0 preprocessing (docs/superprompt.md): structured prompt -> canonical body, deterministically.

Header mapping ladder, first match wins:
normalize -> exact -> alias -> tiny typo -> bilingual (EN/DE) -> templates -> keyword -> unknown.
With `stages.llm_header_mapping` on, headers still unknown go to a tiny LLM chooser
(`semantic_mapping`), accepted only at or above the schema's fixed confidence threshold.
A plain question (no header that maps to a known key) becomes `task` unchanged.
"""

from __future__ import annotations

import json
import re
import unicodedata
from importlib import resources
from typing import Any

from citebound.contracts.question import MappingDecision, PromptBody

# The mapping data lives in `prompt_schema.json` (canonical keys, MUST keys,
# defaults, aliases, bilingual map, templates, keywords, typo tolerance, modes); changing the
# ladder's vocabulary is a data change, not a code change.
SCHEMA: dict[str, Any] = json.loads(
    resources.files("citebound.question").joinpath("prompt_schema.json").read_text("utf-8")
)
CANONICAL: tuple[str, ...] = tuple(SCHEMA["canonical_keys"])
ALIASES: dict[str, str] = SCHEMA["aliases"]
BILINGUAL: dict[str, str] = SCHEMA["bilingual"]
TEMPLATES: dict[str, str] = SCHEMA["templates"]
KEYWORDS: dict[str, str] = SCHEMA["keywords"]
# Defaults for MUST keys other than task (a missing MUST key gets its default).
DEFAULTS: dict[str, str] = SCHEMA["defaults"]
_TYPO = SCHEMA["typo_tolerance"]

_HEADER = re.compile(r"^\s*([^\W\d_][\w \-/]{0,38}?)\s*:\s*(.*)$")


def normalize_header(header: str) -> str:
    folded = unicodedata.normalize("NFKD", header.lower())
    return "".join(c for c in folded if c.isalnum())


def _edit_distance_at_most_one(a: str, b: str) -> bool:
    if abs(len(a) - len(b)) > 1 or a == b:
        return a == b
    if len(a) == len(b):
        diffs = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diffs) == 1 or (
            len(diffs) == 2
            and diffs[1] == diffs[0] + 1
            and a[diffs[0]] == b[diffs[1]]
            and a[diffs[1]] == b[diffs[0]]
        )
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def map_header(header: str) -> MappingDecision:
    """Map one header through the ladder; deterministic (candidates are tried in sorted order)."""
    norm = normalize_header(header)
    if norm in CANONICAL:
        return MappingDecision(header=header, key=norm, step="exact")
    if norm in ALIASES:
        return MappingDecision(header=header, key=ALIASES[norm], step="alias")
    if len(norm) >= _TYPO["min_length"]:
        for cand in sorted((*CANONICAL, *ALIASES)):
            if len(cand) >= _TYPO["min_length"] and _edit_distance_at_most_one(norm, cand):
                return MappingDecision(header=header, key=ALIASES.get(cand, cand), step="typo")
    if norm in BILINGUAL:
        return MappingDecision(header=header, key=BILINGUAL[norm], step="bilingual")
    if norm in TEMPLATES:
        return MappingDecision(header=header, key=TEMPLATES[norm], step="templates")
    words = [normalize_header(w) for w in re.split(r"[\s\-/]+", header)]
    for word in words:
        if word in KEYWORDS:
            return MappingDecision(header=header, key=KEYWORDS[word], step="keyword")
    return MappingDecision(header=header, key=None, step="unknown")


def preprocess(user_text: str) -> tuple[PromptBody, dict[str, str], list[MappingDecision], str]:
    """Return (body, unknown_attributes, decisions, prompt_ready) for a raw prompt."""
    lines = user_text.strip().split("\n")
    segments: list[tuple[MappingDecision | None, list[str]]] = [(None, [])]
    structured = False
    for line in lines:
        m = _HEADER.match(line)
        decision = map_header(m.group(1)) if m else None
        strong = decision is not None and decision.step in (
            "exact",
            "alias",
            "typo",
            "bilingual",
            "templates",
        )
        if m and decision is not None and (strong or structured):
            structured = structured or strong
            segments.append((decision, [m.group(2)]))
        else:
            segments[-1][1].append(line)
    if not structured:
        text = " ".join(user_text.split())
        body = PromptBody(task=text)
        return body, {}, [], f"TASK: {text}"
    values: dict[str, str] = {}
    unknown: dict[str, str] = {}
    decisions: list[MappingDecision] = []
    preamble = "\n".join(segments[0][1]).strip()
    for decision, content_lines in segments[1:]:
        assert decision is not None
        decisions.append(decision)
        content = "\n".join(content_lines).strip()
        if decision.key is None:
            unknown[decision.header] = content
        elif content:
            values[decision.key] = (
                f"{values[decision.key]}\n{content}" if decision.key in values else content
            )
    # TASK/CONTEXT rule: a missing task is taken from the preamble, else from the context.
    if not values.get("task"):
        values["task"] = preamble or values.get("context", "") or " ".join(user_text.split())
    elif preamble:
        values["context"] = (
            f"{preamble}\n{values['context']}" if values.get("context") else preamble
        )
    body = PromptBody(**values)
    return body, unknown, decisions, compose_prompt_ready(body)


def compose_prompt_ready(body: PromptBody) -> str:
    """The A0 snapshot: one `KEY: value` line per filled canonical field."""
    return "\n".join(f"{k.upper()}: {getattr(body, k)}" for k in CANONICAL if getattr(body, k))


def retrieval_query(body: PromptBody) -> str:
    """The normalized query for retrieval, built from task, context and purpose."""
    return " ".join(
        " ".join(p.split()) for p in (body.task, body.context, body.purpose) if p.strip()
    )
