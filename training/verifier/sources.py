"""Pairs from the labelled data sets in ../shared/data, and the pairs written by hand.

Splits (fixed, by item position or a sha256 bucket, never by Python's hash):
- HaluEval: odd items are the benchmark's holdout half and are never read here. Of the even
  items, those with index % 8 == 6 are the threshold-fit split (`fit`), the rest train.
- SciFact train claims: claim_id % 5 == 0 is held out (`dev`, also the benchmark's SciFact set).
- Written pairs: sha256 bucket 0 of 10 of the id is `dev`.

Every premise is what the run-time verifier would read: `citebound.validate.premise.window`
over the evidence, with the model's own tokenizer counting tokens.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path

from citebound.text.sentences import split_sentences
from citebound.validate.premise import window
from training.common import Pair, stable_bucket

PREMISE_BUDGET = 128  # tokens of evidence the model reads; the claim gets the rest of 192


def token_counter(tokenizer_file: Path) -> Callable[[str], int]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_file))
    tok.no_truncation()  # the shipped tokenizer.json truncates and pads to 128:
    tok.no_padding()  # count the tokens themselves

    @lru_cache(maxsize=200_000)
    def count(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False).ids)

    return count


def _lines(path: Path) -> Iterator[tuple[int, dict[str, object]]]:
    with path.open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if line.strip():
                yield i, json.loads(line)


def halueval_split(index: int) -> str | None:
    """'train', 'fit' or None (the benchmark's holdout half: never used)."""
    if index % 2:
        return None
    return "fit" if index % 8 == 6 else "train"


def halueval_qa(data: Path, count: Callable[[str], int]) -> Iterator[tuple[str, Pair]]:
    for i, item in _lines(data / "halueval-dev" / "qa-dev-2000.jsonl"):
        split = halueval_split(i)
        if split is None:
            continue
        knowledge = str(item["knowledge"])
        for key, label in (("right_answer", 1), ("hallucinated_answer", 0)):
            claim = str(item[key]).strip()
            premise = window(claim, knowledge, count=count, budget=PREMISE_BUDGET)
            yield split, Pair(premise, claim, label, "halueval-qa", key.split("_")[0])


def _norm(s: str) -> str:
    return " ".join(s.lower().split()).rstrip(".")


def halueval_summaries(data: Path, count: Callable[[str], int]) -> Iterator[tuple[str, Pair]]:
    """Each sentence of the right summary is supported by the article. A sentence of the
    hallucinated summary that the right summary does not also hold is taken as unsupported
    (the data labels summaries, not sentences: a known source of noise, kept small)."""
    for i, item in _lines(data / "halueval-dev" / "summarization-dev-1000.jsonl"):
        split = halueval_split(i)
        if split is None:
            continue
        doc = str(item["document"])
        right = split_sentences(str(item["right_summary"]))
        seen = {_norm(s) for s in right}
        for s in right:
            yield split, Pair(window(s, doc, count=count, budget=PREMISE_BUDGET), s, 1,
                              "halueval-sum", "right")  # fmt: skip
        for s in split_sentences(str(item["hallucinated_summary"])):
            if _norm(s) not in seen:
                yield split, Pair(window(s, doc, count=count, budget=PREMISE_BUDGET), s, 0,
                                  "halueval-sum", "hallucinated")  # fmt: skip


def halueval_dialogue(data: Path, count: Callable[[str], int]) -> Iterator[tuple[str, Pair]]:
    """Responses over the knowledge; one item in three (chit-chat is a small share of what a
    RAG answer says)."""
    for i, item in _lines(data / "halueval-dev" / "dialogue-dev-2000.jsonl"):
        split = halueval_split(i)
        if split is None or i % 3:
            continue
        knowledge = str(item["knowledge"])
        for key, label in (("right_response", 1), ("hallucinated_response", 0)):
            claim = str(item[key]).strip()
            premise = window(claim, knowledge, count=count, budget=PREMISE_BUDGET)
            yield split, Pair(premise, claim, label, "halueval-dialogue", key.split("_")[0])


def scifact_split(claim_id: str) -> str:
    return "dev" if int(claim_id) % 5 == 0 else "train"


def scifact_claims(data: Path, count: Callable[[str], int]) -> Iterator[tuple[str, Pair]]:
    """SUPPORT: rationale sentences and the whole abstract support the claim; the abstract
    without its rationale does not. CONTRADICT: neither rationale nor abstract supports it.
    NEI: the abstract does not."""
    for _, item in _lines(data / "scifact" / "claims_train_evidence.jsonl"):
        claim = str(item["claim"]).strip()
        sentences = [str(s) for s in ast.literal_eval(str(item["abstract_sentences"]))]
        ids = sorted(int(x) for x in ast.literal_eval(str(item["evidence_sentence_ids"])))
        split = scifact_split(str(item["claim_id"]))
        label = str(item["label"])
        abstract = " ".join(sentences)
        rationale = " ".join(sentences[i] for i in ids if i < len(sentences))

        def pair(premise: str, y: int, kind: str, claim: str = claim) -> Pair:
            w = window(claim, premise, count=count, budget=PREMISE_BUDGET)
            return Pair(w, claim, y, "scifact", kind)

        if label == "SUPPORT" and rationale:
            yield split, pair(rationale, 1, "support-rationale")
            yield split, pair(abstract, 1, "support-abstract")
            rest = " ".join(s for i, s in enumerate(sentences) if i not in ids)
            if rest:
                yield split, pair(rest, 0, "support-without-rationale")
        elif label == "CONTRADICT" and rationale:
            yield split, pair(rationale, 0, "contradict-rationale")
            yield split, pair(abstract, 0, "contradict-abstract")
        elif label == "NEI":
            yield split, pair(abstract, 0, "nei-abstract")


WRITTEN = (
    "squad", "fprime_scifact", "summaries", "summaries2", "halueval_qa", "fprime_answers",
    # Chat-style pairs (run f3 never learned paraphrase: benchmarks/results/
    # verifier_training_2026-12-02.md): INSTRUCTIONS.md "Chat-style pairs".
    "chat_squad", "chat_fprime", "chat_news_science",
)  # fmt: skip


def written_pairs(folder: Path, count: Callable[[str], int]) -> Iterator[tuple[str, Pair]]:
    """Pairs written over real passages in the MiniCheck C2D/D2C manner (training/written/)."""
    for name in WRITTEN:
        path = folder / f"{name}.jsonl"
        if not path.is_file():
            continue
        for _, item in _lines(path):
            label = {"supported": 1, "unsupported": 0}.get(str(item.get("label")))
            claim, premise = str(item.get("claim", "")).strip(), str(item.get("premise", ""))
            if label is None or not claim or not premise.strip():
                continue
            split = "dev" if stable_bucket(str(item["id"]), 10) == 0 else "train"
            w = window(claim, premise, count=count, budget=PREMISE_BUDGET)
            yield split, Pair(w, claim, label, f"written-{name}", str(item.get("kind", "")))
