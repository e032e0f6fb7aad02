"""Scanned PDFs: a page image rendered from text with Pillow, read by OCR (extra `ocr`) with its
page number and marked as OCR text; without the extra, ingest names the pages and the fix."""

from __future__ import annotations

import json
from collections.abc import Callable
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
    ["Relief valve", "The Boiler B-4 relief valve set pressure is 16 bar."],
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
    # In-process parsing: the monkeypatch does not reach the worker process PDFs go to.
    monkeypatch.setenv("CITEBOUND_INGEST_WORKER", "never")
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


@needs_ocr
@pytest.mark.slow
def test_one_folder_of_every_kind_answers_with_the_right_location(
    tmp_path: Path, make_pdf: Callable[..., Path]
) -> None:
    """The issue's acceptance: PDF, Word, Excel, PowerPoint, Markdown and a scanned PDF in one
    folder, one ingest; an Excel row, a Word step, a slide and a scanned page cited right."""
    pytest.importorskip("docx")
    pytest.importorskip("openpyxl")
    pytest.importorskip("pptx")
    from test_ingest_office import build_docx, build_pptx, build_xlsx

    docs = tmp_path / "plant"
    docs.mkdir()
    build_docx(docs / "procedure.docx")
    build_xlsx(docs / "parts.xlsx")
    build_pptx(docs / "training.pptx")
    make_pdf(
        docs / "manual.pdf", ["Chiller CH-3 overview.", "The CH-3 condenser water flow is 42 m3/h."]
    )
    scanned_pdf(docs / "boiler_scan.pdf", SCANNED)
    (docs / "notes.md").write_text("# Notes\n\nThe cooling tower fan runs at 1450 rpm.\n")
    (docs / "old.xls").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600)
    store = tmp_path / "store"
    report = ingest(docs, store)
    assert report["files_added"] == 6
    assert [(s["source_path"], s["reason"]) for s in report["skipped"]] == [  # type: ignore[union-attr, index]
        ("plant/old.xls", "UNSUPPORTED_TYPE")
    ]
    for question, fact, where in [
        ("What torque for the P-101 inlet flange bolt?", "45 Nm", "Parts > row 2 (plant/parts.xlsx)"),
        ("What torque for the HP-220 impeller nut?", "85 Nm", "Impeller replacement (plant/procedure.docx)"),
        ("How long is the CX-9 drain valve opened before a start?", "30 seconds", "slide 2 (plant/training.pptx)"),
        ("What is the CH-3 condenser water flow?", "42 m3/h", "p. 2 (plant/manual.pdf)"),
        ("What is the Boiler B-4 relief valve set pressure?", "16 bar", "p. 2, OCR text (plant/boiler_scan.pdf)"),
    ]:  # fmt: skip
        asked = CliRunner().invoke(main, ["ask", question, "--store", str(store)])
        assert asked.exit_code == 0, (question, asked.output)
        answer, sources = asked.output.split("Sources:")
        assert fact in answer, (question, answer)
        assert where in sources.strip().splitlines()[0], (question, sources)
