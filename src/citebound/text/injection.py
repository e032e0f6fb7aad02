"""Detect instructions aimed at a language model inside document text (prompt injection).

Evidence is data, never instructions: it is never rewritten, and it stays inside the evidence
section. But an answer must not *repeat* an instruction addressed to a model as if it were a
fact. This detector marks such lines; the extractive answerer skips every sentence of a marked
line, and the validator rejects answers that echo one (INJECTION_ECHO).

The cues are imperative or address a model (a note "for the AI assistant", "ignore previous
instructions", "reveal the system prompt", "tell the user"); descriptive mentions ("the system
prompt is stored in ...") and ordinary procedure text ("Ignore the first reading", "tell the
supervisor") are not affected.

The screen matches `screen_form` of the text (text/confusables.py): look-alike letters from
other scripts ("Ignоre" with a Cyrillic `о`, a Greek `Ι`), digits for letters, accents, case
and invisible characters do not hide a cue. The patterns are written in plain English and
folded the same way when compiled.
"""

from __future__ import annotations

import re

from citebound.text.confusables import screen_char, screen_form

_CUE_SOURCE = r"""
      \b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}?\b(?:previous|prior|above|earlier|all|your|the)\b
        [^.\n]{0,20}?\b(?:instructions?|rules|prompts?|guidelines|directions)\b
    | \b(?:note|message|instructions?)\s+(?:for|to)\s+(?:the\s+|any\s+)?
        (?:ai|assistant|chatbot|llm|language\s+model|model|bot)\b
    | \b(?:reveal|print|show|repeat)\s+(?:your|the)\s+system\s+prompt\b
    | \byou\s+are\s+(?:now\s+)?(?:an?\s+)?(?:ai|assistant|chatbot|language\s+model)\b
    | \btell\s+the\s+user\b
    """
# Fold the pattern's literal words as the text is folded ("model" -> "rnodei"); escapes such
# as \b and \s are left alone.
_CUES = re.compile(
    re.sub(
        r"\\[A-Za-z]|[a-z]+",
        lambda m: m.group() if m.group().startswith("\\") else screen_form(m.group()),
        _CUE_SOURCE,
    ),
    re.IGNORECASE | re.VERBOSE,
)


def injection_cue(text: str) -> str | None:
    """The first injection cue in `text` (its original characters), or None."""
    m = _CUES.search(screen_form(text))
    if m is None:
        return None
    # Map the match in the folded text back to the characters it came from.
    pos, start = 0, 0
    for i, ch in enumerate(text):
        if pos <= m.start():
            start = i
        pos += len(screen_char(ch))
        if pos >= m.end():
            return text[start : i + 1]
    return text[start:]


def tainted_lines(text: str) -> set[int]:
    """Indexes of the lines of `text` that carry an injection cue."""
    return {i for i, line in enumerate(text.split("\n")) if _CUES.search(screen_form(line))}
