"""Markdown loader: heading hierarchy from markdown-it-py, metadata from front matter.

`Document.text` is the Markdown source after the front matter, so chunk offsets point into
what the author wrote. Fenced/indented code and every table row become atomic blocks, at any
nesting depth (a fence inside a list item is still never split).
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

from citebound.contracts.ingest import Block, BlockKind, ParsedDocument, SkipReason
from citebound.ingest.metadata import split_front_matter
from citebound.ingest.source import SourceFile, block, decode_text, make_document, skip


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # Block structure only: inline parsing is half the cost and only headings need it.
    return MarkdownIt("commonmark", {"html": True}).enable("table").disable("inline")


@lru_cache(maxsize=1)
def _inline_parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True})


def _inline_text(token: Token) -> str:
    """Plain text of a heading's inline source (markup such as `**`, links and code dropped)."""
    (inline,) = _inline_parser().parseInline(token.content)
    return _children_text(inline)


def _children_text(token: Token) -> str:
    parts: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(_children_text(child))
    return " ".join("".join(parts).split())


def _atomic_ranges(tokens: list[Token]) -> list[tuple[int, int, str]]:
    """Line ranges that must stay whole: code (fence, indented) and table rows.

    A table's header row and its `|---|` separator line form one unit, so a split between
    rows never strands the separator.
    """
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type in ("fence", "code_block") and tok.map:
            out.append((tok.map[0], tok.map[1], "code"))
        elif tok.type == "table_open" and tok.map:
            rows: list[tuple[int, int]] = []
            in_head = False
            head_end = tok.map[0]
            j = i + 1
            depth = 1
            while j < len(tokens) and depth:
                t = tokens[j]
                if t.type == "table_open":
                    depth += 1
                elif t.type == "table_close":
                    depth -= 1
                elif t.type == "thead_open":
                    in_head = True
                elif t.type == "thead_close":
                    in_head = False
                elif t.type == "tr_open" and t.map:
                    if in_head:
                        head_end = t.map[1]
                    else:
                        rows.append((t.map[0], t.map[1]))
                j += 1
            # header + separator run up to the first body row (or the table end)
            first_body = rows[0][0] if rows else tok.map[1]
            out.append((tok.map[0], max(head_end, first_body), "table_row"))
            out.extend((a, b, "table_row") for a, b in rows)
            i = j
            continue
        i += 1
    return out


def markdown_blocks(
    text: str, *, page: int | None = None, base: int = 0
) -> tuple[list[Block], str | None]:
    """Blocks of Markdown `text` (offsets shifted by `base`, each on `page`) and its title
    (the first level-1 heading, else the first heading, else None).

    The Office loaders render Word and PowerPoint files as Markdown and read them with this,
    so their headings, lists and tables become the same heading paths and rows.
    """
    tokens = _parser().parse(text)
    line_starts = [0]
    for pos, ch in enumerate(text):
        if ch == "\n":
            line_starts.append(pos + 1)
    n_lines = len(line_starts)

    def offset(line: int) -> int:
        return line_starts[line] if line < n_lines else len(text)

    def add(kind: BlockKind, a: int, b: int, path: tuple[str, ...]) -> None:
        made = block(text, kind, a, b, path)
        if made is not None:
            if base or page is not None:
                made = made.model_copy(
                    update={"start": made.start + base, "end": made.end + base, "page": page}
                )
            blocks.append(made)

    atomic = _atomic_ranges(tokens)
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    first_heading: str | None = None
    h1: str | None = None
    ai = 0
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level != 0 or tok.nesting == -1 or not tok.map:
            i += 1
            continue
        a, b = tok.map
        if tok.type == "heading_open":
            level = int(tok.tag[1])
            title = _inline_text(tokens[i + 1]) or text[offset(a) : offset(b)].strip("# \n")
            while stack and stack[-1][0] >= level:
                stack.pop()
            if title:  # an empty heading (`#` alone) ends sections but names none
                stack.append((level, title))
            first_heading = first_heading or title
            if level == 1 and not h1:
                h1 = title
            add("heading", offset(a), offset(b), tuple(t for _, t in stack))
            i += 1
            continue
        path = tuple(t for _, t in stack)
        cursor = a
        while ai < len(atomic) and atomic[ai][0] < a:
            ai += 1  # ranges are in line order; earlier ones belong to earlier blocks
        while ai < len(atomic) and atomic[ai][1] <= b:
            ra, rb, kind = atomic[ai]
            ai += 1
            if ra > cursor:
                add("text", offset(cursor), offset(ra), path)
            add("code" if kind == "code" else "table_row", offset(ra), offset(rb), path)
            cursor = max(cursor, rb)
        if cursor < b:
            add("text", offset(cursor), offset(b), path)
        i += 1
    blocks.sort(key=lambda blk: blk.start)
    return blocks, h1 or first_heading


def load_markdown(src: SourceFile) -> list[ParsedDocument]:
    """Load one Markdown file into a single ParsedDocument."""
    meta, text = split_front_matter(decode_text(src.raw))
    if not text.strip():
        raise skip(SkipReason.EMPTY, "no text after the front matter")
    blocks, title = markdown_blocks(text)
    doc = make_document(src, text, title=title or src.path.stem, metadata=meta)
    return [ParsedDocument(document=doc, blocks=tuple(blocks))]
