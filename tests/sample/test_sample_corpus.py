"""The bundled sample corpus: front matter, structure, the generated PDF and the demo questions."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from collections import Counter
from importlib.resources import files
from pathlib import Path

import pydantic
import pypdf
import pytest

import citebound
from citebound.sample_corpus import (
    DEMO_QUESTIONS,
    PDF_FILENAME,
    DemoQuestion,
    copy_sample_corpus,
    corpus_dir,
    markdown_paths,
    write_sample_pdf,
)
from citebound.sample_corpus.pdf import QUICK_REFERENCE_PAGES, render_pdf
from citebound.text import split_sentences

ALLOWED_TYPES = {
    "manual",
    "procedure",
    "maintenance_report",
    "incident_report",
    "engineering_doc",
    "specification",
}
EQUIPMENT = {"HP-220", "CX-9", "VT-40", "GB-7", "ESD-3"}
KEYS = ["title", "knowledge_type", "equipment_id", "event_date"]


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Strict parser for the simple form: `---`, `key: value` lines, `---`."""
    lines = text.split("\n")
    assert lines[0] == "---", "first line must be ---"
    end = lines.index("---", 1)
    meta: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(": ")
        assert sep and re.fullmatch(r"[a-z_]+", key) and value.strip() == value and value, line
        assert key not in meta, f"duplicate key {key}"
        meta[key] = value
    return meta, "\n".join(lines[end + 1 :])


def pdf_page_texts(path: Path) -> list[str]:
    with path.open("rb") as fh:
        reader = pypdf.PdfReader(fh, strict=True)
        return [page.extract_text() for page in reader.pages]


@pytest.fixture(scope="module")
def docs() -> dict[str, tuple[dict[str, str], str]]:
    return {p.name: parse_front_matter(p.read_text(encoding="utf-8")) for p in markdown_paths()}


@pytest.fixture(scope="module")
def pdf_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_pdf(tmp_path_factory.mktemp("pdf") / PDF_FILENAME)


# --- Markdown documents -------------------------------------------------------------------


def test_corpus_has_about_fifteen_documents_covering_every_type_and_machine(
    docs: dict[str, tuple[dict[str, str], str]],
) -> None:
    assert 15 <= len(docs) <= 18
    assert {meta["knowledge_type"] for meta, _ in docs.values()} == ALLOWED_TYPES
    assert {meta["equipment_id"] for meta, _ in docs.values()} == EQUIPMENT


def test_every_document_has_exactly_the_four_front_matter_keys(
    docs: dict[str, tuple[dict[str, str], str]],
) -> None:
    preset = tomllib.loads(
        (files("citebound") / "presets" / "strict-v1.toml").read_text(encoding="utf-8")
    )
    # The strict preset must accept every type we ship, or the demo would filter documents out.
    assert set(preset["allowed_knowledge_types"]) >= ALLOWED_TYPES
    for name, (meta, _) in docs.items():
        assert list(meta) == KEYS, name
        assert meta["knowledge_type"] in ALLOWED_TYPES, name
        assert meta["equipment_id"] in EQUIPMENT, name
        assert dt.date.fromisoformat(meta["event_date"]).isoformat() == meta["event_date"], name
        assert name.startswith(meta["equipment_id"].replace("-", "").lower() + "_"), name


def test_titles_are_unique_and_match_the_first_heading(
    docs: dict[str, tuple[dict[str, str], str]],
) -> None:
    titles = Counter(meta["title"] for meta, _ in docs.values())
    assert [t for t, n in titles.items() if n > 1] == []
    for name, (meta, body) in docs.items():
        first_heading = next(line for line in body.split("\n") if line.startswith("#"))
        assert first_heading == f"# {meta['title']}", name


def test_sections_are_numbered_and_length_is_150_to_500_words(
    docs: dict[str, tuple[dict[str, str], str]],
) -> None:
    for name, (_, body) in docs.items():
        headings = [line for line in body.split("\n") if line.startswith("##")]
        assert len(headings) >= 3, name
        for heading in headings:
            assert re.fullmatch(r"## \d+ \S.*|### \d+\.\d+ \S.*", heading), (name, heading)
        # Subsection numbers must belong to the section they sit in (4.3 under ## 4).
        section = ""
        for heading in headings:
            number = heading.split(" ")[1]
            if heading.startswith("## "):
                section = number
            else:
                assert number.split(".")[0] == section, (name, heading)
        assert 150 <= len(body.split()) <= 500, (name, len(body.split()))


def test_corpus_contains_a_table_and_exactly_one_planted_injection(
    docs: dict[str, tuple[dict[str, str], str]],
) -> None:
    assert sum("|---|" in body for _, body in docs.values()) >= 2
    injected = [n for n, (_, b) in docs.items() if "ignore previous instructions" in b.lower()]
    assert injected == ["hp220_service_report_2025-02-18.md"]


# --- PDF ----------------------------------------------------------------------------------


def test_pdf_is_byte_identical_on_two_calls(tmp_path: Path) -> None:
    first = write_sample_pdf(tmp_path / "a" / PDF_FILENAME).read_bytes()
    second = write_sample_pdf(tmp_path / "b" / PDF_FILENAME).read_bytes()
    assert first == second
    assert first.startswith(b"%PDF-1.4\n") and first.endswith(b"%%EOF\n")


def test_pdf_xref_offsets_point_at_their_objects(pdf_path: Path) -> None:
    data = pdf_path.read_bytes()
    startxref = int(data.rsplit(b"startxref\n", 1)[1].split(b"\n")[0])
    assert data[startxref:].startswith(b"xref\n0 ")
    entries = re.findall(rb"(\d{10}) 00000 n \n", data[startxref:])
    assert len(entries) == 2 + 1 + 2 * len(QUICK_REFERENCE_PAGES) + 1
    for number, offset in enumerate(entries, start=1):
        assert data[int(offset) :].startswith(b"%d 0 obj\n" % number)


def test_pypdf_extracts_each_page_separately(pdf_path: Path) -> None:
    with pdf_path.open("rb") as fh:
        reader = pypdf.PdfReader(fh, strict=True)
        assert reader.metadata is not None
        assert reader.metadata.title == "CX-9 Compressor Quick Reference"
        texts = [page.extract_text() for page in reader.pages]
    assert len(texts) == 2
    assert texts[0].split("\n") == list(QUICK_REFERENCE_PAGES[0])
    assert texts[1].split("\n") == list(QUICK_REFERENCE_PAGES[1])
    assert "5 degrees Celsius" in texts[0] and "5 degrees Celsius" not in texts[1]
    assert "10.5 bar" in texts[1] and "10.5 bar" not in texts[0]
    assert "DV-2" in texts[1] and "DV-2" not in texts[0]


def test_pdf_writer_escapes_parentheses_and_refuses_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "p.pdf"
    path.write_bytes(render_pdf((("Valve (V-1) \\ open",), ("second",)), "t"))
    assert pdf_page_texts(path)[0] == "Valve (V-1) \\ open"
    with pytest.raises(ValueError, match="ASCII"):
        render_pdf((("40 °C",),), "t")
    with pytest.raises(ValueError, match="page"):
        render_pdf((), "t")
    with pytest.raises(ValueError, match="page"):
        render_pdf(((),), "t")


# --- Questions ----------------------------------------------------------------------------


def test_question_set_shape() -> None:
    kinds = Counter(q.kind for q in DEMO_QUESTIONS)
    assert kinds == {"answerable": 8, "unanswerable": 2, "injection": 1}
    assert len({q.id for q in DEMO_QUESTIONS}) == len(DEMO_QUESTIONS)
    assert len({q.text for q in DEMO_QUESTIONS}) == len(DEMO_QUESTIONS)
    assert {q.page for q in DEMO_QUESTIONS if q.source == PDF_FILENAME} == {1, 2}


def test_each_answerable_expect_is_inside_one_sentence_of_its_source(
    docs: dict[str, tuple[dict[str, str], str]], pdf_path: Path
) -> None:
    pages = pdf_page_texts(pdf_path)
    for q in DEMO_QUESTIONS:
        if q.kind != "answerable":
            continue
        assert q.expect is not None and q.source is not None
        if q.source == PDF_FILENAME:
            assert q.page is not None
            text = pages[q.page - 1]
            others = [p for i, p in enumerate(pages) if i != q.page - 1]
            assert all(q.expect not in p for p in others), q.id
        else:
            assert q.page is None
            text = docs[q.source][1]
        # The extractive answerer copies whole sentences: the fact must not straddle a split.
        assert any(q.expect in s for s in split_sentences(text)), q.id


def test_unanswerable_and_injection_topics_are_absent_from_the_corpus(
    docs: dict[str, tuple[dict[str, str], str]], pdf_path: Path
) -> None:
    corpus = " ".join(body for _, body in docs.values()) + " ".join(pdf_page_texts(pdf_path))
    words = set(re.findall(r"[a-z]+", corpus.lower()))
    for absent in ["diesel", "generator", "boiling", "ceo", "mars", "rover", "rovers", "fuel"]:
        assert absent not in words, absent


def test_question_validator_rejects_mismatched_kind_and_expect() -> None:
    with pytest.raises(pydantic.ValidationError):
        DemoQuestion(id="x", text="t", kind="unanswerable", expect="45 Nm")
    with pytest.raises(pydantic.ValidationError):
        DemoQuestion(id="x", text="t", kind="answerable", expect=None)
    with pytest.raises(pydantic.ValidationError):
        DemoQuestion(id="x", text="t", kind="injection", expect=None, page=1)
    with pytest.raises(pydantic.ValidationError):
        DemoQuestion.model_validate({**DEMO_QUESTIONS[0].model_dump(), "extra_field": 1})


# --- Location and copying -----------------------------------------------------------------


def test_corpus_dir_is_the_package_folder_and_copy_writes_documents_only(tmp_path: Path) -> None:
    root = corpus_dir()
    assert (root / "__init__.py").is_file()
    assert markdown_paths() == sorted(root.glob("*.md"))
    written = copy_sample_corpus(tmp_path / "corpus")
    names = [p.name for p in written]
    assert names == sorted([p.name for p in markdown_paths()] + [PDF_FILENAME])
    assert sorted(p.name for p in (tmp_path / "corpus").iterdir()) == names
    for src in markdown_paths():
        assert (tmp_path / "corpus" / src.name).read_bytes() == src.read_bytes()


@pytest.mark.integration
def test_corpus_dir_works_when_the_package_is_imported_from_a_zip(tmp_path: Path) -> None:
    """A non-folder install (zip import) must still yield a real folder with every document."""
    package_root = Path(citebound.__file__).parent
    archive = tmp_path / "citebound.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(package_root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, Path("citebound") / path.relative_to(package_root))
    script = (
        "import citebound.sample_corpus as s\n"
        "assert '.zip' in s.__file__, s.__file__\n"
        "d = s.corpus_dir()\n"
        "print(d.is_dir(), sorted(p.name for p in d.glob('*.md')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(archive)}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    expected = sorted(p.name for p in markdown_paths())
    assert out.stdout.strip() == f"True {expected}"
