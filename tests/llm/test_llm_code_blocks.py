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


def test_a_block_that_cannot_be_quoted_leaves_no_intro_promising_it() -> None:
    # The block would be cut by the validator's splitter (" . "), holds a marker, or is
    # missing: "..., run:" alone promises a command the answer does not give (review finding
    # 4: the short one failed the validator with EMPTY_ANSWER). The answerer refuses.
    policy = load_policy("strict-v1")
    question = "How do I reset the controller configuration?"
    for text in (
        "To reset the controller configuration, run:\n```\nreset-ctl -d . -n\n```",
        "To reset the controller configuration, run:\n```\nreset-ctl [C1]\n```",
        "To reset the controller configuration, run:",
    ):
        bundle = make_bundle([text], question)
        answer = ExtractiveProvider().answer(bundle, REFUSAL)
        assert answer == REFUSAL, text
        assert validate_text(bundle, answer, policy).validation_status.value == "PASSED"


def test_a_block_goes_only_with_the_sentence_ending_in_a_colon_that_introduces_it() -> None:
    # Review finding 1: a block under "To erase the disk, run:" was quoted under the first
    # sentence of the same line, answering "reset" with `wipe-disk --all`.
    question = "How do I reset the controller configuration?"
    for text, lead in (
        (
            "You can reset the controller configuration with the reset tool. To erase the "
            "disk, run:\n```\nwipe-disk --all\n```",
            "You can reset the controller configuration with the reset tool. [C0]",
        ),
        (
            "To reset the controller configuration, use the reset tool from the service "
            "laptop. Never power off the controller during the reset; to erase the whole disk "
            "instead, run:\n\n```\nwipe-disk --all\n```",
            "To reset the controller configuration, use the reset tool from the service "
            "laptop. [C0]",
        ),
        (
            "- To reset the controller configuration use the reset tool.\n- To erase the disk "
            "run:\n```\nwipe-disk --all\n```",
            "To reset the controller configuration use the reset tool. [C0]",
        ),
    ):
        answer = ExtractiveProvider().answer(make_bundle([text], question), REFUSAL)
        assert answer == lead, text
    # The sentence that does introduce it still brings it.
    text = "To reset the controller configuration, run:\n```\nreset-ctl --all\n```"
    answer = ExtractiveProvider().answer(make_bundle([text], question), REFUSAL)
    assert answer == "To reset the controller configuration, run: [C0]\n`reset-ctl --all` [C0]"


def test_the_token_budget_drops_a_block_with_its_intro_never_the_block_alone() -> None:
    text = "To reset the controller configuration, run:\n```\nreset-ctl --all\n```"
    bundle = make_bundle([text], "How do I reset the controller configuration?")
    full = ExtractiveProvider().answer(bundle, REFUSAL)
    # Intro and block are one unit: too long, the caller sees the length (never "..., run:").
    assert ExtractiveProvider().answer(bundle, REFUSAL, max_tokens=5) == full


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


def test_a_line_without_a_colon_introduces_its_block_as_a_whole_when_the_block_is_on_topic() -> (
    None
):
    # F´ c03: "... This can be done using the `-g none` flag. ..." + "$ fprime-gds -g none".
    question = "How do I run the GDS without the browser UI?"
    text = (
        "You may wish to run the GDS without the browser UI. This can be done with a flag."
        "\n```\nfprime-gds -g none\n```"
    )
    answer = ExtractiveProvider().answer(make_bundle([text], question), REFUSAL)
    assert answer.endswith("\n`fprime-gds -g none` [C0]")
    # The block shares no question term: not quoted under a sentence of that line.
    text = (
        "You can reset the controller configuration with the reset tool. The disk can be "
        "erased too.\n```\nwipe-disk --all\n```"
    )
    question = "How do I reset the controller configuration?"
    answer = ExtractiveProvider().answer(make_bundle([text], question), REFUSAL)
    assert answer == "You can reset the controller configuration with the reset tool. [C0]"


def test_a_block_that_reads_as_markup_is_never_quoted() -> None:
    # Review finding 5: tags, emphasis, heading marks, Doxygen directives and table pipes
    # passed verbatim (the judge counts a pipe in a code span as raw markup).
    question = "How do I reset the controller configuration?"
    for body in (
        "<script>alert(1)</script>",
        "**rm -rf /**",
        "# reset",
        "\\brief reset-ctl --all",
        "ls | reset-ctl",
    ):
        text = f"To reset the controller configuration, run:\n\n```\n{body}\n```"
        answer = ExtractiveProvider().answer(make_bundle([text], question), REFUSAL)
        assert "`" not in answer and raw_markup(answer) == [], body
    # A placeholder in angle brackets is part of the command.
    lines = ["Create a branch with:", "```", "git checkout -b <desired branch name>", "```"]
    assert units(lines)[-1] == ("code", "`git checkout -b <desired branch name>`", 0)


def test_fences_close_only_on_the_same_character_at_least_as_long() -> None:
    # Review finding 6 (CommonMark): "```" does not close "~~~", nor "```" a "````" block,
    # nor a fence line with text after it; those lines stay code.
    for lines in (
        ["Run:", "~~~", "reset-ctl --all", "```", "After.", "~~~", "Done."],
        ["Run:", "````", "reset-ctl --all", "```", "After.", "````", "Done."],
        ["Run:", "```", "reset-ctl --all", "``` not a fence", "After.", "```", "Done."],
    ):
        assert units(lines) == [("prose", "Run:", -1), ("prose", "Done.", -1)], lines
    lines = ["Run:", "~~~~", "reset-ctl --all", "~~~~~", "Done."]
    assert units(lines) == [
        ("prose", "Run:", -1),
        ("code", "`reset-ctl --all`", 0),
        ("prose", "Done.", -1),
    ]


# F´ ArmLinuxTutorial.md (g17): a blank line inside the fence makes two evidence sentences of
# the block, so its one-line rendering is no quotation of the evidence; quoted, the validator
# failed the answer (LOW_SUPPORT) once ingest-v5 kept the block with its intro.
UPLOAD = """First, in a terminal upload the software to hardware platform. This is done with:

```sh
# For ARM 64-bit hardware
scp -r build-artifacts/aarch64-linux/Ref user@board:deployment

# For ARM 32-bit hardware
scp -r build-artifacts/arm-hf-linux/Ref user@board:deployment
```

Users must fill in the username and device address above."""


def test_a_block_split_by_a_blank_line_is_not_quoted_and_the_answer_passes() -> None:
    policy = load_policy("strict-v1")
    question = "How do I upload the built software to a 64-bit ARM Linux board?"
    bundle = make_bundle([UPLOAD], question)
    answer = ExtractiveProvider(policy.answerer).answer(bundle, REFUSAL)
    assert "scp -r" not in answer
    assert answer != REFUSAL  # the prose around the split block answers
    assert validate_text(bundle, answer, policy).validation_status.value == "PASSED"
