"""Evidence as a reader sees it: metadata dropped, rows and items rendered (text/markup.py)."""

from __future__ import annotations

from citebound.text.markup import is_metadata, render_units, starts_block


def texts(lines: list[str]) -> list[tuple[str, str]]:
    return [(u.kind, u.text) for u in render_units(lines)]


def test_rows_without_a_leading_pipe_render_as_text_and_headers_are_skipped() -> None:
    lines = [
        "Requirement | Description | Verification Method",
        "----------- | ----------- | -------------------",
        "ISF-CMDS-004 | The component shall cancel the sequence on a failed command. | Unit Test",
    ]
    assert texts(lines) == [
        (
            "row",
            "ISF-CMDS-004: The component shall cancel the sequence on a failed command.; Unit Test",
        )
    ]


def test_items_emphasis_links_and_tags() -> None:
    lines = [
        "– Guarded – port calls lock a **mutex** first.",
        '<a name="File_Format"></a>',
        "<p>Kept text inside a tag.</p>",
        "1. Run [the build](build.md) twice.",
        "![diagram](img/x.png)",
    ]
    assert texts(lines) == [
        ("item", "Guarded – port calls lock a mutex first."),
        ("prose", "Kept text inside a tag."),
        ("item", "Run the build twice."),
    ]


def test_metadata_blocks() -> None:
    assert is_metadata("\\page SvcTlmChan Telemetry\n\\section intro Introduction")
    assert is_metadata("<!-- generated\nby a tool -->")
    assert is_metadata("- [Intro](#intro)\n- [Design](#design)")
    assert not is_metadata("- [Intro](#intro) explains the design.")
    assert not is_metadata("The component stores values.")


def test_block_starts_keep_their_line_break() -> None:
    assert starts_block("- item") and starts_block("| a | b |") and starts_block("REQ | a | b")
    assert starts_block("\\section x") and not starts_block("passed to the component, and")


def test_blockquote_markers_are_layout() -> None:
    """`> **Note:** ...` is a note in prose: the answer quotes its text, never the `>`."""
    lines = [
        "> **Note:** Anytime Macintosh users run cross-compilation commands, they use a terminal.",
        "> > - Nested item text.",
        "The pressure must stay > 5 bar.",
    ]
    assert texts(lines) == [
        (
            "prose",
            "Note: Anytime Macintosh users run cross-compilation commands, they use a terminal.",
        ),
        ("item", "Nested item text."),
        ("prose", "The pressure must stay > 5 bar."),
    ]


def test_a_struck_through_row_or_line_is_withdrawn_not_quoted() -> None:
    lines = [
        "| Name | Description |",
        "|---|---|",
        "~~BUILD_30~~ | ~~The build system shall run GSE tests.~~ |",
        "BUILD_31 | The build system shall run autocoder tests. |",
        "~~The old build ran every test twice.~~",
        "~~Old~~ text stays: only part of it is struck.",
    ]
    texts = [u.text for u in render_units(lines)]
    assert texts == [
        "BUILD_31: The build system shall run autocoder tests.",
        "~~Old~~ text stays: only part of it is struck.",
    ]
    # Control: chunking's view (`chunking=True`) still reads them as text, so a block of
    # struck rows is not metadata and the chunks do not change.
    assert len(render_units(lines, chunking=True)) == 4
    assert not is_metadata("~~BUILD_30~~ | ~~The build system shall run GSE tests.~~ |")


def test_a_bold_line_without_a_stop_is_a_label_not_a_statement() -> None:
    lines = [
        "**Build Commands(Linux, Mac OS X)**",
        "**Running:**",
        "**Note:** the build must be regenerated.",
        "**The pump is rated for 40 bar.**",
    ]
    assert [u.text for u in render_units(lines)] == [
        "Running:",
        "Note: the build must be regenerated.",
        "The pump is rated for 40 bar.",
    ]
    # Control: the chunker still reads the label as text (a block of it is not metadata).
    assert not is_metadata("**Build Commands(Linux, Mac OS X)**")
    assert len(render_units(lines, chunking=True)) == 4


def test_a_bold_warning_is_a_statement_not_a_heading() -> None:
    """Review of #15: a bold line is a heading only when short and without sentence
    punctuation; a bold warning is what the reader must be told."""
    lines = [
        "**Do not open the drain valve while the pump is running**",
        "**Warning: torque the gland nuts to 25 Nm, never more**",
        "**Callback Formation**",
        "**When To Use Svc.BufferManager**",
    ]
    assert [u.text for u in render_units(lines)] == [
        "Do not open the drain valve while the pump is running",
        "Warning: torque the gland nuts to 25 Nm, never more",
    ]


def test_a_row_with_any_cell_struck_through_is_withdrawn() -> None:
    lines = [
        "| PUMP-005 | ~~The seal shall be replaced every 1000 h~~ |",
        "| PUMP-006 | The seal shall be replaced every 2000 h |",
        "| PUMP-007 | ~~1000 h~~ 2000 h |",
    ]
    assert [u.text for u in render_units(lines)] == [
        "PUMP-006: The seal shall be replaced every 2000 h",
        "PUMP-007: ~~1000 h~~ 2000 h",  # control: only part of the cell is struck
    ]
    assert len(render_units(lines, chunking=True)) == 3  # the chunks do not change
