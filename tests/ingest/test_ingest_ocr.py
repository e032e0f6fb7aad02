"""Scanned PDFs: a page image rendered from text with Pillow, read by OCR (extra `ocr`) with its
page number and marked as OCR text; without the extra, ingest names the pages and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citebound.cli import main
from citebound.ingest import ocr
from citebound.store import SqliteStore

PIL = pytest.importorskip("PIL", reason="Pillow renders the scanned pages")
from PIL import Image, ImageDraw, ImageFont  # noqa: E402

SCANNED = [
    ["Boiler B-4 daily checks.", "Blow down the gauge glass every shift."],
    ["Boiler B-4 relief valve.", "The relief valve set pressure is 16 bar."],
]


def scan(lines: list[str]) -> Image.Image:
    """A page image as a scanner gives it: black text on white, no text layer."""
    img = Image.new("L", (1240, 1754), 255)
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=40)
    for i, line in enumerate(lines):
        draw.text((100, 150 + 90 * i), line, fill=0, font=font)
    return img


def scanned_pdf(path: Path, pages: list[list[str]]) -> Path:
    first, *rest = [scan(p) for p in pages]
    first.save(path, "PDF", resolution=150, save_all=True, append_images=rest)
    return path


def mixed_pdf(path: Path, tmp_path: Path) -> Path:
    """Page 1 has a text layer, page 2 is a scanned image."""
    from fpdf import FPDF

    image = tmp_path / "page2.png"
    scan(SCANNED[1]).save(image)
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(0, 8, "Boiler B-4 manual. The feed pump is the FP-2.")
    pdf.add_page()
    pdf.image(str(image), x=0, y=0, w=210)
    pdf.output(str(path))
    return path


def ingest(docs: Path, store: Path) -> dict[str, object]:
    result = CliRunner().invoke(
        main, ["ingest", str(docs), "--store", str(store), "--json", "--collection", "boiler"]
    )
    assert result.exit_code == 0, result.output
    report: dict[str, object] = json.loads(result.output)
    return report


def test_without_the_extra_ingest_names_the_pages_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ocr, "available", lambda: False)
    docs = tmp_path / "docs"
    docs.mkdir()
    scanned_pdf(docs / "scan.pdf", SCANNED)
    mixed_pdf(docs / "mixed.pdf", tmp_path)
    report = ingest(docs, tmp_path / "store")
    skipped = {(s["source_path"], s["reason"]): s["message"] for s in report["skipped"]}  # type: ignore[union-attr, index]
    assert skipped == {
        ("docs/mixed.pdf", "NO_TEXT"): "page 2 of 2 has no text layer and was not indexed "
        "(a scan? pip install 'citebound[ocr]' reads such pages by OCR)",
        ("docs/scan.pdf", "EMPTY"): "no text layer on pages 1-2 "
        "(a scan? pip install 'citebound[ocr]' reads such pages by OCR)",
    }
    assert report["files_added"] == 1  # the mixed PDF's text page is ingested


needs_ocr = pytest.mark.skipif(not ocr.available(), reason="the ocr extra is not installed")


@needs_ocr
@pytest.mark.slow
def test_scanned_pages_are_read_by_ocr_cited_by_page_and_marked(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    scanned_pdf(docs / "scan.pdf", SCANNED)
    mixed_pdf(docs / "mixed.pdf", tmp_path)
    (docs / "notes.md").write_text("# Notes\n\nThe cooling tower fan runs at 1450 rpm.\n")
    store = tmp_path / "store"
    report = ingest(docs, store)
    assert report["skipped"] == [] and report["files_added"] == 3
    with SqliteStore(store) as s:
        chunks = {c.text: c for c in s.iter_chunks("boiler")}
    relief = [c for t, c in chunks.items() if "16 bar" in t]
    assert relief and all(c.ocr and c.page == 2 for c in relief)
    assert not any(c.ocr for t, c in chunks.items() if "FP-2" in t)  # the text layer page
    runner = CliRunner()
    asked = runner.invoke(main, ["ask", "What is the Boiler B-4 relief valve set pressure?",
                                 "--store", str(store)])  # fmt: skip
    assert asked.exit_code == 0, asked.output
    answer, sources = asked.output.split("Sources:")
    assert "16 bar" in answer
    first = sources.strip().splitlines()[0]
    assert "p. 2, OCR text" in first and ("docs/scan.pdf" in first or "docs/mixed.pdf" in first)
    as_json = runner.invoke(main, ["ask", "What is the Boiler B-4 relief valve set pressure?",
                                   "--store", str(store), "--json"])  # fmt: skip
    citation = json.loads(as_json.output)["citations"][0]
    assert (citation["page"], citation["ocr"]) == (2, True)
