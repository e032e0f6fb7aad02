"""(question, passage, states-the-answer) pairs for the reader, from ../shared/data only.

A passage is one candidate sentence with its heading path (`passage()`), the unit the
extractive answerer quotes. Positives are the sentences that state the answer; negatives
are the other sentences a retriever would put in front of the reader (same paragraph, the
best-matching sentences of other paragraphs, sentences next to an unanswerable question).

Splits (fixed, by position or a sha256 bucket, never by Python's hash):
- SQuAD 2.0 dev: articles 1, 2, 5, 6 (the benchmark's tune articles) train, 3, 4, 7, 8 (its
  held-out ones) dev, so the README's held-out SQuAD figures stay held out. `all_squad`
  trains on all eight for a final model, as the model card then says.
- HaluEval QA: even items only (odd ones are the grounding benchmark's holdout half); items
  with index % 8 == 6 dev.
- SciFact train claims: claim_id % 5 == 0 dev (as for the verifier).
- F´ question sets in benchmarks/data: `HELD_OUT` sets are never read; of the others, sha256
  bucket 0 of 5 of the question id is dev.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

from citebound.text.sentences import split_sentences
from training.common import Pair, stable_bucket

SQUAD_DEV_ARTICLES = frozenset({2, 3, 6, 7})  # 0-based: articles 3, 4, 7, 8
HELD_OUT = ("fprime_questions.jsonl", "fprime_questions_dev8.jsonl")
OTHER_PARAGRAPH_NEGATIVES = 2  # best-matching sentences of other paragraphs per question
UNANSWERABLE_NEGATIVES = 3  # best-matching sentences of an unanswerable question's paragraph

_WORD = re.compile(r"[a-z0-9]+")


def passage(heading_path: list[str], sentence: str) -> str:
    """What the reader reads beside the question: `heading > path: sentence`."""
    head = " > ".join(h.strip() for h in heading_path if h.strip())
    return f"{head}: {sentence.strip()}" if head else sentence.strip()


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 3}


def _best(question: str, sentences: list[str], k: int) -> list[str]:
    """The k sentences sharing most words with the question; ties keep document order."""
    q = words(question)
    ranked = sorted(enumerate(sentences), key=lambda t: (-len(q & words(t[1])), t[0]))
    return [s for _, s in ranked[:k]]


def _spans(context: str) -> list[tuple[int, int, str]]:
    """(start, end, sentence) of each sentence of a SQuAD paragraph, located in the text."""
    out, pos = [], 0
    for s in split_sentences(context):
        start = context.find(s, pos)
        if start < 0:  # the splitter normalized spacing: locate by its first words
            start = context.find(s[:20], pos)
        start = max(start, pos)
        out.append((start, start + len(s), s))
        pos = start + len(s)
    return out


def squad(data: Path, *, all_train: bool = False) -> Iterator[tuple[str, Pair]]:
    doc = json.loads((data / "squad2-dev" / "dev-v2.0-part1.json").read_text("utf-8"))
    for a, article in enumerate(doc["data"]):
        split = "dev" if a in SQUAD_DEV_ARTICLES and not all_train else "train"
        title = str(article["title"]).replace("_", " ")
        paragraphs = [_spans(str(p["context"])) for p in article["paragraphs"]]
        for p, para in enumerate(article["paragraphs"]):
            spans = paragraphs[p]
            others = [s for q, ss in enumerate(paragraphs) if q != p for _, _, s in ss]
            for qa in para["qas"]:
                question = str(qa["question"]).strip()
                if qa.get("is_impossible"):
                    for s in _best(question, [s for _, _, s in spans], UNANSWERABLE_NEGATIVES):
                        yield split, Pair(passage([title], s), question, 0, "squad", "unanswerable")
                    continue
                starts = {int(x["answer_start"]) for x in qa["answers"]}
                for start, end, s in spans:
                    gold = any(start <= x < end for x in starts)
                    kind = "gold" if gold else "same-paragraph"
                    yield split, Pair(passage([title], s), question, int(gold), "squad", kind)
                for s in _best(question, others, OTHER_PARAGRAPH_NEGATIVES):
                    yield split, Pair(passage([title], s), question, 0, "squad", "other-paragraph")


def halueval_qa(data: Path) -> Iterator[tuple[str, Pair]]:
    """The knowledge's sentence that holds the right answer is positive, the others negative;
    items whose answer is in no single sentence are left out."""
    with (data / "halueval-dev" / "qa-dev-2000.jsonl").open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i % 2 or not line.strip():
                continue
            item = json.loads(line)
            split = "dev" if i % 8 == 6 else "train"
            question, answer = str(item["question"]).strip(), str(item["right_answer"]).strip()
            sentences = split_sentences(str(item["knowledge"]))
            gold = [answer.lower() in s.lower() for s in sentences]
            if not any(gold) or all(gold):
                continue
            for s, g in zip(sentences, gold, strict=True):
                yield split, Pair(passage([], s), question, int(g), "halueval-qa", str(g).lower())


def scifact(data: Path) -> Iterator[tuple[str, Pair]]:
    """A claim stands for the question: its rationale sentences state the answer (supporting or
    contradicting it), the other sentences of the abstract do not. NEI claims are left out."""
    with (data / "scifact" / "claims_train_evidence.jsonl").open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            item = json.loads(line)
            ids = {int(x) for x in ast.literal_eval(str(item["evidence_sentence_ids"]))}
            if str(item["label"]) == "NEI" or not ids:
                continue
            split = "dev" if int(item["claim_id"]) % 5 == 0 else "train"
            claim = str(item["claim"]).strip()
            sentences = [str(s) for s in ast.literal_eval(str(item["abstract_sentences"]))]
            for j, s in enumerate(sentences):
                kind = "rationale" if j in ids else "other"
                yield split, Pair(passage([], s), claim, int(j in ids), "scifact", kind)


def _markdown_sentences(path: Path) -> list[tuple[list[str], str]]:
    """(heading path, sentence) of a Markdown file; code fences and tables left out."""
    out: list[tuple[list[str], str]] = []
    headings: list[str] = []
    fenced = False
    block: list[str] = []

    def flush() -> None:
        if block:
            out.extend((list(headings), s) for s in split_sentences(" ".join(block)))
            block.clear()

    for line in path.read_text("utf-8", errors="replace").splitlines():
        if line.lstrip().startswith("```"):
            flush()
            fenced = not fenced
            continue
        heading = re.match(r"(#{1,6})\s+(.*)", line)
        if fenced or line.lstrip().startswith("|"):
            continue
        if heading:
            flush()
            level = len(heading.group(1))
            headings = [*headings[: level - 1], heading.group(2).strip()]
        elif line.strip():
            block.append(line.strip())
        else:
            flush()
    flush()
    return out


def fprime(data: Path, questions: Path) -> Iterator[tuple[str, Pair]]:
    """Questions written by hand over the F´ docs, with their key facts (groups of
    alternatives): a sentence of the question's document holding one alternative of every
    group is positive; the document's best-matching other sentences are negatives. Questions
    whose facts no single sentence holds are left out."""
    for path in sorted(questions.glob("fprime_questions*.jsonl")):
        if path.name in HELD_OUT:
            continue
        for line in path.read_text("utf-8").splitlines():
            item = json.loads(line) if line.strip() else {}
            doc, facts = item.get("doc"), item.get("facts")
            file = data / "fprime-docs" / str(doc)
            if not doc or not facts or not file.is_file():
                continue
            split = "dev" if stable_bucket(str(item["id"]), 5) == 0 else "train"
            question = str(item["question"]).strip()
            sentences = _markdown_sentences(file)

            def holds(s: str, facts: list[list[str]] = facts) -> bool:
                return all(any(a.lower() in s.lower() for a in group) for group in facts)

            gold = [(h, s) for h, s in sentences if holds(s)]
            if not gold:
                continue
            rest = [s for _, s in sentences if not holds(s)]
            for h, s in gold:
                yield split, Pair(passage(h, s), question, 1, "fprime", "gold")
            head = {s: h for h, s in sentences}
            for s in _best(question, rest, 4):
                yield split, Pair(passage(head[s], s), question, 0, "fprime", "same-document")
