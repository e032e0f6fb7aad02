"""The regeneration prompt (one retry with stricter instructions, docs/validation.md): the
request's own prompt, byte for byte, followed by the frozen `regenerate_v1` section.

The section names the rejected sentences by number and reason code only (validate/failures.py):
no answer text, no scores, no evidence spans, nothing the validator withholds from a caller, so
the prompt may be shown wherever the first one is. It is appended to the user message, after
the output format, so the system message and every section of the first prompt (V1, the
conversation variant or superprompt-v1) stay exactly as they were; its own sha256 makes it a
separate, recorded call.

    >>> t = load_regenerate_template()
    >>> t.template_id, sorted(t.variables)
    ('regenerate_v1', ['allowed_markers', 'failed_sentences', 'refusal'])
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

from citebound.contracts.assembly import AnswerBundle, ChatMessage, PromptBuildResult
from citebound.contracts.base import sha256_hex
from citebound.contracts.enums import BuildStatus, ReasonCode
from citebound.contracts.execution import SentenceFailure
from citebound.errors import ContractError
from citebound.policy import Policy
from citebound.prompt.anchors import citation_format
from citebound.prompt.template import _PLACEHOLDER, MESSAGE_SEPARATOR, PromptTemplate
from citebound.text.tokens import get_tokenizer

TEMPLATE_ID = "regenerate_v1"
HEADER = "=== REGENERATION INSTRUCTIONS ==="
VARIABLES = frozenset({"failed_sentences", "allowed_markers", "refusal"})


@lru_cache(maxsize=1)
def load_regenerate_template() -> PromptTemplate:
    """The frozen `regenerate_v1` section (its sha256 is pinned by a test)."""
    raw = resources.files("citebound.prompt").joinpath("templates", f"{TEMPLATE_ID}.txt")
    data = raw.read_bytes()
    text = data.decode("utf-8")
    if set(_PLACEHOLDER.findall(text)) != VARIABLES or not text.startswith(HEADER + "\n"):
        raise ContractError(f"template {TEMPLATE_ID} is not the frozen regeneration section")
    return PromptTemplate(
        template_id=TEMPLATE_ID,
        text=text,
        sha256=sha256_hex(data),
        sections=(HEADER,),
        variables=VARIABLES,
    )


def failure_lines(failures: Sequence[SentenceFailure]) -> str:
    """`- sentence 2: LOW_SUPPORT` per located failure (numbered from 1), then
    `- the whole answer: META_COMMENTARY` per answer-level one, in the given order."""
    lines = [
        f"- sentence {f.index + 1}: {f.reason_code}"
        if f.index is not None
        else f"- the whole answer: {f.reason_code}"
        for f in failures
    ]
    return "\n".join(lines) or "- the whole answer: " + ReasonCode.INTERNAL_ERROR.value


def build_regeneration_prompt(
    first: PromptBuildResult,
    bundle: AnswerBundle,
    policy: Policy,
    failures: Sequence[SentenceFailure],
) -> PromptBuildResult:
    """The regeneration prompt after `first` was answered and rejected for `failures`.

    Returns a PromptBuildResult with build_status OK, or FAILED (PROMPT_OVER_BUDGET) when the
    longer prompt plus the reserved output no longer fits `max_total_prompt_tokens`; then no
    regeneration is made.
    """
    template = load_regenerate_template()
    fmt = citation_format(bundle.citation_style)
    section = template.render(
        {
            "failed_sentences": failure_lines(failures),
            "allowed_markers": ", ".join(
                fmt.marker(e.citation_anchor) for e in bundle.selected_evidence
            ),
            "refusal": policy.refusal.model_text,
        }
    )
    system, user = first.messages[0].content, first.messages[1].content
    # Exactly one blank line between the first prompt's last line and the new section.
    gap = "\n" if first.prompt_text.endswith("\n") else MESSAGE_SEPARATOR
    user = user + gap + section
    text = system + MESSAGE_SEPARATOR + user
    needed = get_tokenizer(policy.tokenizer).count(text) + policy.reserved_output_tokens
    fits = needed <= policy.max_total_prompt_tokens
    return PromptBuildResult(
        request_id=first.request_id,
        build_status=BuildStatus.OK if fits else BuildStatus.FAILED,
        failure_reason=None if fits else ReasonCode.PROMPT_OVER_BUDGET,
        message=""
        if fits
        else f"the regeneration prompt needs {needed} tokens > max_total_prompt_tokens "
        f"{policy.max_total_prompt_tokens}; no regeneration",
        template_id=template.template_id,
        template_sha256=template.sha256,
        prompt_text=text if fits else "",
        prompt_sha256=sha256_hex(text) if fits else "",
        messages=[
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=user),
        ]
        if fits
        else [],
        tokenizer=first.tokenizer,
        allowed_anchors=list(first.allowed_anchors),
    )
