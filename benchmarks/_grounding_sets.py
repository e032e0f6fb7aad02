"""Answer sets of the grounding benchmark beyond HaluEval, as (evidence texts, question,
answer, expect_pass) rows. Imports only what every validator version has, so the same rows can
be measured with the word rules of an older checkout (benchmarks/results/grounding_r5v6.json).

- chat: benchmarks/data/chat_answers.jsonl, cited answers in the style a chat LLM writes over
  the sample corpus and F´ UsersGuide (never trained on), half with one subtle error;
- scifact: held-out SciFact train claims (claim_id % 5 == 0, never trained on), the claim as a
  one-sentence answer citing the abstract: SUPPORT passes, CONTRADICT and NEI fail.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path

Row = tuple[list[str], str, str, bool]
HERE = Path(__file__).resolve().parent


def chat_rows(path: Path = HERE / "data" / "chat_answers.jsonl") -> Iterator[Row]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                item = json.loads(line)
                yield item["chunks"], item["question"], item["answer"], item["expect"] == "pass"


def scifact_rows(data: Path) -> Iterator[Row]:
    with (data / "scifact" / "claims_train_evidence.jsonl").open(encoding="utf-8") as f:
        for line in f:
            item = json.loads(line)
            if int(item["claim_id"]) % 5:
                continue
            sentences = item["abstract_sentences"]
            if isinstance(sentences, str):  # some copies keep the list as its Python repr
                sentences = ast.literal_eval(sentences)
            abstract = " ".join(sentences)
            claim = item["claim"].strip().rstrip(".")
            yield [abstract], "", f"{claim} [C0].", item["label"] == "SUPPORT"


def measure(rows: list[Row], passes) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """caught (expected failures failed), passed (expected passes passed), balanced."""
    neg = [r for r in rows if not r[3]]
    pos = [r for r in rows if r[3]]
    caught = sum(not passes(r) for r in neg) / max(1, len(neg))
    passed = sum(passes(r) for r in pos) / max(1, len(pos))
    return {"caught": round(caught, 4), "passed": round(passed, 4),
            "balanced": round((caught + passed) / 2, 4), "n": len(rows)}  # fmt: skip
