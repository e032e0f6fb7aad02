"""One registry from file extension to loader; it drives both dispatch and error messages."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from citebound.contracts.ingest import ParsedDocument, SkippedFile, SkipReason
from citebound.errors import StageError
from citebound.ingest.html_loader import load_html
from citebound.ingest.limits import over_limit
from citebound.ingest.markdown_loader import load_markdown
from citebound.ingest.office_loader import LEGACY, load_docx, load_legacy, load_pptx, load_xlsx
from citebound.ingest.pdf_loader import load_pdf
from citebound.ingest.source import SourceFile, skip
from citebound.ingest.text_loader import iter_jsonl, load_text

Loader = Callable[[SourceFile], list[ParsedDocument]]

LOADERS: dict[str, Loader] = {
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".txt": load_text,
    ".text": load_text,
    ".html": load_html,
    ".htm": load_html,
    ".pdf": load_pdf,
    ".docx": load_docx,
    ".xlsx": load_xlsx,
    ".pptx": load_pptx,
}
JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
# Plain-text formats: their characters can be counted before parsing.
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".text", ".html", ".htm"})
SIDECAR_SUFFIX = ".meta.json"


def is_supported(path: Path) -> bool:
    """True for files a loader exists for (sidecars are metadata, not documents), and for
    the legacy Office formats, which are refused with a reason rather than ignored."""
    suffix = path.suffix.lower()
    return suffix in LOADERS or suffix in JSONL_SUFFIXES or suffix in LEGACY


def load_file(src: SourceFile, on_skip: Callable[[SkippedFile], None]) -> list[ParsedDocument]:
    """Load `src` with the loader for its extension.

    Raises:
        StageError: with a `SkipReason` as reason_code when the whole file must be skipped.
    """
    suffix = src.path.suffix.lower()
    if not src.raw.strip():
        raise skip(SkipReason.EMPTY, "file is empty")
    if suffix in JSONL_SUFFIXES:
        return _within_limits(src, iter_jsonl(src, on_skip))
    if suffix in TEXT_SUFFIXES and len(src.raw) > src.limits.max_document_chars:
        # Before parsing: a UTF-8 file has at most as many characters as bytes.
        chars = len(src.raw.decode("utf-8", errors="replace"))
        if chars > src.limits.max_document_chars:
            raise over_limit(
                "max_document_chars", f"text is {chars:,} characters",
                src.limits.max_document_chars,
            )  # fmt: skip
    loader = LOADERS.get(suffix) or (load_legacy if suffix in LEGACY else None)
    if loader is None:
        known = ", ".join(sorted([*LOADERS, *JSONL_SUFFIXES]))
        raise skip(SkipReason.UNSUPPORTED_TYPE, f"no loader for '{suffix}' (supported: {known})")
    try:
        if loader is load_pdf:  # reports pages without text and still ingests the rest
            return _within_limits(src, load_pdf(src, on_skip))
        return _within_limits(src, loader(src))
    except StageError:
        raise
    except MemoryError:
        raise over_limit(
            "max_worker_memory_mb", "parsing ran out of memory", src.limits.max_worker_memory_mb
        ) from None
    except RecursionError:
        raise skip(SkipReason.CORRUPT, "document is nested too deeply to parse") from None
    except Exception as err:  # a loader bug or a pathological file must not abort the run
        raise skip(SkipReason.CORRUPT, f"{type(err).__name__}: {err}") from None


def _within_limits(src: SourceFile, parsed: list[ParsedDocument]) -> list[ParsedDocument]:
    """`parsed`, or an `OVER_LIMIT` error when one document's text is over the limit."""
    most = src.limits.max_document_chars
    for p in parsed:
        if len(p.document.text) > most:
            raise over_limit(
                "max_document_chars", f"document text is {len(p.document.text):,} characters", most
            )
    return parsed
