"""Query decomposition into at most N0 pieces (docs/retrieval.md).

The question is split into sentences (`citebound.text.split_sentences`). With at most N0
sentences, each sentence is a piece; with more, consecutive sentences are grouped into N0 pieces
of near-equal sentence counts (earlier pieces take the remainder), so no text is dropped and
order is kept. A one-sentence question is one piece, and retrieval then equals plain search.
"""

from __future__ import annotations

from citebound.text import normalize_question, split_sentences


def query_pieces(question: str, n0: int) -> list[str]:
    """Up to `n0` pieces covering the whole normalized question, in order."""
    text = normalize_question(question)
    if not text:
        return []
    sentences = [s for s in split_sentences(text) if s.strip()] or [text]
    if len(sentences) <= n0:
        return sentences
    size, extra = divmod(len(sentences), n0)
    pieces, start = [], 0
    for i in range(n0):
        end = start + size + (1 if i < extra else 0)
        pieces.append(" ".join(sentences[start:end]))
        start = end
    return pieces
