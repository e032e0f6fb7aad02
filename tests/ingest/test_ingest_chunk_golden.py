"""Golden chunking of Markdown, HTML and PDF fixtures that the tests write themselves."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from citebound.contracts.ingest import ChunkerConfig
from citebound.ingest import chunk_document, chunk_id

GUIDE_MD = """---
title: "Pump Manual"
knowledge_type: manual
equipment_id: P-101
event_date: 2024-03-05
layout: default
tags:
  - pumps
---

# Pump P-101

Intro paragraph about the pump.

## 1. Maintenance

Torque the flange bolts to 40 Nm. Check the seal every 500 hours. Replace the gasket when \
it shows cracks. Record every check in the log book.

| Part | Interval | Torque |
|------|----------|--------|
| Flange bolts | 500 h | 40 Nm |
| Seal | 1000 h | n/a |

```bash
pump-ctl stop --id P-101
pump-ctl lock --id P-101
```

### 1.1 Lubrication

Use ISO VG 46 oil.

## 2. Safety

Wear gloves.
"""

GUIDE_CHUNKS = [
    (("Pump P-101",), "# Pump P-101\n\nIntro paragraph about the pump."),
    (
        ("Pump P-101", "1. Maintenance"),
        "## 1. Maintenance\n\nTorque the flange bolts to 40 Nm. Check the seal every 500 hours. "
        "Replace the gasket when it shows cracks.",
    ),
    (
        ("Pump P-101", "1. Maintenance"),
        "Replace the gasket when it shows cracks. Record every check in the log book.\n\n"
        "| Part | Interval | Torque |\n|------|----------|--------|",
    ),
    (
        ("Pump P-101", "1. Maintenance"),
        "| Flange bolts | 500 h | 40 Nm |\n| Seal | 1000 h | n/a |",
    ),
    (
        ("Pump P-101", "1. Maintenance"),
        "```bash\npump-ctl stop --id P-101\npump-ctl lock --id P-101\n```",
    ),
    (
        ("Pump P-101", "1. Maintenance", "1.1 Lubrication"),
        "### 1.1 Lubrication\n\nUse ISO VG 46 oil.",
    ),
    (("Pump P-101", "2. Safety"), "## 2. Safety\n\nWear gloves."),
]


def test_markdown_golden(tmp_path: Path, loader: Callable[..., tuple]) -> None:
    path = tmp_path / "docs" / "guide.md"
    path.parent.mkdir()
    path.write_text(GUIDE_MD, encoding="utf-8")
    (parsed,), skips = loader(path)
    doc = parsed.document
    assert skips == []
    assert (doc.title, doc.knowledge_type, doc.equipment_id, doc.event_date) == (
        "Pump Manual",
        "manual",
        "P-101",
        "2024-03-05",
    )
    assert "layout" not in doc.text and doc.text.lstrip().startswith("# Pump P-101")
    chunks = chunk_document(parsed, ChunkerConfig(chunk_tokens=40, overlap_tokens=10))
    assert [(c.heading_path, c.text) for c in chunks] == GUIDE_CHUNKS
    assert [c.chunk_index for c in chunks] == list(range(len(GUIDE_CHUNKS)))
    for c in chunks:
        assert doc.text[c.char_start : c.char_end] == c.text
        assert c.chunk_id == chunk_id(doc.knowledge_id, 0, c.text)
        assert (c.page, c.page_end) == (None, None)
        assert (c.title, c.equipment_id, c.source_path) == ("Pump Manual", "P-101", "docs/guide.md")
    # the overlap repeats one whole sentence, nothing less
    assert chunks[1].text.endswith("Replace the gasket when it shows cracks.")
    assert chunks[2].text.startswith("Replace the gasket when it shows cracks.")


def test_markdown_one_chunk_per_section_when_large(tmp_path: Path, loader: Callable) -> None:
    path = tmp_path / "d" / "guide.md"
    path.parent.mkdir()
    path.write_text(GUIDE_MD, encoding="utf-8")
    (parsed,), _ = loader(path)
    chunks = chunk_document(parsed, ChunkerConfig(chunk_tokens=400, overlap_tokens=0))
    assert [c.heading_path[-1] for c in chunks] == [
        "Pump P-101",
        "1. Maintenance",
        "1.1 Lubrication",
        "2. Safety",
    ]


PAGE_HTML = """<!DOCTYPE html>
<html><head><title>Valve  Guide</title><style>body { color: red; }</style>
<script>var secret = "do not index";</script></head>
<body>
<h1>Valve V-7</h1>
<p>The valve   controls
flow.</p>
<h2>Inspection</h2>
<p>Inspect &amp; clean monthly.</p>
<table><tr><th>Item</th><th>Limit</th></tr><tr><td>Leak rate</td><td>0.1 l/min</td></tr></table>
<pre>valve-ctl close
  --id V-7</pre>
<h3>Seats</h3><ul><li>Seat A</li><li>Seat B</li></ul>
<h2>Disposal</h2><div>Recycle metal parts.<br>Keep the tag.</div>
</body></html>
"""

PAGE_CHUNKS = [
    (("Valve V-7",), "Valve V-7\n\nThe valve controls flow."),
    (
        ("Valve V-7", "Inspection"),
        "Inspection\n\nInspect & clean monthly.\n\nItem | Limit\nLeak rate | 0.1 l/min\n\n"
        "valve-ctl close\n  --id V-7",
    ),
    (("Valve V-7", "Inspection", "Seats"), "Seats\n\nSeat A\n\nSeat B"),
    (("Valve V-7", "Disposal"), "Disposal\n\nRecycle metal parts.\n\nKeep the tag."),
]


def test_html_golden(tmp_path: Path, loader: Callable) -> None:
    path = tmp_path / "site" / "page.html"
    path.parent.mkdir()
    path.write_text(PAGE_HTML, encoding="utf-8")
    (parsed,), _ = loader(path)
    doc = parsed.document
    assert doc.title == "Valve Guide"
    assert "secret" not in doc.text and "color" not in doc.text
    chunks = chunk_document(parsed, ChunkerConfig(chunk_tokens=200, overlap_tokens=0))
    assert [(c.heading_path, c.text) for c in chunks] == PAGE_CHUNKS
    kinds = [b.kind for b in parsed.blocks]
    assert kinds.count("table_row") == 2 and kinds.count("code") == 1
    for c in chunks:
        assert doc.text[c.char_start : c.char_end] == c.text


def test_pdf_golden(tmp_path: Path, loader: Callable, make_pdf: Callable[..., Path]) -> None:
    (tmp_path / "manuals").mkdir()
    path = make_pdf(
        tmp_path / "manuals" / "valve.pdf",
        [
            "Alpha page one. The pump runs at 50 Hz.",
            "Beta page two. Inspect the seal.",
            "Gamma page three. Wear gloves.",
        ],
        sections=["Overview", "Maintenance", "Safety"],
    )
    (parsed,), _ = loader(path)
    doc = parsed.document
    assert doc.title == "valve"  # fpdf2 sets no /Title: fall back to the file name
    assert len(doc.page_offsets) == 3 and doc.page_offsets[0] == 0
    chunks = chunk_document(parsed, ChunkerConfig(chunk_tokens=200, overlap_tokens=0))
    assert [(c.heading_path, c.page, c.page_end, c.text) for c in chunks] == [
        (("Overview",), 1, 1, "Alpha page one. The pump runs at 50 Hz."),
        (("Maintenance",), 2, 2, "Beta page two. Inspect the seal."),
        (("Safety",), 3, 3, "Gamma page three. Wear gloves."),
    ]
    for c in chunks:
        assert doc.text[c.char_start : c.char_end] == c.text
        page_start = doc.page_offsets[c.page - 1]  # type: ignore[operator]
        assert c.char_start >= page_start


def test_pdf_chunks_never_span_pages(tmp_path: Path, loader: Callable, make_pdf: Callable) -> None:
    path = make_pdf(tmp_path / "a.pdf", ["First page words.", "Second page words."])
    (parsed,), _ = loader(path)
    first, second = chunk_document(parsed, ChunkerConfig(chunk_tokens=200, overlap_tokens=0))
    assert (first.page, first.page_end, first.heading_path) == (1, 1, ())
    assert (second.page, second.page_end) == (2, 2)
    assert (first.text, second.text) == ("First page words.", "Second page words.")
