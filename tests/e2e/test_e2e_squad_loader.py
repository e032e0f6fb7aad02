"""SQuAD loading, paragraph JSONL and gold matching on a tiny synthetic file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citebound.errors import ConfigError
from citebound.eval.squad import (
    contains_gold,
    load_squad,
    paragraph_id,
    questions_of,
    write_paragraphs_jsonl,
)


def test_load_numbers_articles_and_dedupes_answers(tiny_squad: Path) -> None:
    arts = load_squad(tiny_squad)
    assert [(a.number, a.title, len(a.paragraphs)) for a in arts] == [
        (1, "Pumps", 2),
        (2, "Volcanoes", 1),
    ]
    q1 = arts[0].questions[0]
    assert (q1.qid, q1.article, q1.answers, q1.is_impossible) == ("q1", 1, ["45 Nm"], False)
    assert arts[0].questions[1].is_impossible and arts[0].questions[1].answers == []


def test_questions_of_filters_articles_and_answerability(tiny_squad: Path) -> None:
    arts = load_squad(tiny_squad)
    assert [q.qid for q in questions_of(arts, [1, 2])] == ["q1", "q2", "q3"]
    assert [q.qid for q in questions_of(arts, [1], answerable=True)] == ["q1"]
    assert [q.qid for q in questions_of(arts, [1], answerable=False)] == ["q2"]
    assert questions_of(arts, [9]) == []


def test_paragraph_jsonl_has_one_document_per_paragraph(tiny_squad: Path, tmp_path: Path) -> None:
    arts = load_squad(tiny_squad)
    path = tmp_path / "out" / "squad.jsonl"
    assert write_paragraphs_jsonl(arts, {1}, path) == 2
    recs = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert (
        [r["id"] for r in recs]
        == [paragraph_id(1, 0), paragraph_id(1, 1)]
        == [
            "a01p000",
            "a01p001",
        ]
    )
    assert recs[0]["title"] == "Pumps" and "45 Nm" in recs[0]["text"]


def test_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "dev-v2.0-part1.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot read SQuAD file"):
        load_squad(tmp_path)
    with pytest.raises(ConfigError, match="cannot read SQuAD file"):
        load_squad(tmp_path / "missing")


@pytest.mark.parametrize(
    ("answers", "texts", "expected"),
    [
        (["45 Nm"], ["tightened to 45 nm."], True),  # case-folded
        (["the  Normans"], ["The\tNormans came"], True),  # whitespace runs collapsed
        (["Norman"], ["the Normand"], True),  # substring, as the data set defines spans
        (["Normans"], ["the Norman"], False),
        (["", "x"], ["abc"], False),  # empty gold never matches
        ([], ["anything"], False),
        (["45 Nm"], [], False),
        (["Sicily", "Italy"], ["in Italy", "elsewhere"], True),
    ],
)
def test_contains_gold(answers: list[str], texts: list[str], expected: bool) -> None:
    assert contains_gold(answers, texts) is expected
