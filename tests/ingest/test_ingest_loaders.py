"""Loader details: front matter, sidecars, JSONL records, PDF outline and page offsets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from citebound.contracts.ingest import SkipReason
from citebound.errors import StageError
from citebound.ingest.metadata import parse_sidecar, split_front_matter


def test_front_matter_subset() -> None:
    meta, body = split_front_matter(
        "---\n"
        "title: 'Quoted: with colon'\n"
        "# a comment\n"
        "equipment_id: P-7  # trailing comment\n"
        'event_date: "2023-01-02"\n'
        "nested:\n"
        "  deep: value\n"
        "list:\n"
        "- a\n"
        "---\n"
        "Body\n"
    )
    assert meta == {
        "title": "Quoted: with colon",
        "equipment_id": "P-7",
        "event_date": "2023-01-02",
    }
    assert body == "Body\n"


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ("event_date: 05/03/2024", "not an ISO date"),
        ("title:\n  - a\n  - b", "single value"),
        ("this is not yaml", "not `key: value`"),
        ("title: 'unterminated", "unterminated"),
        ("  indented: first", "no key above"),
    ],
)
def test_bad_front_matter_is_rejected(front: str, message: str) -> None:
    with pytest.raises(StageError, match=message) as info:
        split_front_matter(f"---\n{front}\n---\nbody")
    assert info.value.reason_code == SkipReason.BAD_METADATA


def test_text_without_closing_fence_has_no_front_matter() -> None:
    assert split_front_matter("---\ntitle: x\nno end") == ({}, "---\ntitle: x\nno end")
    assert split_front_matter("--- not a fence\n") == ({}, "--- not a fence\n")


def test_sidecar_rules() -> None:
    assert parse_sidecar(b'{"knowledge_type": "incident", "equipment_id": null}') == {
        "knowledge_type": "incident"
    }
    for raw, message in (
        (b"[1]", "JSON object"),
        (b"{bad", "valid UTF-8 JSON"),
        (b'{"owner": "me"}', "unknown key `owner`"),
        (b'{"title": 5}', "string or null"),
    ):
        with pytest.raises(StageError, match=message):
            parse_sidecar(raw)


def test_sidecar_overrides_front_matter(tmp_path: Path, loader: Callable) -> None:
    from citebound.ingest.loaders import load_file
    from citebound.ingest.source import SourceFile

    raw = b"---\ntitle: Front\nequipment_id: A\n---\n# H\n\ntext"
    src = SourceFile(tmp_path / "a.md", "x/a.md", "c", raw, "sha", {"equipment_id": "B"})
    (parsed,) = load_file(src, lambda s: None)
    assert (parsed.document.title, parsed.document.equipment_id) == ("Front", "B")
    assert parsed.document.collection == "c"


def test_markdown_title_fallbacks(tmp_path: Path, loader: Callable) -> None:
    (tmp_path / "d").mkdir()
    p = tmp_path / "d" / "notes.md"
    p.write_text("## Second level first\n\ntext\n", encoding="utf-8")
    (parsed,), _ = loader(p)
    assert parsed.document.title == "Second level first"
    p.write_text("plain words only\n", encoding="utf-8")
    (parsed,), _ = loader(p)
    assert parsed.document.title == "notes"
    p.write_text("# **Bold** `code` [link](http://x)\n\ntext\n", encoding="utf-8")
    (parsed,), _ = loader(p)
    assert parsed.document.title == "Bold code link"


def test_empty_markdown_headings_end_sections_but_name_none(
    tmp_path: Path, loader: Callable
) -> None:
    # As in the F´ README: an empty `#` (only an image or nothing) before the intro text.
    (tmp_path / "d").mkdir()
    p = tmp_path / "d" / "README.md"
    p.write_text(
        "#\nIntro words.\n\n# ![logo](x.svg)\n\n## Usage\n\nRun it.\n\n# Real title\n\nEnd.\n",
        encoding="utf-8",
    )
    (parsed,), _ = loader(p)
    text = parsed.document.text
    paths = {
        text[b.start : b.end].strip(): b.heading_path for b in parsed.blocks if b.kind == "text"
    }
    assert paths == {
        "Intro words.": (),
        "Run it.": ("logo", "Usage"),
        "End.": ("Real title",),
    }
    assert parsed.document.title == "logo"  # the first non-empty H1, not the empty one


def test_jsonl_records(tmp_path: Path, loader: Callable) -> None:
    (tmp_path / "d").mkdir()
    p = tmp_path / "d" / "corpus.jsonl"
    p.write_text(
        '{"_id": "1", "title": "One", "text": "First.", "metadata": {"knowledge_type": "paper", '
        '"event_date": "2020-02-02", "authors": ["ignored"]}}\n'
        "\n"
        '{"id": 2, "text": "Second.", "equipment_id": "E-2"}\n'
        "not json\n"
        '{"_id": "3", "title": "No text"}\n'
        '{"_id": "4", "text": "   "}\n'
        '{"_id": "1", "text": "dup"}\n'
        '{"_id": "5", "text": "x", "metadata": {"event_date": "soon"}}\n'
        '["list"]\n',
        encoding="utf-8",
    )
    parsed, skips = loader(p)
    docs = [x.document for x in parsed]
    assert [(d.knowledge_id, d.title, d.text) for d in docs] == [
        ("1", "One", "First."),
        ("2", "2", "Second."),
    ]
    assert (docs[0].knowledge_type, docs[0].event_date, docs[1].equipment_id) == (
        "paper",
        "2020-02-02",
        "E-2",
    )
    assert [(s.line, s.reason) for s in skips] == [
        (4, SkipReason.BAD_RECORD),
        (5, SkipReason.BAD_RECORD),
        (6, SkipReason.EMPTY),
        (7, SkipReason.DUPLICATE_ID),
        (8, SkipReason.BAD_RECORD),
        (9, SkipReason.BAD_RECORD),
    ]


def test_jsonl_with_no_valid_record_is_empty(tmp_path: Path, loader: Callable) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text("nope\n", encoding="utf-8")
    with pytest.raises(StageError) as info:
        loader(p)
    assert info.value.reason_code == SkipReason.EMPTY


def test_pdf_permission_only_encryption_is_readable(
    tmp_path: Path, loader: Callable, make_pdf: Callable[..., Path]
) -> None:
    path = make_pdf(tmp_path / "perm.pdf", ["Readable text."], owner_password="owner")
    (parsed,), _ = loader(path)
    assert parsed.document.text == "Readable text."


def test_pdf_page_offsets_locate_every_page(
    tmp_path: Path, loader: Callable, make_pdf: Callable[..., Path]
) -> None:
    pages = ["One.", "", "Three."]
    (parsed,), _ = loader(make_pdf(tmp_path / "p.pdf", pages))
    doc = parsed.document
    assert doc.page_offsets == [0, 6, 8]
    assert [b.page for b in parsed.blocks] == [1, 3]
    assert doc.text[doc.page_offsets[2] :] == "Three."


def test_crlf_text_is_normalised(tmp_path: Path, loader: Callable) -> None:
    p = tmp_path / "w.txt"
    p.write_bytes(b"Line one.\r\n\r\nLine two.\r\n")
    (parsed,), _ = loader(p)
    assert parsed.document.text == "Line one.\n\nLine two.\n"
    assert len(parsed.blocks) == 2
