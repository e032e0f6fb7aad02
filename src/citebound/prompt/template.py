"""Frozen prompt templates: files in `prompt/templates/`, each pinned by sha256 in the tests.

Rendering is a single-pass substitution of `{name}` placeholders: every placeholder must be
given, no extra value is accepted, and substituted text is never re-scanned (so braces in
evidence or questions are data).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from citebound.contracts.base import sha256_hex
from citebound.contracts.enums import PromptStyle
from citebound.errors import ContractError

# The frozen section headers of Prompt Contract V1, in their required order (seed 000 P1).
SECTION_HEADERS: tuple[str, ...] = (
    "=== SYSTEM INSTRUCTIONS ===",
    "=== SAFETY AND GROUNDING RULES ===",
    "=== EVIDENCE ===",
    "=== USER QUESTION ===",
    "=== OUTPUT FORMAT ===",
)
# The system chat message is sections 1-2; the user message is sections 3-5.
USER_MESSAGE_START = SECTION_HEADERS[2]
MESSAGE_SEPARATOR = "\n\n"
VARIABLES = frozenset(
    {"refusal", "marker_example", "evidence_block", "question", "allowed_markers"}
)
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
HEADER_LINE = re.compile(r"^=== [A-Z][A-Z ]* ===$")


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded template file: id (`qa_v1`), exact text and its sha256."""

    template_id: str
    text: str
    sha256: str

    def render(self, values: dict[str, str]) -> str:
        missing = VARIABLES - values.keys()
        extra = values.keys() - VARIABLES
        if missing or extra:
            raise ContractError(
                f"template variables: missing {sorted(missing)}, extra {sorted(extra)}"
            )
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.text)


def check_structure(prompt_text: str) -> str | None:
    """Return None when the five section headers appear once each, in order; else a message."""
    headers = [line for line in prompt_text.split("\n") if HEADER_LINE.match(line)]
    if tuple(headers) != SECTION_HEADERS:
        return f"prompt sections are {headers}, expected {list(SECTION_HEADERS)}"
    return None


@lru_cache(maxsize=8)
def load_template(style: PromptStyle | str, version: str = "v1") -> PromptTemplate:
    """Load the frozen template for a prompt style (`qa` or `summarize`)."""
    template_id = f"{PromptStyle(style).value}_{version}"
    raw = resources.files("citebound.prompt").joinpath("templates", f"{template_id}.txt")
    data = raw.read_bytes()
    text = data.decode("utf-8")
    names = set(_PLACEHOLDER.findall(text))
    if names != VARIABLES:
        raise ContractError(
            f"template {template_id} placeholders {sorted(names)} != {sorted(VARIABLES)}"
        )
    if check_structure(text) is not None:
        raise ContractError(f"template {template_id} does not have the five frozen sections")
    return PromptTemplate(template_id=template_id, text=text, sha256=sha256_hex(data))
