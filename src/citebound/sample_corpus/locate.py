"""Where the bundled sample corpus lives, and how to lay it out in a folder you own."""

from __future__ import annotations

import atexit
import contextlib
import functools
import shutil
import tempfile
from importlib.resources import files
from pathlib import Path

from citebound.sample_corpus.pdf import PDF_FILENAME, write_sample_pdf

__all__ = ["copy_sample_corpus", "corpus_dir", "markdown_paths"]

# Keeps a temporary extraction alive for the life of the process when the package is not a
# plain folder (e.g. imported from a zip); closed at exit so nothing is left behind.
_EXTRACTED = contextlib.ExitStack()
atexit.register(_EXTRACTED.close)


@functools.cache
def corpus_dir() -> Path:
    """Folder holding the bundled sample corpus (the Markdown files of this package).

    Works from a source checkout and from an installed wheel. The PDF is not in the folder:
    build it with `write_sample_pdf`, or use `copy_sample_corpus`.

    Returns:
        A real filesystem folder, valid until the process exits.

    Example:
        >>> sorted(p.name for p in corpus_dir().glob("hp220_*.md"))[0]
        'hp220_impeller_procedure.md'
    """
    root = files("citebound.sample_corpus")
    if isinstance(root, Path):
        # A regular installed or source package is already a folder: no copy needed.
        return root
    # Zip or other non-folder import. `importlib.resources.as_file` only accepts directories
    # from Python 3.12 on and we support 3.11, so the documents are extracted one by one.
    folder = Path(_EXTRACTED.enter_context(tempfile.TemporaryDirectory(prefix="citebound-")))
    for entry in root.iterdir():
        if entry.is_file() and entry.name.endswith(".md"):
            (folder / entry.name).write_bytes(entry.read_bytes())
    return folder


def markdown_paths() -> list[Path]:
    """The bundled Markdown documents, sorted by file name (a total order: names are unique)."""
    return sorted(corpus_dir().glob("*.md"), key=lambda p: p.name)


def copy_sample_corpus(dest: Path) -> list[Path]:
    """Copy every Markdown document into `dest` and write the PDF there too.

    Why: ingestion should see only documents, not this package's Python modules, and the PDF
    has to be generated somewhere writable.

    Args:
        dest: target folder; created if missing. Existing files of the same name are replaced.

    Returns:
        The written files, sorted by name.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     names = [p.name for p in copy_sample_corpus(Path(tmp))]
        >>> PDF_FILENAME in names and len(names) >= 16
        True
    """
    dest.mkdir(parents=True, exist_ok=True)
    written = [Path(shutil.copyfile(src, dest / src.name)) for src in markdown_paths()]
    written.append(write_sample_pdf(dest / PDF_FILENAME))
    return sorted(written, key=lambda p: p.name)
