"""Fixtures for ingestion tests: a real SQLite store, PDFs built with fpdf2, file helpers."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from citebound.contracts.ingest import ParsedDocument, SkippedFile
from citebound.ingest.loaders import load_file
from citebound.ingest.source import SourceFile
from citebound.store import SqliteStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(tmp_path / "store")
    yield s
    s.close()


def build_pdf(
    path: Path,
    pages: list[str],
    *,
    sections: list[str] | None = None,
    user_password: str | None = None,
    owner_password: str | None = None,
) -> Path:
    """Write a PDF with one page per entry of `pages` (optionally one outline entry each)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for i, text in enumerate(pages):
        pdf.add_page()
        if sections:
            pdf.start_section(sections[i], level=0)
        if text:
            pdf.multi_cell(0, 8, text)
    if owner_password is not None:
        pdf.set_encryption(owner_password=owner_password, user_password=user_password)
    pdf.output(str(path))
    return path


@pytest.fixture
def make_pdf() -> Callable[..., Path]:
    return build_pdf


def load(path: Path, collection: str = "default") -> tuple[list[ParsedDocument], list[SkippedFile]]:
    """Run the loader for `path` the way ingest does; returns parsed documents and record skips."""
    raw = path.read_bytes()
    skips: list[SkippedFile] = []
    src = SourceFile(
        path, f"{path.parent.name}/{path.name}", collection, raw, hashlib.sha256(raw).hexdigest()
    )
    return load_file(src, skips.append), skips


@pytest.fixture
def loader() -> Callable[..., tuple[list[ParsedDocument], list[SkippedFile]]]:
    return load
