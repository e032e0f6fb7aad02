"""Key terms across spellings, hard-wrapped Markdown read as sentences, and options documented
in `#` comment lines (#31)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from citebound.gate.measures import coverage, top_coverage
from citebound.ingest.chunker import unwrap
from citebound.llm.extractive.candidates import paragraphs
from citebound.text import split_sentences
from citebound.text.markup import render_units
from citebound.text.options import option_at
from citebound.text.terms import terms

SPELLINGS = [
    "minimum_cruise_ratio",
    "MinimumCruiseRatio",
    "minimumCruiseRatio",
    "minimum-cruise-ratio",
    "minimum cruise ratio",
]


@pytest.mark.parametrize("asked", SPELLINGS)
@pytest.mark.parametrize("written", SPELLINGS)
def test_key_terms_match_across_spellings(asked: str, written: str) -> None:
    question = f"What does the {asked} setting do?"
    text = f"The {written} setting keeps part of each move at constant speed."
    assert coverage(question, text) == 1.0


def test_snake_case_is_its_words_everywhere_and_camel_case_stays_one_name() -> None:
    assert terms("minimum_cruise_ratio") == terms("minimum cruise ratio")
    # the answerer's terms keep a CamelCase name whole: "PostgreSQL" is not stated by "SQL"
    assert terms("PostgreSQL") == {"postgresql"}
    assert coverage("What is the PostgreSQL port?", "The SQL port is 5432.") == 0.5


@dataclass(frozen=True)
class _Source:
    document: str
    heading_path: tuple[str, ...]


@dataclass(frozen=True)
class _Row:
    similarity: float
    rank: int
    chunk_id: str
    chunk_text: str
    source: _Source | None


def test_the_gate_measures_count_an_identifier_as_its_words() -> None:
    rows = [
        _Row(
            0.7,
            0,
            "c0",
            "The minimum cruise ratio sets how large that part must be.",
            _Source("FAQ", ("Why are short moves slower?",)),
        )
    ]
    for question in (
        "What is minimum_cruise_ratio?",
        "What is MinimumCruiseRatio?",
        "What does the planner use the MinimumCruiseRatio for?",
    ):
        m = top_coverage(question, rows)
        assert m is not None
        assert m.key_terms_held == m.key_terms or question.startswith("What does"), question
        assert m.names_unfound == 0, question


WRAPPED = """\
Options are grouped into sections, and the options of a section follow it one per line
in each
section block.

An option written as a comment, like
`#max_z_velocity: 25`, is optional and the firmware uses that value.

Heat the bed with the `M140 S60;
M190 S60` pair of commands before printing.

See
[the PID guide](pid.md) for the tuning values.

Inputs

The bed reads its sensor every second.
"""

SENTENCES = [
    "Options are grouped into sections, and the options of a section follow it one per line "
    "in each section block.",
    "An option written as a comment, like `#max_z_velocity: 25`, is optional and the firmware "
    "uses that value.",
    "Heat the bed with the `M140 S60; M190 S60` pair of commands before printing.",
    "See the PID guide for the tuning values.",
    "Inputs",
    "The bed reads its sensor every second.",
]


def test_the_answerer_reads_hard_wrapped_lines_as_one_sentence() -> None:
    units = render_units(paragraphs(WRAPPED))
    assert [s for u in units for s in split_sentences(u.text)] == SENTENCES


def test_the_chunker_reads_hard_wrapped_lines_as_one_sentence() -> None:
    # the chunker keeps the Markdown (links, code spans) and cuts at the same places
    said = split_sentences(unwrap(WRAPPED))
    assert said[3] == "See [the PID guide](pid.md) for the tuning values."
    assert [s.replace("[the PID guide](pid.md)", "the PID guide") for s in said] == SENTENCES


CONFIG = """\
```
[printer]
max_velocity:
#   The highest speed, in mm/s, of the toolhead. This option must be set.
#minimum_cruise_ratio: 0.5
#   A move is planned as a speed-up, a cruise and a slow-down. This
#   ratio is the smallest share of a move kept at constant speed.
# Options of the z axis follow.
#   (a note that documents no option)

# The highest z speed, in mm/s.
max_z_velocity = 25
```
"""


def test_documented_options_are_items_the_option_names() -> None:
    units = render_units(paragraphs(CONFIG))
    assert [(u.kind, u.text) for u in units] == [
        (
            "item",
            "`max_velocity:` The highest speed, in mm/s, of the toolhead. This option must be set.",
        ),
        (
            "item",
            "`minimum_cruise_ratio: 0.5` A move is planned as a speed-up, a cruise and a "
            "slow-down. This ratio is the smallest share of a move kept at constant speed.",
        ),
        ("item", "`max_z_velocity = 25` The highest z speed, in mm/s."),
    ]


def test_options_outside_a_code_block_need_an_identifier_not_a_heading() -> None:
    # a chunk cut from the middle of a block, indentation collapsed by sanitizing
    piece = ["#homing_speed: 5.0", "# The speed of the axis while homing."]
    doc = option_at(piece, 0, fenced=False)
    assert doc is not None and doc.option == "homing_speed: 5.0"
    # Markdown: a label line and a heading, or a heading and a line
    assert option_at(["Note: read this.", "# Install"], 0, fenced=False) is None
    assert option_at(["# Install", "steps: 3"], 0, fenced=False) is None
    assert render_units(["# Install", "", "Run the installer."])[1].text == "Run the installer."
