"""Optional semantic signal: how close a candidate sentence is in meaning to the question.

The lexical score (`scoring`, provider.py) only sees shared content terms, so a sentence that
answers in other words ("Who founded the order?" / "The order was established by Francis")
never qualifies. With `[answerer] semantic = true` the question and the sentences of the
best-ranked evidence are embedded with the packaged MiniLM encoder (the one retrieval uses)
and their cosine similarity is used twice (provider.py `rank`):

* a prose sentence at or above `semantic_qualify` qualifies even when it shares too few
  question terms (`close`);
* with `semantic_weight` > 0, every embedded sentence less close than the closest one loses
  `semantic_weight` times the difference from its score (`bonus`).

With no weight (the shipped presets: the ranking term lost F' answers, docs/answers.md) the
encoder runs only when no sentence qualifies on its terms (provider.py `rank`): an answer the
lexical rules give is never changed, and most questions never embed anything.

Cost is bounded: at most `semantic_max_sentences` candidates are embedded (those sharing a
question term first, then the others, each in evidence order: the evidence is in rank order, so
these are the best-ranked chunks' sentences), in one batched call with the question, and each
vector is cached per sentence text (a repeated `choose` / `rank` on the same bundle, or the
same chunk in the next question, costs nothing).

Determinism: the encoder is run on CPU (`OnnxEmbedder`: a row's vector does not depend on
the batch it was computed in), and each similarity is rounded to `DECIMALS` places before it
is compared or added, so float32 dot products that differ in their last bits across CPUs
(SIMD width, summation order) give the same answer.

Fail closed to "off": when the encoder cannot be loaded (the `retrieval` extra is not
installed, the model file is missing) or an embedding call fails, the signal is simply absent
for that request (no similarities: the answer is the lexical one), never an error.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from citebound.policy import AnswererPolicy

from .candidates import Candidate

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from citebound.index.embedder import Embedder

    Vector = npt.NDArray[np.float32]

log = logging.getLogger(__name__)

Key = tuple[int, int, int]  # (evidence, line, sentence position) of a candidate
Loader = Callable[[], "Embedder"]

# Similarities are rounded to 3 places (MiniLM cosines differ in the 6th-7th place at most
# between CPUs for the same model build): equal after rounding = equal everywhere.
DECIMALS = 3
# Sentence vectors kept per provider (384 float32 = 1.5 KB each: ~6 MB at most). A resource
# cap, not a policy: it changes no answer, only how often a sentence is embedded again.
CACHE_SENTENCES = 4096


def default_loader() -> Embedder:
    """The packaged MiniLM encoder, the instance retrieval already loaded when it did."""
    # Lazy: index.embedder adds ~5 ms to importing citebound.llm (python -X importtime),
    # and most requests never embed (module doc).
    from citebound.index.embedder import DEFAULT_MODEL_NAME, load_embedder

    return load_embedder(DEFAULT_MODEL_NAME)


def key(c: Candidate) -> Key:
    return (c.ev, c.line, c.pos)


class SemanticSignal:
    """Question-sentence similarities for the extractive answerer (see the module doc).

    Args:
        loader: Returns the encoder, called once on first use (default: the packaged MiniLM).
            A loader that raises turns the signal off for this instance's lifetime.
    """

    def __init__(self, loader: Loader | None = None) -> None:
        self._loader = loader or default_loader
        self._embedder: Embedder | None = None
        self._unavailable = False
        self._cache: OrderedDict[tuple[str, str], Vector] = OrderedDict()
        self._lock = threading.Lock()

    def similarities(
        self, question: str, cands: Sequence[Candidate], policy: AnswererPolicy
    ) -> dict[Key, float]:
        """Rounded cosine similarity of each embedded candidate to `question` ({} when off,
        unavailable or failing). Candidates are taken in evidence order (= rank order)."""
        if not policy.semantic or policy.semantic_max_sentences <= 0 or not question.strip():
            return {}
        picked = _budget(cands, policy.semantic_max_sentences)
        if not picked:
            return {}
        embedder = self._encoder()
        if embedder is None:
            return {}
        try:
            vectors = self._vectors(embedder, [question, *(c.text for c in picked)])
        except Exception as err:  # an optional signal never fails a request
            log.warning("semantic answer signal off for this request: %s", err)
            return {}
        q = vectors[question]
        return {key(c): round(float(q @ vectors[c.text]), DECIMALS) for c in picked}

    def _encoder(self) -> Embedder | None:
        with self._lock:
            if self._embedder is None and not self._unavailable:
                try:
                    self._embedder = self._loader()
                except Exception as err:  # e.g. the retrieval extra is not installed
                    log.info("semantic answer signal off: encoder unavailable: %s", err)
                    self._unavailable = True
            return self._embedder

    def _vectors(self, embedder: Embedder, texts: Sequence[str]) -> dict[str, Vector]:
        """Vectors of `texts`: cached ones, the rest embedded in one batched call (sorted, so
        the call is the same whatever order the texts came in)."""
        name = embedder.name
        out: dict[str, Vector] = {}
        with self._lock:
            for t in texts:
                held = self._cache.get((name, t))
                if held is not None:
                    self._cache.move_to_end((name, t))
                    out[t] = held
        missing = sorted({t for t in texts if t not in out})
        if missing:
            fresh = embedder.embed(missing)
            with self._lock:
                for t, v in zip(missing, fresh, strict=True):
                    out[t] = v
                    self._cache[(name, t)] = v
                while len(self._cache) > CACHE_SENTENCES:
                    self._cache.popitem(last=False)
        return out


def _budget(cands: Sequence[Candidate], limit: int) -> list[Candidate]:
    """The candidates to embed: those sharing a question term first (every sentence that can
    qualify lexically is among them, so the bonus does not favour one such sentence over
    another for being embedded), then the others (paraphrases), each in evidence order, at
    most `limit`. Code blocks are never weighed."""
    sentences = [c for c in cands if c.kind != "code"]
    ordered = [c for c in sentences if c.shared] + [c for c in sentences if not c.shared]
    return ordered[:limit]


# A sentence's closing mark, before any closing quote or bracket.
_STATEMENT = re.compile(r"[.!?][\"'’”)\]]*\s*$")


def close(sims: dict[Key, float], c: Candidate, policy: AnswererPolicy) -> bool:
    """Whether `c` qualifies on meaning alone (similarity at least `semantic_qualify`).

    Prose only: a list item or table row is a label or a value ("Disable Kubernetes" under
    "Configure Docker Desktop:"); a few words naming what the question names embed close to
    it without answering it (F' w03 "How do I configure a Kubernetes ingress controller?").
    A statement only: a line without a sentence's closing mark is a title or a label ("CX-9
    Compressor Quick Reference" embeds at 0.75 to "Which company supplies the compressor?").
    """
    sim = sims.get(key(c))
    return (
        c.kind == "prose"
        and _STATEMENT.search(c.text) is not None
        and sim is not None
        and sim >= policy.semantic_qualify
    )


def bonus(sims: dict[Key, float], c: Candidate, policy: AnswererPolicy) -> float:
    """`semantic_weight * (similarity - the closest sentence's similarity)` for an embedded
    candidate, 0 for the others (and the closest): never positive.

    Relative, not absolute: adding `weight * similarity` to every score would compress their
    ratios and so loosen every rule that compares a score with a share of the best one
    (`rank_tolerance`, `relative_floor`, `tie_share`): a list intro of the first evidence
    then led over the definition (F' f22 "What does the FATAL severity indicate?").
    """
    sim = sims.get(key(c))
    if sim is None:
        return 0.0
    return round(policy.semantic_weight * (sim - max(sims.values())), 2 * DECIMALS)
