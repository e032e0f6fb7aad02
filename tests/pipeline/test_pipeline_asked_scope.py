"""End to end on the demo corpus: questions asking an attribute no document states, of an item
the documents mention (not by a code), are refused; the same shapes asking what the documents
state are answered (`[answerer] asked_scope`, llm/extractive/asked.py; the probes and controls
of benchmarks/data/absent_probes.jsonl). Before the rule each probe here was answered OK with a
cited sentence that names the item and says something else."""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

import pytest
from pipeline_helpers import strict_with

from citebound.pipeline import Pipeline

ABSENT = [
    "Who designed the cooling tower fan?",
    "Which country was the compressor originally built in?",
    "What colour is the emergency shutdown panel?",
    "What is the name of the engineer who designed the GB7 gearbox?",
    "Who tightened the HP-220 impeller bolts to 30 Nm?",
    "What colour are the VT-40 fan blades?",
    "What is the name of the operator who stopped pump P-101B?",
]

# Rewordings the relation parser misread (adversarial review): each was answered OK on the
# demo corpus with a sentence about the item that says something else.
REWORDED = [
    "Who was the cooling tower fan designed by?",
    "In which country was the compressor originally built?",
    "What is the colour of the emergency shutdown panel?",
    "By whom were the HP-220 impeller bolts tightened to 30 Nm?",
    "Who is the VT-40 cooling tower fan's designer?",
]

# (question, a string the answer must hold)
CONTROLS = [
    ("Who must sign the ESD-3 test permit?", "shift supervisor"),
    ("Who must approve a bypass that stays in place for more than 8 hours?", "area manager"),
    ("What colour is the CX-9 emergency stop button?", "red"),
    ("When was the impeller of pump P-101B inspected and refitted?", "2024-02-20"),
    ("When is the next GB-7 oil change due?", "October 2025"),
    ("How much grease goes into each HP-220 bearing?", "15 g"),
    ("Where is the vibration switch VS-40 mounted?", "housing"),
    ("Who found that the ESD-3 power supply unit had failed?", "electrician"),
]


@pytest.mark.parametrize("question", ABSENT)
def test_an_attribute_no_document_states_is_refused(
    question: str, make_pipeline: Callable[..., Pipeline]
) -> None:
    response = make_pipeline().run(question).response
    assert response is not None and response.status.value == "NO_EVIDENCE", response


@pytest.mark.parametrize("question", REWORDED)
def test_a_reworded_absent_attribute_is_refused(
    question: str, make_pipeline: Callable[..., Pipeline]
) -> None:
    response = make_pipeline().run(question).response
    assert response is not None and response.status.value == "NO_EVIDENCE", response


@pytest.mark.parametrize(("question", "fact"), CONTROLS)
def test_the_same_shapes_are_answered_when_stated(
    question: str, fact: str, make_pipeline: Callable[..., Pipeline]
) -> None:
    response = make_pipeline().run(question).response
    assert response is not None and response.status.value == "OK" and fact in response.answer


def test_the_rule_off_answers_them(make_pipeline: Callable[..., Pipeline], tmp_path: Path) -> None:
    # The rule is what refuses them: with it off, the first probe is answered as before.
    assert (
        "\nasked_scope = true\n"
        in files("citebound.presets").joinpath("strict-v1.toml").read_text()
    )
    off = strict_with(tmp_path, "asked_scope", "false")
    response = make_pipeline(policy=off).run(ABSENT[0]).response
    assert response is not None and response.status.value == "OK"
