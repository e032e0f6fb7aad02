"""End to end on the demo corpus: questions about an attribute of a coded item that no document
states are refused, not answered with another sentence about the item (review of #15, the
`[answerer] code_scope` rule, text/codes.py). Before the rule, each of these was answered OK
with a cited sentence that names the item and says something else."""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

import pytest
from pipeline_helpers import strict_with

from citebound.pipeline import Pipeline

ABSENT = [
    "Which country typically manufactures the HP-220 pump?",
    "In which year was the HP-220 pump designed?",
    "How long does the HP-220 pump typically last?",
    "Which country was the CX9 compressor originally built in?",
]


@pytest.mark.parametrize("question", ABSENT)
def test_an_attribute_no_document_states_is_refused(
    question: str, make_pipeline: Callable[..., Pipeline]
) -> None:
    response = make_pipeline().run(question).response
    assert response is not None and response.status.value == "NO_EVIDENCE", response


def test_the_items_stated_attributes_are_answered(make_pipeline: Callable[..., Pipeline]) -> None:
    # Controls: the same items, attributes their documents state.
    pipe = make_pipeline()
    oil = pipe.run("What oil does the GB-7 gearbox use?").response
    assert oil is not None and oil.status.value == "OK" and "ISO VG 220" in oil.answer
    torque = pipe.run("What torque should the HP-220 impeller bolts be tightened to?").response
    assert torque is not None and torque.status.value == "OK" and "Nm" in torque.answer


def test_the_rule_off_answers_them(make_pipeline: Callable[..., Pipeline], tmp_path: Path) -> None:
    # The rule is what refuses them: with it off, the first probe is answered as before.
    assert (
        "\ncode_scope = true\n" in files("citebound.presets").joinpath("strict-v1.toml").read_text()
    )
    off = strict_with(tmp_path, "code_scope", "false")
    response = make_pipeline(policy=off).run(ABSENT[0]).response
    assert response is not None and response.status.value == "OK"
