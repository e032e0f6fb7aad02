"""Table rows are quoted whole and never raw (blind F´ set 8: p01, p03, q04/p07 rows).

A rendered row ("NAME: cell; cell") may hold a stop the validator's splitter cuts at: a month
abbreviation ("Jul. 2020", "Sep. 21, 2014") or a cell of several sentences. The splitter is
frozen, so the row is quoted whole with a citation on each piece it is cut into, the row's
name staying with it; a row without a leading pipe whose first cell is a code span or a link
is still a row (rendered, never quoted with its pipes).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from llm_helpers import check_answer, make_bundle

from citebound.contracts import CitationStyle
from citebound.llm import ExtractiveProvider
from citebound.llm.extractive import marker_pattern
from citebound.llm.extractive.joining import join
from citebound.policy import load_policy
from citebound.testing.bundles import make_llm_result
from citebound.text import split_sentences
from citebound.text.markup import is_table_row, render_units, starts_block
from citebound.validate import validate_answer

POLICY = load_policy("strict-v1")
REFUSAL = POLICY.refusal.model_text

PROJECTS = "\n".join(
    [
        "| Project | Type | Organization | OS | Processor | Launch | End | Notes |",
        "|---|---|---|---|---|---|---|---|",
        "| [Mars Helicopter (Ingenuity)](https://mars.nasa.gov/) | Airborne | NASA's JPL "
        "| Linux | Qualcomm's Snapdragon 801 | Jul. 2020 | | |",
        "| [ISS-RapidScat](https://www.jpl.nasa.gov/) | Instrument | [NASA's JPL]"
        "(https://www.jpl.nasa.gov/) |  |  |  Sep. 21, 2014 | Nov. 18, 2018 | Target: Earth |",
    ]
)

SETTINGS = "\n".join(
    [
        "| Macro | Definition | Default | Valid Values |",
        "|---|---|---|---|",
        "| ActiveRateGroupOutputPorts | Number of outputs from active rate group. Limits "
        "number of components attached to a single rate group | 10 | Positive integer |",
        "| HealthPingPorts | Number of health ping ports. Limits the number of components "
        "pinged by health | 25 | Positive integer |",
    ]
)

PORTS = "\n".join(
    [
        "The Svc::PolyDb component uses the following port types:",
        "",
        "Port Data Type | Name | Direction | Kind | Usage",
        "-------------- | ---- | --------- | ---- | -----",
        "[`Svc::Poly`](../../PolyIf/docs/sdd.md) | getValue | Input | Guarded | Read values",
        "`Svc::Poly` | setValue | Input | Guarded | Write `Fw::PolyType` values",
    ]
)


def _answer(evidence: str, question: str) -> str:
    bundle = make_bundle([evidence], question)
    text = ExtractiveProvider(POLICY.answerer).answer(bundle, REFUSAL)
    assert check_answer(text, bundle, REFUSAL) == []
    verdict = validate_answer(bundle, make_llm_result(bundle, text), POLICY)
    assert verdict.validation_status.value == "PASSED", verdict
    return text


def test_a_row_cut_at_a_month_abbreviation_is_quoted_whole_with_each_piece_cited() -> None:
    text = _answer(PROJECTS, "When was ISS-RapidScat launched?")
    assert text.startswith("ISS-RapidScat: Instrument; NASA's JPL; Sep. [C0] 21, 2014")
    assert "Nov. [C0] 18, 2018" in text
    text = _answer(PROJECTS, "Which processor does the Mars Helicopter (Ingenuity) use?")
    assert "Snapdragon 801; Jul. [C0] 2020 [C0]" in text


def test_a_row_with_two_sentences_in_a_cell_keeps_its_name() -> None:
    text = _answer(
        SETTINGS, "How many components can I attach to one active rate group, and which setting?"
    )
    assert text.startswith("ActiveRateGroupOutputPorts: Number of outputs")
    assert "Limits number of components attached to a single rate group; 10" in text


def test_rows_led_by_a_code_span_or_a_link_are_rows() -> None:
    link = "[`Svc::Poly`](../../PolyIf/docs/sdd.md) | getValue | Input | Guarded | Read values"
    code = "`timeCaller` | `Fw::Time` | TimeGet"
    for line in (link, code):
        assert is_table_row(line)
        assert starts_block(line)
    units = [(u.kind, u.text) for u in render_units(PORTS.split("\n"))]
    assert units[1:] == [
        ("row", "`Svc::Poly`: getValue; Input; Guarded; Read values"),
        ("row", "`Svc::Poly`: setValue; Input; Guarded; Write `Fw::PolyType` values"),
    ]
    text = _answer(PORTS, "Which port of Svc::PolyDb writes Fw::PolyType values?")
    assert " | " not in text and "](" not in text


@pytest.mark.parametrize(
    "line",
    [
        "Use `a | b` to pipe the output of one command into another.",
        "`cmd | grep x` filters the output.",
        "[`a | b`](x.md) is a pipeline.",
        "The `|` operator joins two commands.",
        # SQuAD dev (complexity theory): set-builder notation, once rendered as a row
        # ("{xx: x is any binary string}").
        "For instance, the language {xx | x is any binary string} can be solved in linear time.",
    ],
)
def test_prose_with_a_pipe_inside_code_is_not_a_row(line: str) -> None:
    assert not is_table_row(line)
    assert not starts_block(line)
    assert [u.kind for u in render_units([line])] == ["prose"]


def test_join_fails_closed_unless_every_piece_comes_back_cited() -> None:
    marker = marker_pattern(CitationStyle.C)
    # A row ends without a stop: the next quote goes on a new line, as for any such piece.
    assert join([("Sep. [C0]", "21, 2014 [C0]"), ("It flew. [C0]",)], marker) == (
        "Sep. [C0] 21, 2014 [C0]\nIt flew. [C0]"
    )
    # A piece the splitter would not give back as given: never joined.
    assert join([("Sep. 21, 2014 [C0]",)], marker) is None
    assert split_sentences("Sep. [C0] 21, 2014 [C0]", marker=marker) == [
        "Sep. [C0]",
        "21, 2014 [C0]",
    ]


def test_projects_table_rows_are_quoted_whole(
    shared_dataset: Callable[[str], Path],
) -> None:
    docs = shared_dataset("fprime-docs")
    table = (docs / "docs" / "projects.md").read_text(encoding="utf-8")
    rows = [x for x in table.split("\n") if "Ingenuity" in x or "RapidScat" in x]
    header = [x for x in table.split("\n") if x.startswith("|")][:2]
    evidence = "\n".join(header + rows)
    text = _answer(evidence, "When was ISS-RapidScat launched?")
    assert "21, 2014" in text
    text = _answer(evidence, "What processor does the Mars Helicopter (Ingenuity) use?")
    assert "2020" in text


def test_a_whole_row_answers_an_attribute_only_if_it_or_its_columns_hold_it() -> None:
    # The row holds dates (its launch and end) but nothing about an orbital period: before it
    # was quoted whole, its cut halves held no date and the question was refused; it still is
    # (blind F´ set 6, v02). "Launch" in the header answers "When was ... launched?" (above).
    bundle = make_bundle([PROJECTS], "What is the orbital period of the ISS-RapidScat?")
    assert ExtractiveProvider(POLICY.answerer).answer(bundle, REFUSAL) == REFUSAL


def test_configuring_fprime_rate_group_row_keeps_its_setting_name(
    shared_dataset: Callable[[str], Path],
) -> None:
    docs = shared_dataset("fprime-docs")
    text = (docs / "docs" / "UsersGuide" / "dev" / "configuring-fprime.md").read_text("utf-8")
    lines = text.split("\n")
    at = next(i for i, x in enumerate(lines) if x.startswith("| ActiveRateGroupOutputPorts"))
    start = max(i for i in range(at) if not lines[i].strip().startswith("|")) + 1
    table = "\n".join(lines[start : at + 1])
    answer = _answer(
        table,
        "Out of the box, how many components can I attach to one active rate group, and which "
        "setting raises that limit?",
    )
    assert "ActiveRateGroupOutputPorts: Number of outputs" in answer
    assert "; 10;" in answer


def test_polydb_port_rows_render_without_pipes(shared_dataset: Callable[[str], Path]) -> None:
    docs = shared_dataset("fprime-docs")
    text = (docs / "Svc" / "PolyDb" / "docs" / "sdd.md").read_text("utf-8")
    units = render_units(text.split("\n"))
    rows = [u.text for u in units if u.kind == "row"]
    assert "`Svc::Poly`: getValue; Input; Guarded; Write `Fw::PolyType` values" in rows
    assert not [u.text for u in units if " | " in u.text]
