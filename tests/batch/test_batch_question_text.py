"""Batch question tables refuse text no store can keep (U+0000, lone surrogates), naming the
row, before any work; a clean table of the same shape reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from citebound.batch.tables import read_questions
from citebound.errors import ConfigError


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('{"_id": "q2", "text": "What torque\\u0000?"}', "U+0000"),
        ('{"_id": "q2", "text": "What torque\\ud800?"}', "not valid Unicode"),
        ('{"_id": "q\\udcff", "text": "What torque?"}', "not valid Unicode"),
    ],
)
def test_unstorable_question_text_is_refused_naming_the_row(
    tmp_path: Path, line: str, said: str
) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"_id": "q1", "text": "What torque?"}\n' + line + "\n")
    with pytest.raises(ConfigError) as err:
        read_questions(path)
    assert "row 2" in str(err.value) and said in str(err.value)


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"_id": "q1", "text": "What torque\xff?"}\n')
    with pytest.raises(ConfigError, match="not UTF-8"):
        read_questions(path)


def test_control_a_clean_table_reads(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"_id": "q1", "text": "What torque?"}\n{"_id": "q2", "text": "Why?"}\n')
    assert [rid for rid, _ in read_questions(path)] == ["q1", "q2"]
