"""A tiny, dependency-free, deterministic PDF writer for the bundled CX-9 quick reference.

Why hand-written: the demo must build its one PDF on a fresh machine with no extra package,
and the bytes must be identical on every run so ingestion hashes and page citations are stable.
The file is plain PDF 1.4: a catalog, a page tree, one page object and one uncompressed content
stream per page, the standard Helvetica Type1 font (no embedding needed), an /Info dictionary
without dates, and a classic xref table whose byte offsets are computed while writing.

Each page carries facts that appear on that page only, so a test can check that a citation
points at the right page.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PDF_FILENAME", "PDF_TITLE", "QUICK_REFERENCE_PAGES", "render_pdf", "write_sample_pdf"]

PDF_FILENAME = "cx9_quick_reference.pdf"
PDF_TITLE = "CX-9 Compressor Quick Reference"

# One tuple of text lines per page. ASCII only: Helvetica with WinAnsiEncoding covers it, and
# keeping to ASCII means pypdf extracts exactly these strings. Each fact is one full sentence
# on one line so the sentence splitter and the extractive answerer see it whole.
QUICK_REFERENCE_PAGES: tuple[tuple[str, ...], ...] = (
    (
        "CX-9 Compressor Quick Reference",
        "Page 1: Start-up and operating limits",
        "Do not start the CX-9 when the ambient temperature is below 5 degrees Celsius.",
        "After a cold start, run the CX-9 unloaded for 3 minutes before it loads.",
        "The oil level must be in the green band of the sight glass before start.",
        "The CX-9 must not be started more than 6 times per hour.",
    ),
    (
        "CX-9 Compressor Quick Reference",
        "Page 2: Safety devices and daily checks",
        "The CX-9 safety valve set pressure is 10.5 bar.",
        "Drain the condensate trap DV-2 at the start of every shift.",
        "Test the safety valve lifting lever once per week with the compressor loaded.",
        "Report every CX-9 trip to the control room on extension 4417.",
    ),
)

_PAGE_WIDTH = 612  # US Letter in points; any reader accepts it.
_PAGE_HEIGHT = 792
_LEFT = 72
_TOP = 740
_TITLE_SIZE = 16
_BODY_SIZE = 11
_LEADING = 18


def _escape(text: str) -> bytes:
    """Encode `text` as the body of a PDF literal string.

    Raises:
        ValueError: if `text` is not printable ASCII; we refuse rather than emit a page that a
            reader would show differently from what the tests expect.
    """
    if not all(" " <= ch <= "~" for ch in text):
        raise ValueError(f"PDF text must be printable ASCII: {text!r}")
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return escaped.encode("ascii")


def _content_stream(lines: tuple[str, ...]) -> bytes:
    """Content stream: the first line as a title, then one text line per entry."""
    parts = [b"BT", b"/F1 %d Tf" % _TITLE_SIZE, b"%d %d Td" % (_LEFT, _TOP)]
    for index, line in enumerate(lines):
        if index == 1:
            parts.append(b"/F1 %d Tf" % _BODY_SIZE)
        if index > 0:
            # A relative move down starts a new line; pypdf turns it into a newline.
            parts.append(b"0 -%d Td" % (_LEADING * (2 if index == 1 else 1)))
        parts.append(b"(" + _escape(line) + b") Tj")
    parts.append(b"ET")
    return b"\n".join(parts) + b"\n"


def render_pdf(pages: tuple[tuple[str, ...], ...], title: str) -> bytes:
    """Render `pages` (tuples of text lines) as PDF bytes; same input, same bytes.

    Args:
        pages: one tuple of lines per page; at least one page, each with at least one line.
        title: stored in the /Info dictionary.

    Returns:
        The complete PDF file.

    Raises:
        ValueError: on an empty page list, an empty page, or non-ASCII text.

    Example:
        >>> render_pdf((("Hello",),), "T")[:8]
        b'%PDF-1.4'
    """
    if not pages or any(not lines for lines in pages):
        raise ValueError("a PDF needs at least one page and every page needs a line of text")
    # Object numbers: 1 catalog, 2 page tree, 3 font, then (page, content) pairs, then info.
    page_ids = [4 + 2 * i for i in range(len(pages))]
    info_id = 4 + 2 * len(pages)
    kids = b" ".join(b"%d 0 R" % pid for pid in page_ids)
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % len(pages),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for pid, lines in zip(page_ids, pages, strict=True):
        stream = _content_stream(lines)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d]"
            b" /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>"
            % (_PAGE_WIDTH, _PAGE_HEIGHT, pid + 1)
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"endstream")
    # No /CreationDate or /ID: either would make two runs differ.
    objects.append(b"<< /Title (" + _escape(title) + b") /Producer (citebound sample_corpus) >>")

    # The second header line holds bytes above 127 so tools treat the file as binary.
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: list[int] = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref_at = len(out)
    out += b"xref\n0 %d\n" % (len(objects) + 1)
    # Each xref entry is exactly 20 bytes, including the two-byte " \n" line end.
    out += b"0000000000 65535 f \n"
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\n" % (len(objects) + 1, info_id)
    out += b"startxref\n%d\n%%%%EOF\n" % xref_at
    return bytes(out)


def write_sample_pdf(path: Path) -> Path:
    """Write the two-page "CX-9 Compressor Quick Reference" PDF to `path`.

    Missing parent folders are created. The bytes are identical on every call.

    Args:
        path: destination file (conventionally named `PDF_FILENAME`).

    Returns:
        `path`, for chaining.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     write_sample_pdf(Path(tmp) / PDF_FILENAME).stat().st_size > 0
        True
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(render_pdf(QUICK_REFERENCE_PAGES, PDF_TITLE))
    return path
