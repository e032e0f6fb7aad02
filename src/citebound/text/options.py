"""Options a configuration reference documents in `#` comment lines.

Firmware and server manuals often document every option inside a code block, each option
line followed by the comment lines that say what it does (the option's default is the value
written on its line; a leading `#` marks it optional):

    [printer]
    max_velocity:
    #   The highest speed, in mm/s, of the toolhead ...
    #minimum_cruise_ratio: 0.5
    #   This ratio is the smallest share of each move ...

or, as many INI and YAML files do, with the comment lines right before the option line they
document (when no option line comes before them). `option_at` finds such an option and its
comment: the answerer quotes the option line (the default) and the comment's sentences as a
list item, the option naming the entry (`citebound.text.markup.render_units`). Outside a code
block (a chunk cut from the middle of one; sanitizing has collapsed the comment's indentation,
so `#   text` reads `# text`) only a lower-case identifier with a short value or none opens an
option and its comment must follow it: "Note: ..." over a `# Heading` is Markdown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# `name: value` or `name = value`, optionally commented out (`#name: 0.5`, no space after the
# `#`): the name is an identifier (`max_velocity`, `stepper.x`, `log-level`).
_OPTION = re.compile(r"^#?(?P<option>[A-Za-z_][\w.\-]*\s*[:=](?:\s.*)?)$")
# Outside a code block an option is a lower-case identifier with a short value or none
# (`max_velocity:`, `#homing_speed: 5.0`), never "Note: ..." or a sentence.
_OPTION_OUTSIDE = re.compile(r"^#?(?P<option>[a-z_][a-z0-9_.\-]*\s*[:=](?:\s+\S.{0,38}(?<!\.))?)$")
_COMMENT = re.compile(r"^#(?P<gap>\s+)(?P<text>\S.*)$")


@dataclass(frozen=True)
class OptionDoc:
    """A documented option: lines `start` to `end` (exclusive) of the evidence."""

    start: int
    end: int
    option: str  # the option line without its `#`: "minimum_cruise_ratio: 0.5"
    text: str  # the comment lines, `#` and indentation dropped, joined with spaces
    line: int  # the option line's index


def _option(line: str, fenced: bool) -> str | None:
    m = (_OPTION if fenced else _OPTION_OUTSIDE).match(line.strip())
    return m["option"].rstrip() if m else None


def _comment(line: str, gap: str | None = None) -> str | None:
    """The text of a comment line (with `gap`: only one indented that much after its `#`)."""
    m = _COMMENT.match(line.strip())
    return m["text"].strip() if m and (gap is None or m["gap"] == gap) else None


def _gap(line: str) -> str | None:
    m = _COMMENT.match(line.strip())
    return m["gap"] if m else None


def option_at(lines: list[str], i: int, *, fenced: bool) -> OptionDoc | None:
    """The documented option starting at line `i` (its option line, or the first comment line
    of a comment written before its option), or None.

    >>> doc = option_at(["#max_z_accel: 100", "#   The highest acceleration.", "x: 1"], 0,
    ...                 fenced=True)
    >>> (doc.option, doc.text, doc.end)
    ('max_z_accel: 100', 'The highest acceleration.', 2)
    """
    option = _option(lines[i], fenced)
    if option is not None:
        j = i + 1
        said: list[str] = []
        # An option's comment is indented alike ("#   "); "# Next: the z axis" is not its.
        gap = _gap(lines[j]) if j < len(lines) else None
        while j < len(lines) and (text := _comment(lines[j], gap)) is not None:
            said.append(text)
            j += 1
        return OptionDoc(i, j, option, " ".join(said), i) if said else None
    # A comment before its option: only inside a code block (outside, `# Title` then a line
    # `name: value` is a heading and its text).
    if not fenced or _comment(lines[i]) is None or (i > 0 and _comment(lines[i - 1])):
        return None
    if i > 0 and _option(lines[i - 1], fenced) is not None:
        return None  # the comment after an option documents that option
    j = i
    said = []
    while j < len(lines) and (text := _comment(lines[j])) is not None:
        said.append(text)
        j += 1
    option = _option(lines[j], fenced) if j < len(lines) else None
    if option is None or (j + 1 < len(lines) and _comment(lines[j + 1]) is not None):
        return None  # no option right after, or that option has a comment of its own
    return OptionDoc(i, j + 1, option, " ".join(said), j)


__all__ = ["OptionDoc", "option_at"]
