"""Word, Excel and PowerPoint files built with python-docx, openpyxl and python-pptx: loaded,
ingested next to Markdown, asked, and cited with their section, sheet/row and slide."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from citebound.cli import main
from citebound.contracts.ingest import ParsedDocument, SkipReason
from citebound.errors import StageError
from citebound.ingest.loaders import load_file
from citebound.ingest.source import SourceFile

docx = pytest.importorskip("docx")
openpyxl = pytest.importorskip("openpyxl")
pptx = pytest.importorskip("pptx")


def build_docx(path: Path) -> Path:
    doc = docx.Document()
    doc.add_heading("HP-220 Pump Service Procedure", level=1)
    doc.add_paragraph("This procedure covers the HP-220 centrifugal pump.")
    doc.add_heading("Impeller replacement", level=2)
    doc.add_paragraph("Follow these steps:")
    doc.add_paragraph("Isolate the pump and drain the casing.", style="List Number")
    doc.add_paragraph("Remove the six volute bolts.", style="List Number")
    doc.add_paragraph(
        "Torque the impeller nut to 85 Nm with a calibrated wrench.", style="List Number"
    )
    doc.add_heading("Seal kit", level=2)
    table = doc.add_table(rows=3, cols=2)
    for r, (a, b) in enumerate(
        [("Item", "Part number"), ("Mechanical seal", "MS-4410"), ("O-ring", "OR-22")]
    ):
        table.cell(r, 0).text = a
        table.cell(r, 1).text = b
    doc.save(str(path))
    return path


def build_xlsx(path: Path) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Parts"
    sheet.append(["Part", "Description", "Torque"])
    sheet.append(["P-101", "Inlet flange bolt", "45 Nm"])
    sheet.append(["P-102", "Bearing housing cap screw", 60.0])
    log = book.create_sheet("Inspections")
    log.append(["Date", "Inspector", "Finding"])
    for col, value in enumerate(
        ["2024-03-01", "R. Okafor", "Gearbox GB-7 oil level below the sight glass mark"], 1
    ):
        log.cell(row=4, column=col, value=value)  # row 3 left empty: numbers are Excel's
    book.save(str(path))
    return path


def build_pptx(path: Path) -> Path:
    deck = pptx.Presentation()
    layout = deck.slide_layouts[1]  # title and content
    for title, body in [
        ("Lockout basics", "Every energy source is isolated before work starts."),
        ("Compressor CX-9 start-up", "Open the drain valve for 30 seconds before every start."),
    ]:
        slide = deck.slides.add_slide(layout)
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = body
    deck.slides[1].notes_slide.notes_text_frame.text = "Trainers demonstrate the drain valve."
    deck.save(str(path))
    return path


def _load(path: Path) -> ParsedDocument:
    src = SourceFile(path, f"docs/{path.name}", "c", path.read_bytes(), "sha", {})
    (parsed,) = load_file(src, lambda s: None)
    return parsed


def _blocks(parsed: ParsedDocument) -> list[tuple[str, tuple[str, ...], int | None, str]]:
    text = parsed.document.text
    return [(b.kind, b.heading_path, b.page, text[b.start : b.end]) for b in parsed.blocks]


def test_docx_gives_the_markdown_headings_list_and_rows(tmp_path: Path) -> None:
    parsed = _load(build_docx(tmp_path / "procedure.docx"))
    assert parsed.document.title == "HP-220 Pump Service Procedure"
    blocks = _blocks(parsed)
    proc = ("HP-220 Pump Service Procedure",)
    assert (
        "text",
        (*proc, "Impeller replacement"),
        None,
        "1. Isolate the pump and drain the casing.\n2. Remove the six volute bolts.\n"
        "3. Torque the impeller nut to 85 Nm with a calibrated wrench.",
    ) in blocks
    rows = [(p, t) for k, p, _, t in blocks if k == "table_row"]
    assert rows[-1] == ((*proc, "Seal kit"), "| O-ring | OR-22 |")
    # the same Markdown written by hand gives the same heading paths and rows
    md = tmp_path / "procedure.md"
    md.write_text(parsed.document.text, encoding="utf-8")
    assert [(k, p) for k, p, _, _ in _blocks(_load(md))] == [(k, p) for k, p, _, _ in blocks]


def test_xlsx_one_record_per_row_with_sheet_and_row_number(tmp_path: Path) -> None:
    parsed = _load(build_xlsx(tmp_path / "parts.xlsx"))
    assert [(p, t) for _, p, _, t in _blocks(parsed)] == [
        (("Parts", "row 2"), "Part: P-101 | Description: Inlet flange bolt | Torque: 45 Nm"),
        (("Parts", "row 3"), "Part: P-102 | Description: Bearing housing cap screw | Torque: 60"),
        (
            ("Inspections", "row 4"),
            "Date: 2024-03-01 | Inspector: R. Okafor | Finding: Gearbox GB-7 oil level below "
            "the sight glass mark",
        ),
    ]


def test_pptx_slides_are_pages(tmp_path: Path) -> None:
    parsed = _load(build_pptx(tmp_path / "training.pptx"))
    assert len(parsed.document.page_offsets) == 2
    blocks = _blocks(parsed)
    assert ("text", ("Compressor CX-9 start-up",), 2,
            "- Open the drain valve for 30 seconds before every start.") in blocks  # fmt: skip
    assert blocks[-1][2:] == (2, "Notes: Trainers demonstrate the drain valve.")


@pytest.mark.parametrize(
    ("name", "raw", "reason", "message"),
    [
        ("old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600, SkipReason.UNSUPPORTED_TYPE,
         "legacy binary .doc (Office 97-2003) is not read: save it as .docx"),
        ("old.xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600, SkipReason.UNSUPPORTED_TYPE,
         "save it as .xlsx"),
        ("locked.xlsx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600, SkipReason.ENCRYPTED,
         "Excel file is password-protected; remove the password and save it again"),
        ("broken.docx", b"this is not a zip package", SkipReason.CORRUPT,
         "not a readable .docx file (no ZIP package inside)"),
        ("broken.pptx", b"PK\x03\x04 truncated", SkipReason.CORRUPT, "not a readable .pptx"),
    ],
)  # fmt: skip
def test_refused_office_files(
    tmp_path: Path, name: str, raw: bytes, reason: SkipReason, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(raw)
    with pytest.raises(StageError, match=re.escape(message)) as info:
        _load(path)
    assert info.value.reason_code == reason
    assert "\n" not in str(info.value)


def test_a_zip_that_is_no_workbook_is_corrupt(tmp_path: Path) -> None:
    import zipfile

    path = tmp_path / "fake.xlsx"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("hello.txt", "hi")
    with pytest.raises(StageError, match=r"not a readable \.xlsx") as info:
        _load(path)
    assert info.value.reason_code == SkipReason.CORRUPT


@pytest.fixture(scope="module")
def mixed_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A folder of Markdown, Word, Excel, PowerPoint and broken files, ingested once."""
    root = tmp_path_factory.mktemp("office")
    docs = root / "plant"
    docs.mkdir()
    build_docx(docs / "procedure.docx")
    build_xlsx(docs / "parts.xlsx")
    build_pptx(docs / "training.pptx")
    (docs / "notes.md").write_text("# Notes\n\nThe cooling tower fan runs at 1450 rpm.\n")
    (docs / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600)
    (docs / "locked.docx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600)
    (docs / "broken.xlsx").write_bytes(b"garbage")
    store = root / "store"
    result = CliRunner().invoke(
        main, ["ingest", str(docs), "--store", str(store), "--collection", "plant", "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    return store, result.output


def test_mixed_folder_ingests_and_refuses_only_the_broken_files(
    mixed_store: tuple[Path, str],
) -> None:
    _, output = mixed_store
    assert "7 files (4 added" in output and "3 skipped" in output
    assert "plant/old.doc  UNSUPPORTED_TYPE  legacy binary .doc" in output
    assert "plant/locked.docx  ENCRYPTED  Word file is password-protected" in output
    assert "plant/broken.xlsx  CORRUPT  not a readable .xlsx file" in output


@pytest.mark.parametrize(
    ("question", "fact", "source"),
    [
        ("What torque for the P-101 inlet flange bolt?", "45 Nm",
         "Parts > row 2 (plant/parts.xlsx)"),
        ("What torque for the HP-220 impeller nut?", "85 Nm",
         "HP-220 Pump Service Procedure, Impeller replacement (plant/procedure.docx)"),
        ("How long is the CX-9 drain valve opened before a start?", "30 seconds",
         "Compressor CX-9 start-up, slide 2 (plant/training.pptx)"),
    ],
)  # fmt: skip
def test_answers_cite_row_section_and_slide(
    mixed_store: tuple[Path, str], question: str, fact: str, source: str
) -> None:
    store, _ = mixed_store
    result = CliRunner().invoke(
        main, ["ask", question, "--store", str(store), "--collection", "plant"]
    )
    assert result.exit_code == 0, result.output
    answer, sources = result.output.split("Sources:")
    assert fact in answer
    assert source in sources.splitlines()[1], sources


def test_without_the_extra_office_files_say_how_to_enable_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    path = build_docx(tmp_path / "p.docx")
    monkeypatch.setitem(sys.modules, "docx", None)  # import docx now raises ImportError
    with pytest.raises(StageError, match=r"pip install 'citebound\[office\]'") as info:
        _load(path)
    assert info.value.reason_code == SkipReason.UNSUPPORTED_TYPE
    assert hashlib.sha256(path.read_bytes()).hexdigest()  # the file itself is intact
