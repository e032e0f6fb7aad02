"""S_CTX_MD (docs/superprompt.md): a condensed, non-citable view of the selected attachments.

Three lists: **Facts**, **Constraints**, **Open issues**. The deterministic (extractive) form
copies sentences verbatim from the attachments, so it can never add a fact: the first sentence
of each attachment is a fact; sentences that state a rule (must, shall, never, only, do not,
at least, at most, required, warning, caution) are constraints; open issues are the question's
content words that no attachment contains. An LLM-condensed S_CTX (A4 with `stages.llm_condense`)
must pass `condensed_is_grounded` against the same attachments or is replaced by this form.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from citebound.text.identifiers import identifiers, present_in
from citebound.text.lexicon import WORD
from citebound.text.overlap import content_words, lexical_support
from citebound.text.sentences import split_sentences

S_CTX_HEADINGS = ("Facts:", "Constraints:", "Open issues:")
NONE_LINE = "- none"
_CONSTRAINT = re.compile(
    r"\b(?:must|shall|never|only|do not|don't|at least|at most|no more than|required|"
    r"warning|caution|prohibited|not permitted)\b",
    re.I,
)


def _sentences(text: str) -> list[str]:
    return [" ".join(s.split()) for s in split_sentences(text) if s.strip()]


def _block(heading: str, items: Sequence[str]) -> str:
    lines = [f"- {item}" for item in items] or [NONE_LINE]
    return "\n".join([heading, *lines])


def extractive_s_ctx(
    question: str, evidence_texts: Sequence[str], max_items: int, ignore: str = ""
) -> str:
    """Deterministic S_CTX_MD from the attachments (in attachment order), verbatim sentences.
    Words of `ignore` (the requested format, e.g. "bullet list") are not open issues."""
    facts: list[str] = []
    constraints: list[str] = []
    for text in evidence_texts:
        sentences = _sentences(text)
        if sentences and sentences[0] not in facts and len(facts) < max_items:
            facts.append(sentences[0])
        for s in sentences:
            if _CONSTRAINT.search(s) and s not in constraints and len(constraints) < max_items:
                constraints.append(s)
    known = frozenset().union(*(content_words(t) for t in evidence_texts))
    missing_stems = content_words(question) - known - content_words(ignore)
    # content_words stems ("turbine" -> "turbin"); name the question's own words.
    missing = sorted(
        {w.lower() for w in WORD.findall(question) if content_words(w) & missing_stems}
    )
    issues = [f"The attachments do not mention: {', '.join(missing)}."] if missing else []
    return "\n\n".join(
        [
            _block(S_CTX_HEADINGS[0], facts),
            _block(S_CTX_HEADINGS[1], constraints),
            _block(S_CTX_HEADINGS[2], issues),
        ]
    )


def s_ctx_lines(s_ctx: str) -> list[str]:
    """The item lines (`- ...`) of the Facts and Constraints lists of an S_CTX_MD text."""
    out: list[str] = []
    section = ""
    for raw in s_ctx.split("\n"):
        line = raw.strip()
        if line in S_CTX_HEADINGS:
            section = line
            continue
        if line.startswith("- ") and section in S_CTX_HEADINGS[:2] and line != NONE_LINE:
            out.append(line[2:].strip())
    return out


def condensed_is_grounded(
    s_ctx: str, evidence_texts: Sequence[str], min_support: float
) -> tuple[bool, str]:
    """The A4 grounding check: (ok, why not).

    Until the validator exposes a public support function (branch `grounding`), this is the
    check: the text has the three lists in order; every Facts/Constraints line is supported
    by one attachment (`lexical_support` >= `min_support`) and every number, date or code in
    it occurs in the attachments. Open issues name what is missing, so they are not checked.
    """
    positions = [s_ctx.find(h) for h in S_CTX_HEADINGS]
    if any(p < 0 for p in positions) or positions != sorted(positions):
        return False, "S_CTX_MD lacks the Facts / Constraints / Open issues lists in order"
    joined = "\n".join(evidence_texts)
    lines = s_ctx_lines(s_ctx)
    for ident in identifiers("\n".join(lines)):
        if not present_in(ident, joined):
            return False, f"S_CTX_MD states {ident!r}, which no selected attachment contains"
    for line in lines:
        best = max((lexical_support(line, t) for t in evidence_texts), default=0.0)
        if best < min_support:
            return False, f"S_CTX_MD line not supported by any attachment: {line[:80]!r}"
    return True, ""
