"""Commands in short fenced code blocks answer "How do I ...?" (issue #15, extractive-v6)."""

from __future__ import annotations

from llm_helpers import make_bundle

from citebound.eval.answers import raw_markup
from citebound.llm import ExtractiveProvider
from citebound.policy import load_policy
from citebound.text.markup import render_units
from citebound.validate.validator import validate_text

REFUSAL = load_policy("strict-v1").refusal.model_text

PLATFORM = """## Setting Build Platform

To cross-compile for a different platform, the platform argument can be passed to `fprime-util`.

For example, to cross-compile for the Raspberry Pi, the `raspberrypi` platform can be used:

```
$ fprime-util generate raspberrypi
$ fprime-util build raspberrypi
```

A deployment's `settings.ini` file can change the default platform."""


def units(lines: list[str], max_code_lines: int = 3) -> list[tuple[str, str, int]]:
    return [(u.kind, u.text, u.after) for u in render_units(lines, max_code_lines=max_code_lines)]


def test_a_short_block_after_its_intro_is_one_code_unit_verbatim_in_backticks() -> None:
    lines = ["Run the ground system with:", "", "```bash", "cd fprime/Ref", "fprime-gds", "```"]
    assert units(lines) == [
        ("prose", "Run the ground system with:", -1),
        ("code", "`cd fprime/Ref` `fprime-gds`", 0),
    ]
    # Off by default (metadata detection, SQuAD-like text): code is never a unit.
    assert [u.kind for u in render_units(lines)] == ["prose"]


def test_blocks_that_are_long_unintroduced_or_hold_backticks_are_not_units() -> None:
    long_block = ["Build it:", "```", "a", "b", "c", "d", "```"]
    assert [k for k, _, _ in units(long_block)] == ["prose"]
    assert [k for k, _, _ in units(long_block, max_code_lines=4)] == ["prose", "code"]
    after_heading = ["## Build", "```", "make", "```"]
    assert [k for k, _, _ in units(after_heading)] == ["prose"]
    far = ["Build it:", "", "", "```", "make", "```"]
    assert [k for k, _, _ in units(far)] == ["prose"]
    ticks = ["Run:", "```", 'docker run -u "`id -u`" img', "```"]
    assert [k for k, _, _ in units(ticks)] == ["prose"]
    after_table = ["| a | b |", "```", "make", "```"]
    assert [k for k, _, _ in units(after_table)] == ["row"]


def test_a_procedure_question_gets_the_intro_and_the_command_and_it_validates() -> None:
    bundle = make_bundle([PLATFORM], "How do I generate a build for the raspberrypi toolchain?")
    answer = ExtractiveProvider().answer(bundle, REFUSAL)
    assert answer == (
        "For example, to cross-compile for the Raspberry Pi, the `raspberrypi` platform can be "
        "used: [C0]\n`$ fprime-util generate raspberrypi` `$ fprime-util build raspberrypi` [C0]"
    )
    result = validate_text(bundle, answer, load_policy("strict-v1"))
    assert result.validation_status.value == "PASSED", result.message


def test_code_is_never_quoted_for_other_question_types_or_when_turned_off() -> None:
    for question in ("What is the raspberrypi platform?", "Which platform is the default?"):
        answer = ExtractiveProvider().answer(make_bundle([PLATFORM], question), REFUSAL)
        assert "fprime-util generate" not in answer, question
    off = ExtractiveProvider(max_code_lines=0)
    question = "How do I generate a build for the raspberrypi toolchain?"
    answer = off.answer(make_bundle([PLATFORM], question), REFUSAL)
    assert "fprime-util generate" not in answer


def test_a_block_the_validator_would_cut_is_left_out_not_failing_the_answer() -> None:
    text = "To run the GDS from the deployment directory, run:\n```\nfprime-gds -d . -n\n```"
    bundle = make_bundle([text], "How do I run the GDS from the deployment directory?")
    answer = ExtractiveProvider().answer(bundle, REFUSAL)
    assert answer == "To run the GDS from the deployment directory, run: [C0]"
    assert validate_text(bundle, answer, load_policy("strict-v1")).validation_status.value == (
        "PASSED"
    )


def test_the_judge_reads_a_quoted_command_as_code_but_still_flags_pipes() -> None:
    assert raw_markup("Create a branch: [C0]\n`git checkout -b <desired branch name>` [C0]") == []
    assert raw_markup("Make it: <b>now</b> [C0]") == ["html"]
    assert raw_markup("Filter: `ls | grep x` [C0]") == ["table pipe"]
    assert raw_markup("Page: `see \\page SvcTlmChan` [C0]") == ["doxygen"]


def test_the_judge_counts_a_quoted_blockquote_marker() -> None:
    assert raw_markup("It starts the container. [C0] > Anytime Mac users run it. [C0]") == [
        "quote marker"
    ]
    assert raw_markup("> Note: run it. [C0]") == ["quote marker"]
    assert raw_markup("Keep the pressure > 5 bar. [C0]") == []
