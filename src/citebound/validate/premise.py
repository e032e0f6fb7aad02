"""The evidence window the verifier model reads for one claim.

A cross-encoder reads a bounded number of tokens, while cited evidence can be a long article
(a summary sentence citing the whole of it). The window is built the same way at training time
(`training/verifier/`) and at run time, so the model is judged on the premises it learned from:

1. Evidence that fits the token budget is the window, whole.
2. Otherwise its sentences are ranked by the content terms they share with the claim (ties: the
   earlier sentence), and those sharing any term are taken best first while they fit the
   budget. A claim that fuses two
   far-apart sentences gets both (what a fixed sliding window would miss).
3. The remaining budget holds the sentence before each chosen one (in rank order), since a
   chosen sentence often names its subject only by a pronoun.
4. The chosen sentences are joined in document order.

The best sentence is always in the window, even when it alone exceeds the budget (the model's
tokenizer truncates it). Pure and deterministic: the same claim and evidence give the same
window on every machine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from citebound.text.sentences import split_sentences
from citebound.text.terms import terms


def _rank(claim: str, sentences: Sequence[str]) -> list[tuple[int, int]]:
    """(index, terms shared) of every sentence, most claim terms shared first; ties by
    position (earlier first)."""
    wanted = terms(claim)
    shared = [len(wanted & terms(s)) for s in sentences]
    return sorted(((i, n) for i, n in enumerate(shared)), key=lambda x: (-x[1], x[0]))


def window(
    claim: str,
    evidence: str,
    *,
    count: Callable[[str], int],
    budget: int,
) -> str:
    """The part of `evidence` the verifier reads for `claim` (at most `budget` tokens,
    counted by `count`, unless the single best sentence is longer)."""
    evidence = " ".join(evidence.split())
    if count(evidence) <= budget:
        return evidence
    sentences = [" ".join(s.split()) for s in split_sentences(evidence)]
    if len(sentences) <= 1:
        return evidence
    sizes = [count(s) + 1 for s in sentences]
    ranked = _rank(claim, sentences)
    order = [i for i, _ in ranked]
    chosen: set[int] = {order[0]}
    used = sizes[order[0]]
    for i, shared in ranked[1:]:
        if shared and used + sizes[i] <= budget:
            chosen.add(i)
            used += sizes[i]
    for i in order:  # context: the sentence before each chosen one, best chosen first
        j = i - 1
        if i in chosen and j >= 0 and j not in chosen and used + sizes[j] <= budget:
            chosen.add(j)
            used += sizes[j]
    return " ".join(sentences[i] for i in sorted(chosen))
