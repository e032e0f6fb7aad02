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

# The frozen section headers of Prompt Contract V1, in their required order
# (none may be added, dropped or moved).
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
# The conversation contract (`qa_conversation_v1`): V1's sections plus a fenced, never-citable
# RECENT CONVERSATION section between the evidence and the question (the superprompt-v1 order).
CONVERSATION_HEADER = "=== RECENT CONVERSATION ==="
CONVERSATION_SECTION_HEADERS: tuple[str, ...] = (
    *SECTION_HEADERS[:3],
    CONVERSATION_HEADER,
    *SECTION_HEADERS[3:],
)
CONVERSATION_VARIABLES = VARIABLES | {"conversation_block"}
# Template id -> (sections in order, placeholders). Templates not listed use V1's.
TEMPLATE_SPECS: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "qa_conversation_v1": (CONVERSATION_SECTION_HEADERS, CONVERSATION_VARIABLES),
}
# Prompt style -> the template id of its conversation variant (styles without one put no
# conversation into the prompt).
CONVERSATION_TEMPLATES = {PromptStyle.QA: "qa_conversation_v1"}
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
HEADER_LINE = re.compile(r"^=== [A-Z][A-Z ]* ===$")


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded template file: id (`qa_v1`), exact text and its sha256."""

    template_id: str
    text: str
    sha256: str
    sections: tuple[str, ...] = SECTION_HEADERS
    variables: frozenset[str] = VARIABLES

    def render(self, values: dict[str, str]) -> str:
        missing = self.variables - values.keys()
        extra = values.keys() - self.variables
        if missing or extra:
            raise ContractError(
                f"template variables: missing {sorted(missing)}, extra {sorted(extra)}"
            )
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.text)


def check_structure(prompt_text: str, sections: tuple[str, ...] = SECTION_HEADERS) -> str | None:
    """Return None when the section headers (V1's five by default) appear once each, in
    order; else a message."""
    headers = [line for line in prompt_text.split("\n") if HEADER_LINE.match(line)]
    if tuple(headers) != sections:
        return f"prompt sections are {headers}, expected {list(sections)}"
    return None


@lru_cache(maxsize=8)
def load_template(style: PromptStyle | str, version: str = "v1") -> PromptTemplate:
    """Load the frozen template for a prompt style (`qa` or `summarize`); `version`
    `conversation_v1` gives the conversation variant (`qa_conversation_v1`)."""
    template_id = f"{PromptStyle(style).value}_{version}"
    sections, variables = TEMPLATE_SPECS.get(template_id, (SECTION_HEADERS, VARIABLES))
    raw = resources.files("citebound.prompt").joinpath("templates", f"{template_id}.txt")
    try:
        data = raw.read_bytes()
    except FileNotFoundError:
        raise ContractError(f"no prompt template {template_id!r}") from None
    text = data.decode("utf-8")
    names = set(_PLACEHOLDER.findall(text))
    if names != variables:
        raise ContractError(
            f"template {template_id} placeholders {sorted(names)} != {sorted(variables)}"
        )
    if check_structure(text, sections) is not None:
        raise ContractError(f"template {template_id} does not have its frozen sections")
    return PromptTemplate(
        template_id=template_id,
        text=text,
        sha256=sha256_hex(data),
        sections=sections,
        variables=variables,
    )
