"""SQuAD 2.0 for end-to-end refusal and evidence checks (`../shared/data/squad2-dev`).

The shared file is the CS224N half split of the dev set: articles in file order, numbered from
1. One *document* per paragraph (so a hit names the paragraph), written as JSONL for the normal
ingest path::

    >>> arts = load_squad(dataset_dir("squad2-dev"))      # doctest: +SKIP
    >>> write_paragraphs_jsonl(arts, {1, 2, 3, 4}, Path("squad.jsonl"))  # doctest: +SKIP
    177

Gold matching (`contains_gold`) compares after the evidence sanitizer, case-folded and with
whitespace runs collapsed, so "the Normans" matches "The  Normans" but not "Norman".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import Field

from citebound.contracts.base import Contract
from citebound.errors import ConfigError
from citebound.text.sanitize import safe_normalize_v1

SQUAD_FILE = "dev-v2.0-part1.json"
_WS = re.compile(r"\s+")


class SquadQuestion(Contract):
    """One SQuAD question with its article number and gold answers."""

    qid: str = Field(description="SQuAD question id.")
    article: int = Field(ge=1, description="1-based article number in file order.")
    question: str = Field(description="Question text as in the data set.")
    answers: list[str] = Field(description="Gold answer texts (empty when is_impossible).")
    is_impossible: bool = Field(description="SQuAD 2.0 unanswerable question.")


class SquadArticle(Contract):
    """One article: its paragraphs (one document each) and its questions."""

    number: int = Field(ge=1, description="1-based article number in file order.")
    title: str = Field(description="Wikipedia title.")
    paragraphs: list[str] = Field(description="Paragraph texts in order.")
    questions: list[SquadQuestion] = Field(description="Questions in file order.")


def load_squad(folder: Path, filename: str = SQUAD_FILE) -> list[SquadArticle]:
    """Read the SQuAD 2.0 JSON in `folder`; ConfigError names the file when it is unusable."""
    path = Path(folder) / filename
    try:
        data = json.loads(path.read_text("utf-8"))["data"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ConfigError(f"cannot read SQuAD file {path}: {err}", source=str(path)) from None
    articles: list[SquadArticle] = []
    for number, art in enumerate(data, start=1):
        questions = [
            SquadQuestion(
                qid=str(qa["id"]),
                article=number,
                question=str(qa["question"]),
                # Unique answers in first-seen order (SQuAD repeats one answer per annotator).
                answers=list(dict.fromkeys(str(a["text"]) for a in qa.get("answers", []))),
                is_impossible=bool(qa.get("is_impossible", False)),
            )
            for para in art["paragraphs"]
            for qa in para["qas"]
        ]
        articles.append(
            SquadArticle(
                number=number,
                title=str(art["title"]),
                paragraphs=[str(p["context"]) for p in art["paragraphs"]],
                questions=questions,
            )
        )
    return articles


def paragraph_id(article: int, paragraph: int) -> str:
    """Document id of a paragraph, e.g. `a01p007` (sorts in file order)."""
    return f"a{article:02d}p{paragraph:03d}"


def write_paragraphs_jsonl(
    articles: Sequence[SquadArticle], numbers: Iterable[int], path: Path
) -> int:
    """Write the paragraphs of the articles in `numbers` as JSONL (`id`, `title`, `text`).

    Returns:
        The number of documents written.
    """
    wanted = set(numbers)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for art in articles:
            if art.number not in wanted:
                continue
            for i, text in enumerate(art.paragraphs):
                rec = {"id": paragraph_id(art.number, i), "title": art.title, "text": text}
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
    return n


def questions_of(
    articles: Sequence[SquadArticle], numbers: Iterable[int], *, answerable: bool | None = None
) -> list[SquadQuestion]:
    """Questions of the articles in `numbers`, in file order; `answerable` filters when set."""
    wanted = set(numbers)
    return [
        q
        for art in articles
        if art.number in wanted
        for q in art.questions
        if answerable is None or answerable != q.is_impossible
    ]


def _norm(text: str) -> str:
    return _WS.sub(" ", safe_normalize_v1(text)).casefold()


def contains_gold(answers: Sequence[str], texts: Iterable[str]) -> bool:
    """True when any non-empty gold answer occurs in any of `texts` (see module docstring)."""
    golds = [g for g in (_norm(a) for a in answers) if g]
    if not golds:
        return False
    return any(g in t for t in (_norm(x) for x in texts) for g in golds)
