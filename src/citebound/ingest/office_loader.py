"""Word, Excel and PowerPoint loaders (extra `office`: python-docx, openpyxl, python-pptx).

- `.docx`: the body (paragraphs and tables, in order) is rendered as Markdown (headings from
  the `Heading N` / `Title` styles, numbered and bulleted lists with their numbers, tables as
  `| cell | cell |` rows) and read by the Markdown loader's block parser, so a Word file gets
  the same heading paths, list items and table rows as the Markdown file saying the same.
- `.pptx`: one page per slide (`page` = slide number, as a PDF page); the slide title is the
  heading, text frames become list items, tables rows, speaker notes a `Notes:` paragraph.
- `.xlsx`: one section per sheet; the first non-empty row names the columns and every later
  row is one record `Part: P-101 | Torque: 45 Nm` under heading path (sheet, `row N`), N the
  row number Excel shows, so a citation names the sheet and the row. Cached formula values
  are read (`data_only`), never formulas.

Refused per file, with a one-line reason (the rest of the folder still ingests): the legacy
binary formats `.doc`/`.xls`/`.ppt` (UNSUPPORTED_TYPE: save as the x format), a
password-protected file (ENCRYPTED: an OLE container instead of a ZIP package), a file that is
no readable package (CORRUPT), and any of these without the extra installed (UNSUPPORTED_TYPE,
naming `pip install 'citebound[office]'`).
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from datetime import date, datetime, time
from typing import Any

from citebound.contracts.ingest import Block, ParsedDocument, SkipReason
from citebound.ingest.markdown_loader import markdown_blocks
from citebound.ingest.source import SourceFile, make_document, skip

PAGE_SEPARATOR = "\n\n"
LEGACY = {".doc": ".docx", ".xls": ".xlsx", ".ppt": ".pptx"}
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_APP = {".docx": "Word", ".xlsx": "Excel", ".pptx": "PowerPoint"}
# A paragraph that Markdown would read as structure (a heading, list item, quote, rule, row,
# fence) is escaped so that it stays the text it is in Word.
_MD_SYNTAX = re.compile(
    r"^(#{1,6}(\s|$)|[-*+](\s|$)|\d{1,9}[.)](\s|$)|>|\||```|~~~|[-=_*]{3,}\s*$)"
)


def load_legacy(src: SourceFile) -> list[ParsedDocument]:
    """`.doc` / `.xls` / `.ppt`: refused with what to do instead."""
    suffix = src.path.suffix.lower()
    raise skip(
        SkipReason.UNSUPPORTED_TYPE,
        f"legacy binary {suffix} (Office 97-2003) is not read: save it as {LEGACY[suffix]}",
    )


def _package(src: SourceFile) -> io.BytesIO:
    """The file's bytes once they look like an OOXML package; else the reason it is refused."""
    suffix = src.path.suffix.lower()
    if src.raw.startswith(_OLE_MAGIC):
        raise skip(
            SkipReason.ENCRYPTED,
            f"{_APP[suffix]} file is password-protected; remove the password and save it again",
        )
    data = io.BytesIO(src.raw)
    if not zipfile.is_zipfile(data):
        raise skip(SkipReason.CORRUPT, f"not a readable {suffix} file (no ZIP package inside)")
    return data


def _missing_extra(suffix: str) -> Exception:
    return skip(
        SkipReason.UNSUPPORTED_TYPE,
        f"reading {suffix} needs the office extra: pip install 'citebound[office]'",
    )


def _clean(text: str) -> str:
    return " ".join(text.split())


def _paragraph_md(text: str) -> str:
    text = _clean(text)
    return "\\" + text if _MD_SYNTAX.match(text) else text


def _table_md(rows: list[list[str]]) -> str:
    """A Markdown table (first row the header), padded so no cell is lost."""
    rows = [r for r in rows if any(c for c in r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    lines = []
    for i, row in enumerate(rows):
        cells = [_clean(c).replace("|", "\\|") for c in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("|" + "---|" * width)
    return "\n".join(lines)


def _read_docx(data: io.BytesIO) -> Any:
    try:
        import docx
    except ImportError:
        raise _missing_extra(".docx") from None
    try:
        return docx.Document(data)
    except Exception as err:
        raise skip(SkipReason.CORRUPT, f"not a readable .docx: {_clean(str(err))}") from None


class _Numbering:
    """List numbers Word shows: counters per (numId, level); formats from numbering.xml."""

    def __init__(self, document: Any) -> None:
        self.formats: dict[tuple[str, int], str] = {}
        self.counters: dict[str, list[int]] = {}
        try:
            root = document.part.numbering_part.element
        except Exception:  # no numbering part: style names decide
            return
        ns = {"w": root.nsmap.get("w", "")}
        w = "{" + ns["w"] + "}"
        abstract = {}
        for ab in root.findall("w:abstractNum", ns):
            levels = {}
            for lvl in ab.findall("w:lvl", ns):
                fmt = lvl.find("w:numFmt", ns)
                levels[int(lvl.get(w + "ilvl", "0"))] = (
                    fmt.get(w + "val", "decimal") if fmt is not None else "decimal"
                )
            abstract[ab.get(w + "abstractNumId")] = levels
        for num in root.findall("w:num", ns):
            ref = num.find("w:abstractNumId", ns)
            levels = abstract.get(ref.get(w + "val") if ref is not None else None, {})
            for ilvl, fmt in levels.items():
                self.formats[(num.get(w + "numId", ""), ilvl)] = fmt

    def marker(self, paragraph: Any) -> tuple[str, int] | None:
        """(`1.` or `-`, level) for a list paragraph, None for any other."""
        num_id, level = _num_props(paragraph)
        style = str(getattr(paragraph.style, "name", "") or "")
        if num_id is None:
            if style.startswith("List Number"):
                num_id, fmt = "style:" + style, "decimal"
            elif style.startswith("List Bullet"):
                return "-", level
            else:
                return None
        else:
            fmt = self.formats.get((num_id, level), "decimal")
        if fmt in ("bullet", "none"):
            return "-", level
        counts = self.counters.setdefault(num_id, [])
        del counts[level + 1 :]  # a shallower item restarts the deeper levels
        counts.extend([0] * (level + 1 - len(counts)))
        counts[level] += 1
        return f"{counts[level]}.", level


def _num_props(paragraph: Any) -> tuple[str | None, int]:
    for owner in (paragraph._p, getattr(paragraph.style, "element", None)):
        ppr = getattr(owner, "pPr", None) if owner is not None else None
        num_pr = getattr(ppr, "numPr", None) if ppr is not None else None
        if num_pr is not None and num_pr.numId is not None:
            num_id = str(num_pr.numId.val)
            if num_id == "0":  # numId 0 switches numbering off
                return None, 0
            level = int(num_pr.ilvl.val) if num_pr.ilvl is not None else 0
            return num_id, level
    return None, 0


def _heading_level(paragraph: Any) -> int | None:
    name = str(getattr(paragraph.style, "name", "") or "")
    if name == "Title":
        return 1
    m = re.fullmatch(r"Heading (\d)", name)
    return min(int(m.group(1)), 6) if m else None


def docx_markdown(document: Any) -> str:
    """The body of a python-docx Document as Markdown (see the module docstring)."""
    from docx.table import Table

    numbering = _Numbering(document)
    parts: list[str] = []
    items: list[str] = []

    def flush() -> None:
        if items:
            parts.append("\n".join(items))
            items.clear()

    for item in document.iter_inner_content():
        if isinstance(item, Table):
            flush()
            table = _table_md([[cell.text for cell in row.cells] for row in item.rows])
            if table:
                parts.append(table)
            continue
        text = _clean(item.text)
        if not text:
            continue
        level = _heading_level(item)
        if level is not None:
            flush()
            parts.append("#" * level + " " + text)
            continue
        marker = numbering.marker(item)
        if marker is not None:
            items.append("   " * marker[1] + f"{marker[0]} {text}")
            continue
        flush()
        parts.append(_paragraph_md(text))
    flush()
    return "\n\n".join(parts) + "\n" if parts else ""


def load_docx(src: SourceFile) -> list[ParsedDocument]:
    """Load one Word file (see the module docstring)."""
    document = _read_docx(_package(src))
    text = docx_markdown(document)
    if not text.strip():
        raise skip(SkipReason.EMPTY, "Word file has no text")
    blocks, heading = markdown_blocks(text)
    title = _clean(str(document.core_properties.title or ""))
    doc = make_document(src, text, title=title or heading or src.path.stem, metadata={})
    return [ParsedDocument(document=doc, blocks=tuple(blocks))]


def _shapes(shapes: Any) -> Iterator[Any]:
    """Shapes in reading order (top to bottom, then left to right), groups opened."""

    def key(s: Any) -> tuple[int, int]:
        return (int(getattr(s, "top", 0) or 0), int(getattr(s, "left", 0) or 0))

    for shape in sorted(shapes, key=key):
        if hasattr(shape, "shapes"):  # a group
            yield from _shapes(shape.shapes)
        else:
            yield shape


def slide_markdown(slide: Any) -> str:
    """One slide as Markdown: `# title`, list items per text paragraph, tables, notes."""
    title_shape = slide.shapes.title
    parts: list[str] = []
    if title_shape is not None and _clean(title_shape.text_frame.text):
        parts.append("# " + _clean(title_shape.text_frame.text))
    for shape in _shapes(slide.shapes):
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        if getattr(shape, "has_table", False):
            rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
            table = _table_md(rows)
            if table:
                parts.append(table)
        elif getattr(shape, "has_text_frame", False):
            lines = [
                "  " * int(p.level or 0) + "- " + _clean("".join(r.text for r in p.runs))
                for p in shape.text_frame.paragraphs
                if _clean("".join(r.text for r in p.runs))
            ]
            if lines:
                parts.append("\n".join(lines))
    if slide.has_notes_slide:
        notes = _clean(slide.notes_slide.notes_text_frame.text or "")
        if notes:
            parts.append(_paragraph_md("Notes: " + notes))
    return "\n\n".join(parts)


def load_pptx(src: SourceFile) -> list[ParsedDocument]:
    """Load one PowerPoint file: one page per slide (see the module docstring)."""
    data = _package(src)
    try:
        from pptx import Presentation
    except ImportError:
        raise _missing_extra(".pptx") from None
    try:
        deck = Presentation(data)
        slides = [slide_markdown(slide) for slide in deck.slides]
        core_title = _clean(str(deck.core_properties.title or ""))
    except Exception as err:
        raise skip(SkipReason.CORRUPT, f"not a readable .pptx: {_clean(str(err))}") from None
    if not any(s.strip() for s in slides):
        raise skip(SkipReason.EMPTY, "presentation has no text")
    parts: list[str] = []
    offsets: list[int] = []
    blocks: list[Block] = []
    size = 0
    first_title: str | None = None
    for index, slide_text in enumerate(slides):
        if index:
            parts.append(PAGE_SEPARATOR)
            size += len(PAGE_SEPARATOR)
        offsets.append(size)
        slide_blocks, heading = markdown_blocks(slide_text, page=index + 1, base=size)
        blocks.extend(slide_blocks)
        first_title = first_title or heading
        parts.append(slide_text)
        size += len(slide_text)
    text = "".join(parts)
    title = core_title or first_title or src.path.stem
    doc = make_document(src, text, title=title, metadata={}, page_offsets=offsets)
    return [ParsedDocument(document=doc, blocks=tuple(blocks))]


def cell_text(value: object) -> str:
    """A cell value as Excel shows it: 45.0 -> `45`, a date -> `2024-03-01`."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime):
        if value.time() == time(0, 0):
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, date | time):
        return value.isoformat()
    return _clean(str(value))


def sheet_records(rows: Iterator[tuple[object, ...]]) -> Iterator[tuple[int, str]]:
    """(row number, `Column: value | ...`) for every data row; the first non-empty row names
    the columns (an unnamed column is called by its letter)."""
    from openpyxl.utils import get_column_letter

    header: list[str] | None = None
    for number, row in enumerate(rows, start=1):
        cells = [cell_text(v) for v in row]
        if not any(cells):
            continue
        if header is None:
            header = [c or get_column_letter(i + 1) for i, c in enumerate(cells)]
            continue
        names = header + [get_column_letter(i + 1) for i in range(len(header), len(cells))]
        record = " | ".join(f"{names[i]}: {c}" for i, c in enumerate(cells) if c)
        yield number, record


def load_xlsx(src: SourceFile) -> list[ParsedDocument]:
    """Load one Excel workbook: a section per sheet, a record per row (module docstring)."""
    data = _package(src)
    try:
        import openpyxl
    except ImportError:
        raise _missing_extra(".xlsx") from None
    parts: list[str] = []
    blocks: list[Block] = []
    size = 0
    try:
        book = openpyxl.load_workbook(data, read_only=True, data_only=True)
        try:
            for sheet in book.worksheets:
                if not hasattr(sheet, "iter_rows"):
                    continue  # a chart sheet holds no cells
                name = _clean(str(sheet.title))
                for number, record in sheet_records(sheet.iter_rows(min_row=1, values_only=True)):
                    if parts:
                        sep = "\n" if blocks and blocks[-1].heading_path[0] == name else "\n\n"
                        parts.append(sep)
                        size += len(sep)
                    parts.append(record)
                    blocks.append(
                        Block(
                            kind="table_row",
                            start=size,
                            end=size + len(record),
                            heading_path=(name, f"row {number}"),
                        )
                    )
                    size += len(record)
            core_title = _clean(str(book.properties.title or ""))
        finally:
            book.close()
    except Exception as err:
        if getattr(err, "reason_code", None) is not None:
            raise
        raise skip(SkipReason.CORRUPT, f"not a readable .xlsx: {_clean(str(err))}") from None
    if not blocks:
        raise skip(SkipReason.EMPTY, "workbook has no rows below a header row")
    text = "".join(parts) + "\n"
    doc = make_document(src, text, title=core_title or src.path.stem, metadata={})
    return [ParsedDocument(document=doc, blocks=tuple(blocks))]
