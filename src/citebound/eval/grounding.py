"""Grounding evaluation: does the validator flag cited hallucinations and pass right answers?

**HaluEval** (`../shared/data/halueval-dev`, three splits). Each item gives evidence (QA and
dialogue `knowledge`, summarization `document`), optional context (the QA question, the
dialogue history) and a right and a hallucinated output. The evidence becomes the single chunk
`C0` of an AnswerBundle (after the ingest sanitizer); every sentence of an output is cited
(`cited`) and the text goes through the real validator with a shipped preset. An output is
*flagged* when the validator fails it or passes it with `low_confidence` (hybridrag's action).
Flagging the hallucinated output is the positive class: `caught` = recall on hallucinated
outputs, `passed` = share of right outputs not flagged, balanced accuracy = their mean.

Items are split by position: even items are the **fit** half (the `[validation]` support knobs
were chosen on them), odd items the **holdout** half. The word-coverage baseline flags an
output when any of its words is absent from the evidence; the ratio baseline when the share of
its words found in the evidence is below a threshold fitted on the fit half.

**Extractive answers** (`extractive_failures`): the built-in extractive provider answers
questions over real text (SQuAD paragraphs, F' documentation chunks); every answer it gives
must pass the validator.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from citebound.contracts.base import sha256_hex
from citebound.contracts.enums import ValidationStatus
from citebound.errors import StageError
from citebound.eval.squad import load_squad
from citebound.policy import Policy
from citebound.testing.bundles import make_answer_bundle
from citebound.text import split_sentences
from citebound.text.sanitize import safe_normalize_v1
from citebound.validate import validate_text

_WORD = re.compile(r"\w+")
_TRAILING = re.compile(r"[\s.!?…]+$")

SPLITS = ("qa", "summarization", "dialogue")
_FILES = {
    "qa": "qa-dev-2000.jsonl",
    "summarization": "summarization-dev-1000.jsonl",
    "dialogue": "dialogue-dev-2000.jsonl",
}


@dataclass(frozen=True)
class HaluItem:
    """One HaluEval item: evidence, context (question or dialogue history), two outputs."""

    knowledge: str
    question: str
    right: str
    hallucinated: str


@dataclass(frozen=True)
class Scores:
    """Flagging the hallucinated output is the positive class."""

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def caught(self) -> float:
        """Hallucinated outputs flagged (recall)."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def passed(self) -> float:
        """Right outputs not flagged (specificity)."""
        return self.tn / (self.tn + self.fp) if self.tn + self.fp else 0.0

    @property
    def balanced_accuracy(self) -> float:
        return (self.caught + self.passed) / 2

    @property
    def accuracy(self) -> float:
        total = self.tp + self.fp + self.tn + self.fn
        return (self.tp + self.tn) / total if total else 0.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.caught


def _row_item(split: str, row: dict[str, str]) -> HaluItem:
    if split == "qa":
        return HaluItem(
            row["knowledge"], row["question"], row["right_answer"], row["hallucinated_answer"]
        )
    if split == "summarization":
        return HaluItem(row["document"], "", row["right_summary"], row["hallucinated_summary"])
    return HaluItem(
        row["knowledge"],
        row["dialogue_history"],
        row["right_response"],
        row["hallucinated_response"],
    )


def load_split(folder: Path, split: str, limit: int | None = None) -> list[HaluItem]:
    """Items of one HaluEval split (`qa`, `summarization`, `dialogue`) in file order."""
    items: list[HaluItem] = []
    with (folder / _FILES[split]).open(encoding="utf-8") as fh:
        for line in fh:
            items.append(_row_item(split, json.loads(line)))
            if limit is not None and len(items) >= limit:
                break
    return items


def load_halueval(folder: Path, limit: int | None = None) -> list[HaluItem]:
    """Items of `qa-dev-2000.jsonl` in file order (first `limit`)."""
    return load_split(folder, "qa", limit)


def fit_half(items: Sequence[HaluItem]) -> list[HaluItem]:
    """Even-numbered items: the half the support knobs were fitted on."""
    return list(items[0::2])


def holdout_half(items: Sequence[HaluItem]) -> list[HaluItem]:
    """Odd-numbered items: never used to choose a knob."""
    return list(items[1::2])


def cited(answer: str) -> str:
    """`answer` with every sentence cited `[C0]` (one trailing terminator kept per sentence).

    >>> cited("It was Mumbai. It opened in 1934!")
    'It was Mumbai [C0]. It opened in 1934 [C0].'
    """
    pieces = [_TRAILING.sub("", s) for s in split_sentences(answer.strip())]
    return " ".join(f"{p} [C0]." for p in pieces if p)


def validator_flags(item: HaluItem, answer: str, policy: Policy) -> bool:
    """True when the real validator fails `answer` or passes it with low confidence."""
    bundle = make_answer_bundle(
        [safe_normalize_v1(item.knowledge)], question=item.question, policy=policy
    )
    result = validate_text(bundle, cited(answer), policy)
    return (
        result.validation_status is ValidationStatus.FAILED
        or result.grounding_metrics.low_confidence
    )


def baseline_flags(item: HaluItem, answer: str) -> bool:
    """Word-coverage baseline: some answer word is not in the knowledge (case-insensitive)."""
    known = set(_WORD.findall(item.knowledge.casefold()))
    return any(w not in known for w in _WORD.findall(answer.casefold()))


def word_coverage(item: HaluItem, answer: str) -> float:
    """Share of the answer's words (case-insensitive, stopwords kept) found in the knowledge."""
    known = set(_WORD.findall(item.knowledge.casefold()))
    words = _WORD.findall(answer.casefold())
    return sum(w in known for w in words) / len(words) if words else 1.0


def fit_coverage_threshold(items: Sequence[HaluItem]) -> float:
    """The word-coverage ratio below which the ratio baseline flags an output: the value in
    0.50, 0.51, ..., 1.00 with the best balanced accuracy on `items` (lowest on ties)."""
    right = [word_coverage(i, i.right) for i in items]
    wrong = [word_coverage(i, i.hallucinated) for i in items]
    best, best_t = -1.0, 1.0
    for t in (x / 100 for x in range(50, 101)):
        caught = sum(c < t for c in wrong) / max(1, len(wrong))
        passed = sum(c >= t for c in right) / max(1, len(right))
        if (caught + passed) / 2 > best + 1e-12:
            best, best_t = (caught + passed) / 2, t
    return best_t


def score(items: Iterable[HaluItem], flag: Callable[[HaluItem, str], bool]) -> Scores:
    """Confusion counts of `flag(item, answer) -> bool` over right and hallucinated answers."""
    tp = fp = tn = fn = 0
    for item in items:
        if flag(item, item.hallucinated):
            tp += 1
        else:
            fn += 1
        if flag(item, item.right):
            fp += 1
        else:
            tn += 1
    return Scores(tp, fp, tn, fn)


# --- extractive answers must pass ------------------------------------------------------------


@dataclass(frozen=True)
class ExtractiveCase:
    """A question and the evidence texts the extractive provider answers it from."""

    question: str
    texts: tuple[str, ...]


def _terms(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if len(w) > 2}


def squad_cases(folder: Path, limit: int | None = None) -> Iterator[ExtractiveCase]:
    """Every SQuAD question with the 3 paragraphs of its article sharing most words with it
    (ties: paragraph order)."""
    n = 0
    for article in load_squad(folder):
        paras = [(i, _terms(p), p) for i, p in enumerate(article.paragraphs)]
        for q in article.questions:
            qt = _terms(q.question)
            top = sorted(paras, key=lambda t: (-len(qt & t[1]), t[0]))[:3]
            yield ExtractiveCase(q.question, tuple(p for _, _, p in top))
            n += 1
            if limit is not None and n >= limit:
                return


def fprime_cases(folder: Path, limit: int | None = None) -> Iterator[ExtractiveCase]:
    """One question per chunk of the F' Markdown docs (real loader and chunker): the section
    title plus the words of the chunk's middle sentence, asked over that chunk and the next."""
    # Lazy: the loaders and chunker (citebound.ingest, ~120 ms) and the extractive answerer (~45
    # ms) are imported only when a set is built from its sources.
    from citebound.ingest.chunker import chunk_document
    from citebound.ingest.loaders import load_file
    from citebound.ingest.source import SourceFile

    n = 0
    for path in sorted(folder.rglob("*.md")):
        raw = path.read_bytes()
        src = SourceFile(path, str(path.relative_to(folder)), "fprime", raw, sha256_hex(raw))
        try:
            docs = load_file(src, lambda _skip: None)
        except StageError:  # a file the loader skips has no chunks to ask about
            continue
        for doc in docs:
            chunks = chunk_document(doc)
            for i, chunk in enumerate(chunks):
                sentences = split_sentences(chunk.text)
                if not sentences:
                    continue
                middle = sentences[len(sentences) // 2]
                title = chunk.heading_path[-1] if chunk.heading_path else ""
                words = " ".join(_WORD.findall(middle)[:10])
                texts = tuple(c.text for c in chunks[i : i + 2])
                yield ExtractiveCase(f"What about {title}: {words}?", texts)
                n += 1
                if limit is not None and n >= limit:
                    return


def extractive_failures(
    cases: Iterable[ExtractiveCase], policy: Policy
) -> tuple[int, int, list[tuple[ExtractiveCase, str, str]]]:
    """(answers given, refusals, failures as (case, answer, message)) of the extractive
    provider on `cases`, validated with `policy`."""
    from citebound.llm.extractive import ExtractiveProvider

    provider = ExtractiveProvider(policy.answerer)
    answered = refused = 0
    failures: list[tuple[ExtractiveCase, str, str]] = []
    for case in cases:
        texts = [safe_normalize_v1(t) for t in case.texts if t.strip()]
        bundle = make_answer_bundle(texts, question=case.question, policy=policy)
        answer = provider.answer(bundle, policy.refusal.model_text)
        if answer == policy.refusal.model_text:
            refused += 1
            continue
        answered += 1
        r = validate_text(bundle, answer, policy)
        if r.validation_status is ValidationStatus.FAILED or r.grounding_metrics.low_confidence:
            failures.append((case, answer, r.message))
    return answered, refused, failures
