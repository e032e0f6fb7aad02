"""What the extractive answerer may quote, and what kind of question it answers.

Evidence text is Markdown (or text, HTML, PDF) as the author wrote it. A reader does not read
`| SVC-COMQUEUE-008 | ... |`, `\\page SvcTlmChanComponent`, a table of contents or an HTML
comment as a statement, so neither does the answerer:

* metadata lines are never candidates: Doxygen directives (`\\page`, `\\section`, `@ref`...),
  HTML comments and tags, images, table separators, table header rows and table-of-contents
  items (a list item that is only a link);
* a table row is rendered as readable text: `ID: cell; cell` (first cell, a colon, the other
  filled cells joined by `; `);
* a struck-through line, or a row with a cell struck through as a whole (`~~BUILD_30~~ |
  ...`, `PUMP-005 | ~~The seal shall ...~~`, a withdrawn requirement) states what no longer
  holds, and a short line bold as a whole without sentence punctuation (`**Callback
  Formation**`) is a heading written in bold: neither is quoted (a bold warning is)
  (chunking still sees them as text, so `is_metadata` and the chunks do not change);
* list markers (`-`, `*`, `1.`), blockquote markers (`> `, `> > `) and emphasis (`**`, `__`)
  are dropped, a link keeps its text only (`[Ports](ports.md)` -> `Ports`); code spans keep
  their backticks;
* hard-wrapped lines are joined first (`paragraphs`), so a sentence is never a line fragment;
* a fenced code block is skipped, unless the caller asks for short ones (`max_code_lines`): a
  block of 1 to `max_code_lines` non-blank lines right after a prose line or list item (at
  most one blank line between) becomes one `code` unit, every line verbatim in backticks
  (`` `cd fprime/Ref` `fprime-gds` ``), `after` naming the line that introduces it. A block
  whose lines hold a backtick cannot be quoted that way and is skipped;
* an option a configuration reference documents in `#` comment lines, inside a code block or
  in a chunk cut from one (`citebound.text.options`), is a list item: the option line in
  backticks (`` `minimum_cruise_ratio: 0.5` ``, its `#` dropped), then the comment's text, so
  its first sentence quotes the option, its default and what the option is, and the later
  ones are read as about that option.

Every rendered sentence only removes markup from the evidence; it never adds a word, number
or code, so the validator's fact checks see nothing new.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from citebound.text.options import option_at

__all__ = [
    "QuestionType",
    "Unit",
    "is_metadata",
    "is_table_row",
    "question_type",
    "render_units",
    "starts_block",
    "table_header",
]

QuestionType = Literal[
    "definition", "procedure", "quantity", "list", "yesno", "comparison", "reason", "other"
]

# Singular nouns ending in -s that no -ss/-us/-is rule catches ("What gas does the boiler
# emit?", "What lens does it use?"): a small list, not a stemmer; plurals in -as/-es/-ns
# ("areas", "schemas", "dependencies") stay list questions.
_SINGULAR_S = "gas|alias|bias|atlas|canvas|lens|news|series|species|chaos|ethos|means"

# Order matters: the first matching rule names the type (comparison before definition, so
# "What is the difference between A and B?" is a comparison).
_TYPE_RULES: tuple[tuple[QuestionType, re.Pattern[str]], ...] = (
    (
        "comparison",
        re.compile(r"\b(difference|differences|differ|compare|compared|versus|vs\.?)\b"),
    ),
    (
        "procedure",
        re.compile(
            r"^(how (do|can|should|would|does one|to)\b|what (are the )?steps\b|"
            r"(what|which) (command|commands)\b)|\b(steps|procedure|instructions)\b"
        ),
    ),
    (
        "quantity",
        re.compile(
            r"^(how (many|much|often|long|large|big|fast|far|old)|what (is the )?"
            r"(maximum|minimum|max|min|number|size|rate|frequency|limit|default|value|"
            r"percentage|year|date|torque|interval|capacity)|when\b|in what year)"
            r"|\b(how many|limit|maximum|minimum)\b"
        ),
    ),
    ("reason", re.compile(r"^(why|what (is|was) the (reason|cause|root cause))\b")),
    (
        "list",
        re.compile(
            r"^(list|name|enumerate)\b|^(what|which) (kinds|types|sorts|are the \w+s\b)"
            r"|\b(kinds|types) of\b|\bexist\b"
            # "What component kinds does F´ have?", "Which port types ...?"
            r"|^(what|which) (\w+ ){1,2}(kinds|types|sorts)\b"
            # "What commands can X run?", "Which events does X emit?": a plural noun asked
            # for (not "what is / does / has", nor a singular noun ending in s: -ss, -us, -is
            # words ("class", "status", "axis", "analysis") and `_SINGULAR_S`)
            r"|^(what|which) ((?!(is|was|does|has|this|its)\b)\w+ )?"
            rf"(?!(is|was|does|has|this|its|{_SINGULAR_S})\b)\w*[^\Wsui]s "
            r"(can|could|do|does|did|are|were|should|must|will|would|exist|have)\b"
        ),
    ),
    (
        "definition",
        re.compile(r"^(what (is|are|does) (a |an |the )?|define\b|describe\b|what's\b)"),
    ),
    (
        "yesno",
        re.compile(r"^(is|are|can|could|does|do|did|should|must|will|would|has|have|was|were)\b"),
    ),
)


def question_type(question: str) -> QuestionType:
    """The kind of answer `question` asks for (first matching rule; `other` when none)."""
    q = " ".join(question.casefold().split())
    for kind, pattern in _TYPE_RULES:
        if pattern.search(q):
            if kind == "definition" and _DEFINITION_TAIL.search(q) is None:
                continue  # "What does X return when ..." is not "what is X"
            return kind
    return "other"


# "What is X?" / "What are Xs?" / "What does X do?" / "What does X mean?"
_DEFINITION_TAIL = re.compile(
    r"^(what (is|are) (a |an |the )?[^,]{1,60}\??$|what does .{1,60} (do|mean|provide)\??$|"
    r"define\b|describe\b|what's\b)"
)


@dataclass(frozen=True)
class Unit:
    """One quotable line of evidence after markup rendering."""

    text: str  # rendered text: sentences are cut from it
    kind: Literal["prose", "item", "row", "code"]
    line: int  # index among the evidence's paragraphs (order, adjacency of steps)
    intro: bool  # ends with ":" (introduces the list or steps that follow; code: its intro does)
    after: int = -1  # code: the line of the prose / item unit that introduces the block


_DOXYGEN = re.compile(
    r"^[\\@](page|section|subsection|subsubsection|ref|anchor|tableofcontents"
    r"|mainpage|defgroup|ingroup|addtogroup|brief|file|image|copydoc)\b"
)
_HTML_LINE = re.compile(r"^<(!--|/?[a-zA-Z][\w-]*[\s/>]|/?[a-zA-Z][\w-]*$)")
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
# A Markdown blockquote (`> **Note:** ...`, nested `> > ...`): layout, the text inside is prose.
_QUOTE_MARKER = re.compile(r"^(?:>\s?)+")
# An ordered item may escape its stop ("1\\. Instantiate ...": Markdown writers do so to keep
# their own numbering); it is still an item, and its number is not text.
_LIST_MARKER = re.compile(r"^(?:[-*+\u2013\u2022\u2023\u25e6\u25aa]|\d{1,3}\\?[.)])\s+")
# A pipe-table row written without the leading pipe (`REQ-1 | text | Test`), two-column
# ones included (`PARAM_VALID | Parameter was successfully retrieved`: a spaced pipe, which
# prose does not write outside code).
# Matched on the line with its code spans masked (`_bare_row`): a first cell that is a code
# span or a link to one (`` `timeCaller` | `Fw::Time` | TimeGet ``, "[`Svc::Poly`](x.md) |
# getValue | ...") still makes a row, while a pipe inside code ("Use `a | b` ...") never does.
_BARE_ROW = re.compile(r"^[^|`]+\|[^|]*\||^[^|`]*\S\s\|\s+\S")
_LINK = re.compile(r"!?\[([^\]\[]*)\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_IMAGE = re.compile(r"!\[[^\]\[]*\]\([^)]*\)")
_REF_LINK = re.compile(r"\[([^\]\[]+)\]\[[^\]\[]*\]")
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
# Single-mark emphasis (`*TesterBase*`, `_C_`): a whole word or phrase between marks that no
# word character touches, so `a*b*c`, `snake_case_name` and `2 * 3 * 4` stay as written.
_SINGLE_EMPHASIS = re.compile(
    r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])"
    r"|(?<![\w_])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])"
)
_CODE_SPAN = re.compile(r"(`+)[^`]*?\1")
_INLINE_TAG = re.compile(r"</?(?:br|b|i|em|strong|sup|sub|span|a|code|kbd|u)\b[^>]*>", re.I)
_ANY_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_ONLY_LINKS = re.compile(r"^(?:\s*(?:\[[^\]\[]*\]\([^)]*\))\s*[,;]?)+$")


# A pipe inside braces is set-builder notation, not a cell border: "the language {xx | x is
# any binary string} can be solved ..." (SQuAD dev, complexity theory) is prose.
_BRACED = re.compile(r"\{[^{}\n]*\}")


def _bare_row(line: str) -> bool:
    """A pipe-table row without the leading pipe (`line` stripped); code spans and braced
    text are masked first."""
    masked = _CODE_SPAN.sub(lambda m: "x" * len(m[0]), line)
    masked = _BRACED.sub(lambda m: "x" * len(m[0]), masked)
    return _BARE_ROW.match(masked) is not None


def _inline(text: str) -> str:
    text = _HTML_COMMENT.sub(" ", text)
    text = _IMAGE.sub(" ", text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _REF_LINK.sub(lambda m: m.group(1), text)
    text = _EMPHASIS.sub(lambda m: m.group(2), text)
    text = _outside_code(text, lambda t: _SINGLE_EMPHASIS.sub(lambda m: m[1] or m[2], t))
    text = _INLINE_TAG.sub(" ", text)
    return " ".join(text.split())


def _outside_code(text: str, edit: Callable[[str], str]) -> str:
    """`edit` applied to the text between code spans (`` `*args*` `` is code, kept)."""
    out: list[str] = []
    at = 0
    for m in _CODE_SPAN.finditer(text):
        out += [edit(text[at : m.start()]), m[0]]
        at = m.end()
    return "".join([*out, edit(text[at:])])


def _cells(line: str) -> list[str]:
    inner = line.strip()
    if inner.startswith("|"):
        inner = inner[1:]
    if inner.endswith("|"):
        inner = inner[:-1]
    return [_inline(c) for c in inner.split("|")]


# Text struck through as a whole (`~~BUILD_30~~`): the author withdrew it.
_STRUCK = re.compile(r"^~~(?:(?!~~).)+~~$")


# A line that is bold as a whole is a heading written in bold ("**Callback Formation**",
# "**Build Commands(Linux, Mac OS X)**") only when it reads as a title: at most
# `_HEADING_MAX_WORDS` words and no sentence punctuation (". , ; : ! ?" before a space or at
# the end; text in brackets aside). A bold statement is a warning and stays quotable: "**Do not
# open the drain valve while the pump is running**", "**Warning: torque ... 25 Nm, never
# more**"; so does "**Running:**", which introduces what follows.
_BOLD_LINE = re.compile(r"^(\*\*|__)(?=\S)(?P<inner>.+?)(?<=\S)\1$")
# Set by hand from the F´ docs (not fitted): their bold headings without sentence punctuation
# are 1-6 words; a warning runs longer ("Do not open the drain valve ..." is 11).
_HEADING_MAX_WORDS = 8
_SENTENCE_PUNCTUATION = re.compile(r"[.,;:!?](?:\s|$)")
_BRACKETED = re.compile(r"\([^()]*\)")


def _label(body: str) -> bool:
    m = _BOLD_LINE.match(body)
    if m is None or "**" in m["inner"]:
        return False
    title = _BRACKETED.sub(" ", m["inner"])
    return len(title.split()) <= _HEADING_MAX_WORDS and _SENTENCE_PUNCTUATION.search(title) is None


def _row_text(line: str, *, withdrawn: bool = False) -> str:
    filled = [c for c in _cells(line) if c]
    if len(filled) < 2:
        return ""  # a one-cell row (`| FPP Documentation |`) states nothing
    if not withdrawn and any(_STRUCK.match(c) for c in filled):
        return ""  # a cell struck through as a whole: the author withdrew the row
    return f"{filled[0]}: " + "; ".join(filled[1:])


# CommonMark fences: a run of 3+ backticks or tildes opens a block (a backtick fence's info
# string holds no backtick); only a run of the same character, at least as long and with
# nothing after it, closes it ("~~~" is not closed by "```", "````" not by "```"). An
# unclosed block runs to the end of the text (its lines are code, never quoted).
_FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")


def _closes(opener: str, fence: re.Match[str]) -> bool:
    run = fence[1]
    return run[0] == opener[0] and len(run) >= len(opener) and not fence[2].strip()


def render_units(
    lines: list[str], *, max_code_lines: int = 0, chunking: bool = False
) -> list[Unit]:
    """The quotable units of evidence `lines` (from `paragraphs`), metadata dropped.

    With `max_code_lines` > 0, short fenced code blocks that follow a prose line or list item
    are `code` units too (see the module docstring); by default code is never quoted. With
    `chunking`, struck-through rows and lines and bold headings are units too (text the
    chunker sees, though never quoted).
    """
    out: list[Unit] = []
    fenced = False
    in_comment = False
    fence_at = -1  # line of the open fence
    opener = ""  # its run of backticks or tildes
    skip_to = 0  # lines before it belong to a documented option already rendered
    for i, raw in enumerate(lines):
        if i < skip_to:
            continue
        line = raw.strip()
        fence = _FENCE.match(line)
        doc = None if fence is not None or in_comment else option_at(lines, i, fenced=fenced)
        if doc is not None:
            # `name: default` then what its comment says: one list item the option names, read
            # as a definition list reads ("`kinematics:` The kind of machine this is.").
            said = f"`{doc.option}` {doc.text}"
            out.append(Unit(said, "item", doc.line, False))
            skip_to = doc.end
            continue
        if fenced:
            if fence is not None and _closes(opener, fence):
                if max_code_lines > 0:
                    code = _code_unit(lines, out, fence_at, i, max_code_lines)
                    if code is not None:
                        out.append(code)
                fenced = False
            continue
        if fence is not None and not (fence[1][0] == "`" and "`" in fence[2]):
            fenced, fence_at, opener = True, i, fence[1]
            continue
        if not line:
            continue
        if in_comment or line.startswith("<!--"):
            in_comment = "-->" not in line
            continue
        if _DOXYGEN.match(line) or _TABLE_SEPARATOR.match(line):
            continue
        if _HTML_LINE.match(line) and not _inline(_ANY_TAG.sub(" ", line)):
            continue  # tags only (`<a name="x"></a>`, `<div>`): layout, not text
        if line.startswith("|") or _bare_row(line):
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if _TABLE_SEPARATOR.match(nxt):
                continue  # a header row names columns; it answers nothing
            text = _row_text(line, withdrawn=chunking)
            if text:
                out.append(Unit(text, "row", i, False))
            continue
        line = _QUOTE_MARKER.sub("", line)
        marker = _LIST_MARKER.match(line)
        body = line[marker.end() :] if marker else line
        if marker and _ONLY_LINKS.match(body):
            continue  # a table-of-contents entry
        text = _inline(_ANY_TAG.sub(" ", body) if _HTML_LINE.match(body) else body)
        if not text or (not chunking and (_STRUCK.match(text) or _label(body))):
            continue
        out.append(Unit(text, "item" if marker else "prose", i, text.endswith(":")))
    return out


# Blank lines allowed between the introducing line and its code fence ("... run:" / "" /
# "```"): Markdown writers put one there as often as not; more is a new block (layout, set
# by hand from the F´ docs, not fitted).
_CODE_GAP = 1


# A block line that reads as markup, not as a command: an HTML tag opening the line or any
# closing tag (`<script>...</script>`), emphasis (`**rm -rf /**`), a heading mark (`# reset`),
# a Doxygen directive (`\brief ...`) or a table pipe (`ls | reset-ctl`). The answer judge
# (eval/answers.py `raw_markup`) counts pipes and directives as raw markup even inside a code
# span, so such a block is never quoted (the others would read as markup to a user).
_DOXYGEN_WORDS = _DOXYGEN.pattern.removeprefix("^[\\\\@]")
_CODE_MARKUP = re.compile(
    r"^<(?:!--|/?[a-zA-Z][\w-]*[\s/>]|/?[a-zA-Z][\w-]*$)|</[a-zA-Z][\w-]*>"  # HTML
    r"|(?P<em>\*\*|__)(?=\S).+?(?<=\S)(?P=em)|^#{1,6}(\s|$)"  # emphasis, heading
    rf"|(^|\s)[\\@]{_DOXYGEN_WORDS}|(^|\s)\|(\s|$)"  # Doxygen, table pipe
)


_SHELL_COMMENT = re.compile(r"^#\s+\S")


def _looks_markup(line: str) -> bool:
    return _CODE_MARKUP.search(line) is not None


def _code_unit(
    lines: list[str], units: list[Unit], opened: int, closed: int, max_lines: int
) -> Unit | None:
    """The `code` unit of the fenced block between lines `opened` and `closed`, or None when
    it is too long, empty, holds a backtick or a line that reads as markup, or no prose line /
    list item introduces it."""
    body = [x.strip() for x in lines[opened + 1 : closed] if x.strip()]
    # A shell comment ("# For ARM 64-bit hardware") annotates the command under it: inside a
    # fence it is never a heading, and a block's length is counted in commands.
    commands = [x for x in body if not _SHELL_COMMENT.match(x)]
    if (
        not commands
        or len(commands) > max_lines
        or any("`" in x or _looks_markup(x) for x in commands)
        or any("`" in x or _looks_markup(x[1:]) for x in body if x not in commands)
    ):
        return None
    before = opened - 1
    while before >= 0 and not lines[before].strip():
        before -= 1
    if before < 0 or opened - before - 1 > _CODE_GAP:
        return None
    intro = units[-1] if units else None
    if (
        intro is None
        or intro.line != before
        or intro.kind not in ("prose", "item")
        or intro.text.startswith("#")
    ):
        return None  # a heading, a table, metadata or another block comes right before it
    # `intro` of a code unit: its introducing line ends with ":" (that sentence owns it).
    return Unit(" ".join(f"`{x}`" for x in body), "code", opened, intro.intro, intro.line)


# A line that starts a block of its own: list item, heading, table row, quote, fence, markup.
_BLOCK_START = re.compile(
    r"\s*(?:[-*+\u2013\u2022\u2023\u25e6\u25aa]\s|\d{1,3}\\?[.)]\s|#{1,6}(?:\s|$)|[|><]|```|~~~|[\\@]\w)"
)


def starts_block(line: str) -> bool:
    """Whether `line` begins a list item, heading, row, quote, fence or directive."""
    return _BLOCK_START.match(line) is not None or _bare_row(line.strip())


def is_table_row(line: str) -> bool:
    """A pipe-table row, with or without the leading pipe."""
    stripped = line.strip()
    return stripped.startswith("|") or _bare_row(stripped)


def table_header(lines: list[str], row: int) -> str:
    """The header row of the table holding line `row` (the row above its separator), or ""
    when none is found (a table cut at a chunk start)."""
    at = row - 1
    while at > 0 and is_table_row(lines[at]) and not _TABLE_SEPARATOR.match(lines[at].strip()):
        at -= 1
    if at > 0 and _TABLE_SEPARATOR.match(lines[at].strip()) and is_table_row(lines[at - 1]):
        return " ".join(c for c in _cells(lines[at - 1]) if c)
    return ""


def is_metadata(block_text: str) -> bool:
    """A block holding no quotable text: only directives, comments, tags or TOC entries."""
    return bool(block_text.strip()) and not render_units(block_text.split("\n"), chunking=True)
