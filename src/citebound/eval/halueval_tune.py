"""A refusal tune set that is not SQuAD: HaluEval QA dev (../shared/data/halueval-dev).

`benchmarks/tune_answerer.py capture --halueval` (its `_halueval_tune.build`) indexes the
knowledge passages of one half of `qa-dev-2000.jsonl` (HotpotQA items: two Wikipedia
paragraphs, a question, its right answer) as documents, one per item, as
`benchmarks/_e2e_squad.build` indexes SQuAD paragraphs. That half's questions are asked as
answerable; the other half's as out of corpus. `--swap` exchanges the halves, a second run on
the same 2,000 items. Nothing here reads SQuAD, so the gate can be fitted on it without
touching the held-out articles 3-4 / 7-8.

Halves: the even-numbered items (0-based file order) are the FIT half
`benchmarks/fit_support.py` uses, the odd ones the other. An out-of-corpus question may still be
answered by an indexed passage: HotpotQA reuses popular entities ("Which author is known for her
"Anne of Green Gables" books: ...?" is asked in one half, the novel's paragraph is indexed from
the other). Checked on the open-gate capture: 26 of the 996 odd-half questions were answered
with their right answer, most of them truly from an indexed passage (MedStar, Operation
Paperclip, Ezhou, ...), the rest by a generic word ("director", "rock"). `in_corpus_answer`
flags such a question mechanically: an indexed passage holds its right answer (3+ characters,
not yes / no) and at least `DUP_SHARE` of its key terms (59 of the odd half's questions, 62 of
the even half's; 21 of the 26 above, the 5 it misses are generic ones). A flagged question is
left out (kind "dup"): never counted as answerable or as out of corpus.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from citebound.text.terms import key_terms

FILE = "qa-dev-2000.jsonl"
COLLECTION = "halueval"
# Two Wikipedia paragraphs are glued without a space in the data ("...19th century.First for
# Women is ..."): a stop between a lower-case letter (or a closing bracket / quote) and a
# capital starts the second paragraph. Only a space is missing; no word changes.
_GLUE = re.compile(r"(?<=[a-z0-9)\"'])\.(?=[A-Z][a-z])")
_YES_NO = frozenset({"yes", "no"})
DUP_SHARE = 1 / 3
DUP_MIN_CHARS = 3


def load(folder: Path) -> list[dict[str, str]]:
    lines = (folder / FILE).read_text("utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def paragraphs(knowledge: str) -> str:
    """The knowledge as a reader sees it: its glued paragraphs split by a blank line."""
    return _GLUE.sub(".\n\n", knowledge.strip())


def in_corpus_answer(item: dict[str, str], passages: list[frozenset[str]], raw: list[str]) -> bool:
    """An indexed passage (`raw` text, `passages` its terms) holds the item's right answer and
    a third of its question's key terms (see the module docstring): not out of corpus."""
    answer = item["right_answer"].strip().lower()
    asked = key_terms(item["question"])
    if len(answer) < DUP_MIN_CHARS or answer in _YES_NO or not asked:
        return False
    return any(
        answer in text.lower() and len(asked & said) >= DUP_SHARE * len(asked)
        for said, text in zip(passages, raw, strict=True)
    )
