"""PDF loader on pypdf: text per page with page numbers; the outline gives heading paths.

`Document.text` is the pages' extracted text joined by a blank line; `page_offsets[i]` is
where page i+1 starts. A PDF that needs a password is skipped as ENCRYPTED (one that opens
with the empty password, i.e. only has permission flags, is read). A PDF with no extractable
text (a scan) is skipped as EMPTY: citebound does no OCR.
"""

from __future__ import annotations

import io
import logging
import re
import warnings
from typing import Any

from citebound.contracts.ingest import Block, ParsedDocument, SkipReason
from citebound.ingest.source import SourceFile, make_document, paragraph_blocks, skip

PAGE_SEPARATOR = "\n\n"
_GENERATED_TITLE = re.compile(
    r"^(microsoft (word|powerpoint)\b|powerpoint presentation$|untitled\b)|\.(docx?|pptx?|odt)$",
    re.IGNORECASE,
)


def _outline_starts(reader: Any) -> list[tuple[int, tuple[str, ...]]]:
    """(0-based page, heading path) for every outline entry, in page order (stable)."""
    out: list[tuple[int, tuple[str, ...]]] = []

    def walk(items: list[Any], path: tuple[str, ...]) -> None:
        last: tuple[str, ...] | None = None
        for item in items:
            if isinstance(item, list):
                if last is not None:
                    walk(item, last)
                continue
            title = " ".join(str(getattr(item, "title", "") or "").split())
            if not title:
                continue
            last = (*path, title)
            page = reader.get_destination_page_number(item)
            if page is not None and page >= 0:
                out.append((page, last))

    try:
        walk(list(reader.outline), ())
    except Exception:  # a broken outline only costs us headings, never the text
        return []
    out.sort(key=lambda e: e[0])
    return out


def load_pdf(src: SourceFile) -> list[ParsedDocument]:
    """Load one PDF into a single ParsedDocument with page numbers on every block."""
    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pypdf warns on recoverable syntax quirks
        try:
            reader = PdfReader(io.BytesIO(src.raw))
        except Exception as err:
            raise skip(SkipReason.CORRUPT, f"not a readable PDF: {err}") from None
        if reader.is_encrypted:
            try:
                opened = bool(reader.decrypt(""))
            except Exception:
                opened = False
            if not opened:
                raise skip(SkipReason.ENCRYPTED, "PDF is password-protected; decrypt it first")
        try:
            pages = [page.extract_text() or "" for page in reader.pages]
        except Exception as err:
            raise skip(SkipReason.CORRUPT, f"text extraction failed: {err}") from None
        outline = _outline_starts(reader)
        info_title = ""
        try:
            meta: Any = reader.metadata
            info_title = str(meta.get("/Title") or "") if meta else ""
        except Exception:
            info_title = ""
    pages = [p.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "") for p in pages]
    if not any(p.strip() for p in pages):
        raise skip(SkipReason.EMPTY, "no extractable text (scanned PDF? OCR is not supported)")

    parts: list[str] = []
    offsets: list[int] = []
    blocks: list[Block] = []
    size = 0
    for index, page_text in enumerate(pages):
        if index:
            parts.append(PAGE_SEPARATOR)
            size += len(PAGE_SEPARATOR)
        offsets.append(size)
        parts.append(page_text)
        size += len(page_text)
    text = "".join(parts)
    o = 0
    path: tuple[str, ...] = ()
    for index, start in enumerate(offsets):
        while o < len(outline) and outline[o][0] <= index:
            path = outline[o][1]
            o += 1
        end = start + len(pages[index])
        blocks.extend(paragraph_blocks(text, start, end, path, index + 1))
    title = " ".join(info_title.split())
    if _GENERATED_TITLE.search(title):
        title = ""  # "Microsoft Word - x.docx" names the converter, not the document
    doc = make_document(src, text, title=title, metadata={}, page_offsets=offsets)
    return [ParsedDocument(document=doc, blocks=tuple(blocks))]
