"""Retrieval packs (`retrieve_packs`) and prompt assembly (`assemble_prompt`).

See docs/assemble_prompt.md for the exact prompt format, the budget reading and the citation
styles.
"""

from __future__ import annotations

from citebound.contracts.packs import (
    AssembledPrompt,
    PackCitation,
    PackSpan,
    PromptMessages,
    RetrievalPack,
)
from citebound.packs.assemble import assemble_prompt, char_estimate
from citebound.packs.retrieve import retrieve_packs

__all__ = [
    "AssembledPrompt",
    "PackCitation",
    "PackSpan",
    "PromptMessages",
    "RetrievalPack",
    "assemble_prompt",
    "char_estimate",
    "retrieve_packs",
]
