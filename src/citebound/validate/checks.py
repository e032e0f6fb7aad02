"""Pure text checks used by the validator: refusal look-alikes, leaks and meta commentary.
Every function is deterministic and never raises on text. New identifiers and lexical support
are `text.identifiers` and `text.overlap`: the condensed context checks with them too.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

# Phrases that mark an answer as a refusal attempt. An answer containing one of these (or a
# near copy of a policy refusal string) must be exactly the refusal, or it fails with
# INVALID_REFUSAL_FORMAT. "no evidence" alone is NOT a cue: "no evidence of corrosion" is a fact.
_REFUSAL_CUES = (
    "no_evidence",
    "does not contain sufficient information",
    "does not contain enough information",
    "does not contain this information",
    "do not contain sufficient information",
    "no supporting documentation",
    "insufficient information to answer",
    "not enough information to answer",
    "cannot answer this question",
    "can't answer this question",
    "unable to answer this question",
    "cannot be answered from",
    "i don't know",
    "i do not know",
)

# Meta commentary about the system, its inputs or its reasoning is not allowed in an answer.
_META_PHRASES = (
    "as an ai",
    "as a language model",
    "as an ai language model",
    "i am an ai",
    "i'm an ai",
    "based on the provided",
    "based on the given",
    "based on the context",
    "according to the provided",
    "according to the given",
    "according to the context",
    "the provided context",
    "the given context",
    "the context says",
    "the context states",
    "the context provided",
    "the context mentions",
    "the provided documentation",
    "the provided documents",
    "the provided sources",
    "the provided text",
    "the provided excerpts",
    "the retrieved documents",
    "the retrieved context",
    "the retrieved passages",
    "the retrieved chunks",
    "my training",
    "my knowledge",
    "i was instructed",
    "my instructions",
    "system prompt",
    "let me think",
    "<think>",
    "</think>",
)

_LEAK = re.compile(
    r"(?<![A-Za-z])(?:chunk|knowledge|faiss)[_ ]?id\b|\[[A-Za-z]?\d+\s*\|", re.IGNORECASE
)
_EVIDENCE_WORD = re.compile(r"\bevidence\b", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^\w\s]|_")


# Memoized: the evidence of a bundle is normalized once, not once per answer.
@lru_cache(maxsize=256)
def _normalize(text: str) -> str:
    text = text.casefold().replace("’", "'")
    return _SPACES.sub(" ", text).strip()


def _loose(text: str) -> str:
    return _SPACES.sub(" ", _NON_WORD.sub(" ", text.casefold())).strip()


def looks_like_refusal(text: str, refusals: tuple[str, ...]) -> bool:
    """True when `text` contains a refusal cue or a near copy of one of `refusals`."""
    norm = _normalize(text)
    if any(cue in norm for cue in _REFUSAL_CUES):
        return True
    loose = _loose(text)
    for refusal in refusals:
        target = _loose(refusal)
        if not target:
            continue
        if target in loose:
            return True
        # A reworded refusal of about the same length (casing, punctuation, a word changed).
        similar_length = 0.5 <= len(loose) / len(target) <= 2.0
        if similar_length and SequenceMatcher(None, loose, target, autojunk=False).ratio() >= 0.75:
            return True
    return False


def find_leaks(text: str, chunk_ids: tuple[str, ...]) -> list[str]:
    """Evidence metadata in the answer: `chunk_id`, `knowledge_id`, evidence headers, chunk ids."""
    found = [m.group() for m in _LEAK.finditer(text)]
    # Chunk ids are content hashes; shorter ids could collide with ordinary words.
    found += [cid for cid in chunk_ids if len(cid) >= 8 and cid in text]
    return found


def find_meta(text: str, evidence: str = "") -> list[str]:
    """Meta-commentary phrases in `text` (case-insensitive) that `evidence` does not use.

    A phrase the evidence itself uses ("the system prompt" in an LLM manual) is content.
    """
    norm = _normalize(text)
    found = [p for p in _META_PHRASES if p in norm]
    if not found:
        return []  # the common case: no need to normalize the (long) evidence
    used = _normalize(evidence)
    return [p for p in found if p not in used]


def mentions_evidence_word(sentence: str, cited_text: str) -> bool:
    """The word "evidence" in a sentence, unless its cited evidence uses that word too (P5)."""
    return bool(_EVIDENCE_WORD.search(sentence)) and not _EVIDENCE_WORD.search(cited_text)
