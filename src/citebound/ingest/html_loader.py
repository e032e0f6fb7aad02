"""HTML loader on the stdlib parser: h1-h6 give the heading path; script and style are dropped.

`Document.text` is the extracted text: one paragraph per block element separated by a blank
line, `<pre>` kept verbatim (an atomic code block), and each table row on its own line with
cells joined by ` | ` (an atomic table_row block).
"""

from __future__ import annotations

from html.parser import HTMLParser

from citebound.contracts.ingest import Block, BlockKind, ParsedDocument, SkipReason
from citebound.ingest.source import SourceFile, block, decode_text, make_document, skip

_DROP = frozenset({"script", "style", "noscript", "template", "svg", "math", "iframe", "object"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCK = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "ul", "ol",
        "li", "dl", "dt", "dd", "blockquote", "figure", "figcaption", "form", "address", "hr",
        "br", "table", "thead", "tbody", "tfoot", "caption", "details", "summary", "body",
    }
)  # fmt: skip


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.size = 0
        self.blocks: list[Block] = []
        self.buf: list[str] = []
        self.kind: BlockKind = "text"
        self.stack: list[tuple[int, str]] = []
        self.drop_depth = 0
        self.pre_depth = 0
        self.in_title = False
        self.title = ""
        self.first_h1: str | None = None
        self.row: list[str] | None = None
        self.cell: list[str] | None = None

    # -- output -------------------------------------------------------------------------
    def _emit(self, content: str, kind: BlockKind) -> None:
        if not content.strip():
            return
        sep = "\n" if kind == "table_row" and self.kind == "table_row" else "\n\n"
        if self.out:
            self.out.append(sep)
            self.size += len(sep)
        start = self.size
        self.out.append(content)
        self.size += len(content)
        self.kind = kind
        path = tuple(t for _, t in self.stack)
        b = block(content, kind, 0, len(content), path)
        if b is not None:  # offsets relative to `content`, shifted to the document
            self.blocks.append(
                b.model_copy(update={"start": start + b.start, "end": start + b.end})
            )

    def flush(self) -> None:
        raw = "".join(self.buf)
        self.buf = []
        self._emit(" ".join(raw.split()), "text")

    # -- parser callbacks ---------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROP:
            self.drop_depth += 1
        elif tag == "title":
            self.in_title = True
        elif self.pre_depth:
            if tag == "br":
                self.buf.append("\n")  # inside <pre> markup never breaks the block
        elif tag in _HEADINGS or tag in _BLOCK or tag == "pre":
            self.flush()
            if tag == "pre":
                self.pre_depth += 1
        elif tag == "tr":
            self.flush()
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROP:
            self.drop_depth = max(0, self.drop_depth - 1)
        elif tag == "title":
            self.in_title = False
        elif self.pre_depth and tag != "pre":
            return
        elif tag in _HEADINGS:
            title = " ".join("".join(self.buf).split())
            self.buf = []
            if title:
                level = _HEADINGS[tag]
                while self.stack and self.stack[-1][0] >= level:
                    self.stack.pop()
                self.stack.append((level, title))
                if level == 1 and self.first_h1 is None:
                    self.first_h1 = title
                self._emit(title, "heading")
        elif tag == "pre":
            content = "".join(self.buf).strip("\n")
            self.buf = []
            self.pre_depth = max(0, self.pre_depth - 1)
            self._emit(content, "code")
        elif tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self._emit(" | ".join(self.row), "table_row")
            self.row = None
        elif tag in _BLOCK:
            self.flush()

    def handle_data(self, data: str) -> None:
        if self.drop_depth:
            return
        if self.in_title:
            self.title += data
        elif self.cell is not None:
            self.cell.append(data)
        elif self.row is None:
            self.buf.append(data)


def load_html(src: SourceFile) -> list[ParsedDocument]:
    """Load one HTML file into a single ParsedDocument."""
    parser = _Extractor()
    parser.feed(decode_text(src.raw))
    parser.close()
    parser.flush()
    text = "".join(parser.out)
    if not text.strip():
        raise skip(SkipReason.EMPTY, "no visible text in the HTML")
    title = " ".join(parser.title.split()) or parser.first_h1 or src.path.stem
    doc = make_document(src, text, title=title, metadata={})
    return [ParsedDocument(document=doc, blocks=tuple(parser.blocks))]
