"""A5 format rules (docs/superprompt.md) for `superprompt-v1`: a requested format -> output rules.

Deterministic: the requested format (the `Format:` header, or words such as "as a bullet list"
in the task) is matched against a closed table of formats the validator can check. A format it
cannot check (tables, JSON, code) is recorded as not applied, with the reason, and the default
(plain cited sentences) is used: citations are checked after generation, so the prompt never
asks for an answer shape the validator would have to guess about.
"""

from __future__ import annotations

import re

from pydantic import Field

from citebound.contracts.base import Contract

DEFAULT_FORMAT = "plain"


class FormatSpec(Contract):
    """What A5 decided; stored in `extras["format_enforcer"]` and rendered into the prompt."""

    requested_format: str = ""
    normalized_format_spec: str = DEFAULT_FORMAT
    example_shape: str = ""
    hard_rules: list[str] = Field(default_factory=list)
    applied: bool = True
    source: str = "deterministic"
    note: str = ""


# name -> (cue regex, rules, example). Order matters: the first cue that matches wins.
_FORMATS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    (
        "checklist",
        r"\bcheck ?list\b",
        (
            "Write a checklist: one item per line, each line starting with '- [ ] '.",
            "End every item with the citation marker of the attachment it comes from.",
        ),
        "- [ ] <step> {marker}",
    ),
    (
        "numbered list",
        r"\bnumbered\b|\bstep[- ]by[- ]step\b|\bordered list\b|\bsteps\b",
        (
            "Write a numbered list: one item per line, numbered '1.', '2.', ... in order.",
            "End every item with the citation marker of the attachment it comes from.",
        ),
        "1. <item> {marker}",
    ),
    (
        "bullet list",
        r"\bbullet(?:s|ed)?\b|\bbullet[- ]points?\b|\blist\b",
        (
            "Write a bullet list: one item per line, each line starting with '- '.",
            "End every item with the citation marker of the attachment it comes from.",
        ),
        "- <item> {marker}",
    ),
    (
        "plain",
        r"\bplain\b|\bprose\b|\bparagraphs?\b|\bsentences?\b|\btext\b",
        ("Answer in plain sentences.", "End every sentence with its citation marker."),
        "<sentence> {marker}",
    ),
)
_UNSUPPORTED = re.compile(r"\btable\b|\bjson\b|\byaml\b|\bcsv\b|\bxml\b|\bcode\b|\bhtml\b", re.I)
_DEFAULT_RULES = _FORMATS[-1][2]
_DEFAULT_EXAMPLE = _FORMATS[-1][3]
# Words in the task that ask for a shape ("as a bullet list", "in 3 bullet points").
_TASK_CUE = re.compile(
    r"\b(?:as|in|using|with)\s+(?:an?\s+)?([\w -]{0,30}?(?:list|bullets?|"
    r"bullet points?|checklist|steps|table|json))\b",
    re.I,
)


def requested_format(format_field: str, task: str) -> str:
    """The format the user asked for: the Format header, else a shape named in the task."""
    if format_field.strip():
        return " ".join(format_field.split())
    m = _TASK_CUE.search(task)
    return " ".join(m.group(1).split()) if m else ""


def format_spec(asked: str, marker_example: str) -> FormatSpec:
    """The deterministic A5 decision for a requested format (empty = default)."""
    if not asked:
        return FormatSpec(
            hard_rules=list(_DEFAULT_RULES),
            example_shape=_DEFAULT_EXAMPLE.format(marker=marker_example),
        )
    low = asked.casefold()
    if _UNSUPPORTED.search(low):
        return FormatSpec(
            requested_format=asked,
            hard_rules=list(_DEFAULT_RULES),
            example_shape=_DEFAULT_EXAMPLE.format(marker=marker_example),
            applied=False,
            note=f"format {asked!r} cannot be checked by the citation validator; "
            "plain cited sentences are asked for instead",
        )
    for name, cue, rules, example in _FORMATS:
        if re.search(cue, low):
            return FormatSpec(
                requested_format=asked,
                normalized_format_spec=name,
                hard_rules=list(rules),
                example_shape=example.format(marker=marker_example),
            )
    return FormatSpec(
        requested_format=asked,
        hard_rules=list(_DEFAULT_RULES),
        example_shape=_DEFAULT_EXAMPLE.format(marker=marker_example),
        applied=False,
        note=f"format {asked!r} is not one of the supported formats "
        f"({', '.join(f[0] for f in _FORMATS)}); plain cited sentences are asked for instead",
    )


SUPPORTED_FORMATS = tuple(f[0] for f in _FORMATS)
