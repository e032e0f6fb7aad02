"""Answer quality on real documents: did the answer state the key facts, readably?

A question file (JSONL) holds `{id, type, doc, question, facts}`. `facts` is a list of groups;
each group lists alternative spellings of one key fact, and an answer states the fact when it
contains any alternative (case-folded, whitespace-collapsed, backticks ignored). Questions of
type `ooc` ask about things outside the corpus and must be refused.

An in-corpus answer is *answered well* when the response is OK, states every key fact, starts
at a sentence start (a capital letter, a digit or code) and quotes no raw markup (table pipes,
Doxygen directives, HTML comments, Markdown links, emphasis, heading or blockquote marks; inside
a code span only pipes and directives count: a quoted command's `<branch>` is the command).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import Field

from citebound.contracts.base import Contract

__all__ = [
    "AnswerJudgement",
    "AnswerQuestion",
    "judge",
    "load_questions",
    "raw_markup",
    "summarize_answers",
]


class AnswerQuestion(Contract):
    """One benchmark question and the facts a good answer contains."""

    id: str = Field(description="Stable id.")
    type: str = Field(description="definition, procedure, quantity, list, yesno, comparison, ooc.")
    question: str = Field(description="The question as a user would type it.")
    facts: list[list[str]] = Field(description="Key facts: groups of alternatives.")
    doc: str | None = Field(default=None, description="Document (relative path) holding it.")

    @property
    def in_corpus(self) -> bool:
        return self.type != "ooc"


class AnswerJudgement(Contract):
    """How one answer fared."""

    id: str = Field(description="Question id.")
    in_corpus: bool = Field(description="False for out-of-corpus questions.")
    status: str = Field(description="PublicResponse status.")
    facts_found: bool = Field(description="Every key fact is stated.")
    sentence_start: bool = Field(description="The answer starts at a sentence start.")
    markup: list[str] = Field(description="Raw markup found in the answer.")
    well: bool = Field(description="In-corpus: answered well. Out-of-corpus: refused.")


def load_questions(path: Path) -> list[AnswerQuestion]:
    """Questions of a JSONL file, in file order."""
    lines = path.read_text("utf-8").splitlines()
    return [AnswerQuestion.model_validate(json.loads(x)) for x in lines if x.strip()]


_MARKERS = re.compile(r"\s*\[[^\]\s]{1,6}\]")
_MARKUP = {
    "table pipe": re.compile(r"(^|\s)\|\s"),
    "doxygen": re.compile(r"(^|\s)[\\@](page|section|subsection|ref|anchor|brief)\b"),
    "html": re.compile(r"<!--|</?[a-zA-Z][\w-]*(\s[^>]*)?>"),
    "link": re.compile(r"\]\("),
    "emphasis": re.compile(r"\*\*|__\w"),
    "heading": re.compile(r"(^|\n)#{1,6}\s"),
    # A blockquote marker where a line or sentence starts (`x > 5` in prose is a comparison).
    "quote marker": re.compile(r"(^|\n|[.!?:]\s+)>\s"),
}


def _fold(text: str) -> str:
    return " ".join(text.replace("`", "").casefold().split())


# A code span (`` `git checkout -b <branch>` ``) quotes code as the author wrote it: an HTML-like
# placeholder, `**` or `__` inside it is the command, not markup. Table pipes and Doxygen
# directives are looked for everywhere, code spans included: a quoted row stays a failure.
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_SEEN_IN_CODE = ("table pipe", "doxygen")


def raw_markup(answer: str) -> list[str]:
    """Names of the raw-markup kinds in `answer` (citation markers are not markup; HTML,
    links, emphasis and heading marks inside a code span are code)."""
    text = _MARKERS.sub("", answer)
    prose = _CODE_SPAN.sub(" ", text)
    return [
        name
        for name, pattern in _MARKUP.items()
        if pattern.search(text if name in _SEEN_IN_CODE else prose)
    ]


def judge(question: AnswerQuestion, status: str, answer: str | None) -> AnswerJudgement:
    """Judge one response; see the module docstring for the rules."""
    text = answer or ""
    folded = _fold(_MARKERS.sub("", text))
    facts = all(any(_fold(alt) in folded for alt in group) for group in question.facts)
    first = text.lstrip()[:1]
    start = bool(first) and (first.isupper() or first.isdigit() or first == "`")
    markup = raw_markup(text) if status == "OK" else []
    if question.in_corpus:
        well = status == "OK" and facts and start and not markup
    else:
        well = status == "NO_EVIDENCE"
    return AnswerJudgement(
        id=question.id,
        in_corpus=question.in_corpus,
        status=status,
        facts_found=facts and status == "OK",
        sentence_start=start,
        markup=markup,
        well=well,
    )


def summarize_answers(judgements: Iterable[AnswerJudgement]) -> dict[str, float | int]:
    """Answered-well % and refusal % of in-corpus questions; refusal % of out-of-corpus."""
    items: Sequence[AnswerJudgement] = list(judgements)
    inn = [j for j in items if j.in_corpus]
    out = [j for j in items if not j.in_corpus]
    return {
        "n_in": len(inn),
        "n_out": len(out),
        "answered_well": sum(j.well for j in inn) / len(inn) if inn else 0.0,
        "in_refused": sum(j.status == "NO_EVIDENCE" for j in inn) / len(inn) if inn else 0.0,
        "out_refused": sum(j.well for j in out) / len(out) if out else 0.0,
    }
