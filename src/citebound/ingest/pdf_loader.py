"""PDF loader on pypdf: text per page with page numbers; the outline gives heading paths.

`Document.text` is the pages' extracted text joined by a blank line; `page_offsets[i]` is
where page i+1 starts. A PDF that needs a password is skipped as ENCRYPTED (one that opens
with the empty password, i.e. only has permission flags, is read).

A page with no text layer (a scan) is read by OCR when the extra `ocr` is installed
(`ingest.ocr`); it keeps its page number and its chunks are marked `ocr` (the Sources line
says `OCR text`). Without the extra such pages are reported (`NO_TEXT`, naming the pages and
the extra) and the rest of the file is ingested; a PDF with no text at all is EMPTY, with
the same hint.
"""

from __future__ import annotations

import io
import logging
import re
import warnings
from collections.abc import Callable
from typing import Any

from citebound.contracts.ingest import Block, ParsedDocument, SkippedFile, SkipReason
from citebound.errors import StageError
from citebound.ingest import ocr
from citebound.ingest.limits import over_limit
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


def page_list(pages: list[int]) -> str:
    """`3`, `2, 5`, `1-4, 7`: page numbers as a person writes them."""
    runs: list[list[int]] = []
    for p in pages:
        if runs and p == runs[-1][-1] + 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def _content_bytes(page: Any) -> int:
    """Decompressed bytes of a page's content streams (pypdf keeps the decoded data, so a
    stream shared by many pages is inflated once, but read again for each page)."""
    from pypdf.generic import ArrayObject

    contents = page.get("/Contents")
    if contents is None:
        return 0
    obj = contents.get_object()
    streams = obj if isinstance(obj, ArrayObject) else [obj]
    return sum(len(s.get_object().get_data()) for s in streams)


def _extract_pages(reader: Any, src: SourceFile) -> list[str]:
    """Text per page, within `[ingest] max_pdf_pages` and `max_pdf_decompressed_bytes`, both
    checked before any text is extracted: the page count, then the content bytes of every
    page in turn (a PDF bomb, many pages sharing one huge Flate stream, is refused after
    inflating that stream once, instead of reading it for every page)."""
    limits = src.limits
    try:
        count = len(reader.pages)
        if count > limits.max_pdf_pages:
            raise over_limit("max_pdf_pages", f"the PDF has {count:,} pages", limits.max_pdf_pages)
        inflated = 0
        for number, page in enumerate(reader.pages, start=1):
            inflated += _content_bytes(page)
            if inflated > limits.max_pdf_decompressed_bytes:
                raise over_limit(
                    "max_pdf_decompressed_bytes",
                    f"pages 1-{number} of {count:,} hold {inflated:,} decompressed content bytes",
                    limits.max_pdf_decompressed_bytes,
                )
        return [page.extract_text() or "" for page in reader.pages]
    except StageError:
        raise
    except MemoryError:
        raise over_limit(
            "max_worker_memory_mb", "PDF text extraction ran out of memory",
            limits.max_worker_memory_mb,
        ) from None  # fmt: skip
    except Exception as err:
        raise skip(SkipReason.CORRUPT, f"text extraction failed: {err}") from None


def load_pdf(
    src: SourceFile, on_skip: Callable[[SkippedFile], None] | None = None
) -> list[ParsedDocument]:
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
        pages = _extract_pages(reader, src)
        blank = [i for i, p in enumerate(pages) if not p.strip()]
        ocr_pages: list[int] = []
        if blank and ocr.available():
            for i in blank:
                try:
                    pages[i] = ocr.page_text(reader.pages[i])
                except Exception as err:  # one unreadable image costs only its page
                    raise skip(SkipReason.CORRUPT, f"OCR of page {i + 1} failed: {err}") from None
                if pages[i].strip():
                    ocr_pages.append(i + 1)
            blank = [i for i in blank if not pages[i].strip()]
        outline = _outline_starts(reader)
        info_title = ""
        try:
            meta: Any = reader.metadata
            info_title = str(meta.get("/Title") or "") if meta else ""
        except Exception:
            info_title = ""
    pages = [p.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "") for p in pages]
    if blank:
        where = f"page{'s' if len(blank) > 1 else ''} {page_list([i + 1 for i in blank])}"
        hint = (
            "OCR found no text either"
            if ocr.available()
            else f"a scan? {ocr.ENABLE_HINT} reads such pages by OCR"
        )
        if len(blank) == len(pages):
            raise skip(SkipReason.EMPTY, f"no text layer on {where} ({hint})")
        verb, was = ("have", "were") if len(blank) > 1 else ("has", "was")
        if on_skip is not None:
            on_skip(
                SkippedFile(
                    source_path=src.source_path,
                    reason=SkipReason.NO_TEXT,
                    message=f"{where} of {len(pages)} {verb} no text layer and {was} not "
                    f"indexed ({hint})",
                )
            )

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
    return [ParsedDocument(document=doc, blocks=tuple(blocks), ocr_pages=tuple(ocr_pages))]
