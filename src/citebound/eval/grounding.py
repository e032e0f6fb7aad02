"""Grounding check evaluation on HaluEval QA: flag the hallucinated answer, pass the right one.

Each item gives `knowledge`, `question`, `right_answer`, `hallucinated_answer`. The knowledge
becomes the single evidence chunk `C0` of an AnswerBundle; each answer is cited as
`<answer> [C0].` and run through the real validator with a policy whose support floor is `tau`
(`low_support_action="fail"`, new numbers/dates/codes fail). An answer is *flagged* when the
validator fails it. The trivial baseline flags an answer when any of its words is absent from
the knowledge.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from citebound.contracts.enums import ValidationStatus
from citebound.policy import Policy, load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.text.sanitize import safe_normalize_v1
from citebound.validate import validate_text

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class HaluItem:
    knowledge: str
    question: str
    right: str
    hallucinated: str


@dataclass(frozen=True)
class Scores:
    """Flagging the hallucinated answer is the positive class."""

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def accuracy(self) -> float:
        total = self.tp + self.fp + self.tn + self.fn
        return (self.tp + self.tn) / total if total else 0.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0


def load_halueval(folder: Path, limit: int | None = None) -> list[HaluItem]:
    """Items of `qa-dev-2000.jsonl` in file order (first `limit`)."""
    items: list[HaluItem] = []
    with (folder / "qa-dev-2000.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            items.append(
                HaluItem(
                    row["knowledge"],
                    row["question"],
                    row["right_answer"],
                    row["hallucinated_answer"],
                )
            )
            if limit is not None and len(items) >= limit:
                break
    return items


def support_policy(tau: float) -> Policy:
    """strict-v1 with a sentence support floor `tau` that fails the answer."""
    base = load_policy("strict-v1")
    vp = base.validation.model_copy(
        update={"min_sentence_support": tau, "low_support_action": "fail"}
    )
    return base.model_copy(update={"validation": vp})


def cited(answer: str) -> str:
    """The answer as a one-sentence cited answer (terminal punctuation normalized)."""
    return answer.strip().rstrip(".!?").strip() + " [C0]."


def validator_flags(item: HaluItem, answer: str, policy: Policy) -> bool:
    """True when the real validator fails `answer` against the item's knowledge."""
    bundle = make_answer_bundle(
        [safe_normalize_v1(item.knowledge)], question=item.question, policy=policy
    )
    result = validate_text(bundle, cited(answer), policy)
    return result.validation_status is ValidationStatus.FAILED


def baseline_flags(item: HaluItem, answer: str) -> bool:
    """Trivial baseline: some answer word is not in the knowledge (case-insensitive)."""
    known = set(_WORD.findall(item.knowledge.casefold()))
    return any(w not in known for w in _WORD.findall(answer.casefold()))


def score(items: list[HaluItem], flag: Callable[[HaluItem, str], bool]) -> Scores:
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
