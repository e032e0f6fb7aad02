"""A0 preprocessing (seed 002 §5.1): structured prompt -> canonical body, deterministically.

Header mapping ladder, first match wins:
normalize -> exact -> alias -> tiny typo -> bilingual (EN/DE) -> keyword -> unknown.
A plain question (no header that maps to a known key) becomes `task` unchanged.
"""

from __future__ import annotations

import re
import unicodedata

from citebound.pipeline.state import MappingDecision, PromptBody

CANONICAL = (
    "system",
    "task",
    "audience",
    "tone",
    "depth",
    "context",
    "purpose",
    "format",
    "text",
    "constraints",
)
ALIASES = {
    "question": "task",
    "ask": "task",
    "request": "task",
    "query": "task",
    "instruction": "task",
    "background": "context",
    "situation": "context",
    "details": "context",
    "goal": "purpose",
    "objective": "purpose",
    "why": "purpose",
    "intent": "purpose",
    "output": "format",
    "outputformat": "format",
    "answerformat": "format",
    "style": "tone",
    "role": "system",
    "persona": "system",
    "reader": "audience",
    "readers": "audience",
    "level": "depth",
    "detail": "depth",
    "detaillevel": "depth",
    "input": "text",
    "document": "text",
    "rules": "constraints",
    "limits": "constraints",
    "requirements": "constraints",
}
BILINGUAL = {
    "aufgabe": "task",
    "frage": "task",
    "auftrag": "task",
    "kontext": "context",
    "hintergrund": "context",
    "zweck": "purpose",
    "ziel": "purpose",
    "absicht": "purpose",
    "ausgabeformat": "format",
    "zielgruppe": "audience",
    "publikum": "audience",
    "ton": "tone",
    "tonfall": "tone",
    "tiefe": "depth",
    "detailgrad": "depth",
    "rolle": "system",
    "eingabe": "text",
    "einschrankungen": "constraints",
    "regeln": "constraints",
}
KEYWORDS = {
    "format": "format",
    "audience": "audience",
    "context": "context",
    "purpose": "purpose",
    "task": "task",
    "tone": "tone",
    "depth": "depth",
    "question": "task",
    "constraint": "constraints",
}
# Defaults for MUST keys other than task (seed 002: fill defaults for the other MUST keys).
DEFAULTS = {
    "system": "documentation assistant",
    "audience": "engineer",
    "tone": "neutral",
    "depth": "standard",
    "format": "plain sentences with citations",
}

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
    if len(norm) >= 4:
        for cand in sorted((*CANONICAL, *ALIASES)):
            if len(cand) >= 4 and _edit_distance_at_most_one(norm, cand):
                return MappingDecision(header=header, key=ALIASES.get(cand, cand), step="typo")
    if norm in BILINGUAL:
        return MappingDecision(header=header, key=BILINGUAL[norm], step="bilingual")
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
        strong = decision is not None and decision.step in ("exact", "alias", "typo", "bilingual")
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
    ready = "\n".join(f"{k.upper()}: {getattr(body, k)}" for k in CANONICAL if getattr(body, k))
    return body, unknown, decisions, ready


def retrieval_query(body: PromptBody) -> str:
    """Seed 002 §5.3: the normalized query built from task, context and purpose."""
    return " ".join(
        " ".join(p.split()) for p in (body.task, body.context, body.purpose) if p.strip()
    )
