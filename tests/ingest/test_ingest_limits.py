"""Bounded ingest per file (#34 item 2): `[ingest]` limits, checked before and during the
work; a file over one is refused as OVER_LIMIT with the limit to raise, the rest ingests;
PDFs and large files are parsed in a worker process that is killed past the time limit."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from citebound.cli import main
from citebound.config import load_config
from citebound.contracts.ingest import IngestLimits, SkipReason
from citebound.ingest import ingest_paths
from citebound.store import SqliteStore

# Small limits so the hostile files stay small and the test fast; same code paths as the
# defaults, which are far above (256 MiB, 10,000 pages, 50 M characters).
SMALL = IngestLimits(
    max_file_bytes=2_000_000,
    max_pdf_pages=50,
    max_pdf_decompressed_bytes=150_000,
    max_record_chars=100_000,
    max_document_chars=100_000,
    max_chunks_per_document=500,
    max_seconds_per_file=60,
)


def pdf_bomb(path: Path, pages: int = 40, stream_bytes: int = 60_000) -> Path:
    """`pages` pages whose /Contents are one shared Flate stream of `stream_bytes` of text
    operators: a few KB on disk, `pages * stream_bytes` to read (the #34 bomb, scaled)."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
    )
    stream = DecodedStreamObject()
    line = b"BT /F1 12 Tf 72 720 Td (bomb) Tj ET\n"
    stream.set_data(line * (stream_bytes // len(line)))
    contents = writer._add_object(stream.flate_encode())
    for _ in range(pages):
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Contents")] = contents
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
    out = io.BytesIO()
    writer.write(out)
    path.write_bytes(out.getvalue())
    return path


def hostile_folder(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Pump\n\nThe ZQ-7 pump runs at 50 Hz.\n", encoding="utf-8")
    pdf_bomb(docs / "bomb.pdf")
    (docs / "huge.txt").write_text("word " * 60_000, encoding="utf-8")  # 300,000 characters
    record = {"_id": "big", "title": "Big", "text": "x" * 200_000}
    (docs / "huge.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    return docs


def reasons(report: object) -> dict[str, list[tuple[SkipReason, str]]]:
    out: dict[str, list[tuple[SkipReason, str]]] = {}
    for s in report.skipped:  # type: ignore[attr-defined]
        out.setdefault(s.source_path, []).append((s.reason, s.message))
    return out


def test_good_file_ingests_beside_a_pdf_bomb_a_huge_text_and_a_huge_jsonl_line(
    tmp_path: Path, store: SqliteStore
) -> None:
    docs = hostile_folder(tmp_path)
    assert (docs / "bomb.pdf").stat().st_size < 10_000  # 40 pages x 60 KB behind it
    started = time.perf_counter()
    report = ingest_paths(store, [docs], progress=False, update_index=False, limits=SMALL)
    assert time.perf_counter() - started < 60
    assert report.files_added == 1
    assert [s.source_path for s in store.list_sources("default")] == ["docs/good.md"]
    why = reasons(report)
    assert set(why) == {"docs/bomb.pdf", "docs/huge.txt", "docs/huge.jsonl"}
    (bomb,) = why["docs/bomb.pdf"]
    assert bomb[0] is SkipReason.OVER_LIMIT
    assert "over [ingest] max_pdf_decompressed_bytes = 150,000" in bomb[1]
    assert "pages 1-3 of 40" in bomb[1]
    (text,) = why["docs/huge.txt"]
    assert text[0] is SkipReason.OVER_LIMIT and "300,000 characters" in text[1]
    assert "max_document_chars = 100,000" in text[1]
    line = next(s for s in report.skipped if s.source_path == "docs/huge.jsonl")
    assert (line.reason, line.line) == (SkipReason.OVER_LIMIT, 1)
    assert "max_record_chars = 100,000" in line.message
    over = [
        m for entries in why.values() for reason, m in entries if reason is SkipReason.OVER_LIMIT
    ]
    assert len(over) == 3
    for entries in why.values():
        for _, message in entries:
            assert "\n" not in message
    for message in over:
        assert "raise [ingest] max_" in message and "citebound.toml" in message


def test_default_limits_read_an_ordinary_folder(tmp_path: Path, store: SqliteStore) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    pdf_bomb(docs / "manual.pdf", pages=3, stream_bytes=2_000)
    sentence = "The ZQ-7 pump runs at 50 Hz. "
    (docs / "long.txt").write_text(sentence * 12_000, encoding="utf-8")  # 360,000 characters
    record = {"_id": "long", "text": sentence * 4_000}
    (docs / "long.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    report = ingest_paths(store, [docs], progress=False, update_index=False)
    assert report.skipped == [] and report.files_added == 3


def test_each_limit_refuses_its_file_only(tmp_path: Path, store: SqliteStore) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a_big.txt").write_bytes(b"x" * 3_000)
    pdf_bomb(docs / "b_pages.pdf", pages=5, stream_bytes=100)
    (docs / "c_chunks.md").write_text(
        "\n\n".join(f"# Part {i}\n\nStep {i} is done." for i in range(20)), encoding="utf-8"
    )
    (docs / "d.jsonl").write_text(
        '{"_id": "ok", "text": "fine"}\n' + json.dumps({"_id": "no", "text": "y" * 500}) + "\n",
        encoding="utf-8",
    )
    (docs / "e_good.md").write_text("Fine.\n", encoding="utf-8")
    limits = IngestLimits(
        max_file_bytes=2_000, max_pdf_pages=4, max_chunks_per_document=10, max_record_chars=400
    )
    report = ingest_paths(store, [docs], progress=False, update_index=False, limits=limits)
    why = {s.source_path: s.message for s in report.skipped}
    assert "the file is 3,000 bytes, over [ingest] max_file_bytes = 2,000" in why["docs/a_big.txt"]
    assert "the PDF has 5 pages, over [ingest] max_pdf_pages = 4" in why["docs/b_pages.pdf"]
    assert "over [ingest] max_chunks_per_document = 10" in why["docs/c_chunks.md"]
    assert (
        "the record is 5" in why["docs/d.jsonl"] and "max_record_chars = 400" in why["docs/d.jsonl"]
    )
    assert {s.source_path for s in store.list_sources("default")} == {
        "docs/d.jsonl",
        "docs/e_good.md",
    }
    assert store.get_document("ok") is not None and store.get_document("no") is None


def test_a_file_past_the_time_limit_is_stopped_and_the_next_file_still_ingests(
    tmp_path: Path, store: SqliteStore
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    pdf_bomb(docs / "a_slow.pdf", pages=40, stream_bytes=200_000)  # ~1 s a page to read
    (docs / "b_good.md").write_text("# Fine\n\nAll good.\n", encoding="utf-8")
    limits = IngestLimits(max_seconds_per_file=1.0, worker="always")
    started = time.perf_counter()
    report = ingest_paths(store, [docs], progress=False, update_index=False, limits=limits)
    assert time.perf_counter() - started < 60  # reading it all would take about 40 s + spawn
    (entry,) = report.skipped
    assert (entry.source_path, entry.reason) == ("docs/a_slow.pdf", SkipReason.OVER_LIMIT)
    assert "parsing ran past 1 s and was stopped" in entry.message
    assert "max_seconds_per_file" in entry.message
    assert [s.source_path for s in store.list_sources("default")] == ["docs/b_good.md"]


def test_a_worker_parses_what_the_inline_path_parses(tmp_path: Path) -> None:
    docs = hostile_folder(tmp_path)
    (docs / "bomb.pdf").unlink()
    (docs / "huge.txt").unlink()
    (docs / "huge.jsonl").unlink()
    (docs / "r.jsonl").write_text('{"_id": "r1", "text": "Record one."}\n', encoding="utf-8")
    snapshots = []
    for mode in ("never", "always"):
        with SqliteStore(tmp_path / mode) as s:
            limits = IngestLimits(worker=mode)  # type: ignore[arg-type]
            ingest_paths(s, [docs], progress=False, update_index=False, limits=limits)
            snapshots.append([(c.chunk_id, c.text) for c in s.iter_chunks("default")])
    assert snapshots[0] == snapshots[1] and snapshots[0]


def test_limits_come_from_the_config_and_the_cli_names_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = hostile_folder(tmp_path)
    toml = tmp_path / "citebound.toml"
    toml.write_text(
        "[ingest]\nmax_document_chars = 100000\nmax_record_chars = 100000\n"
        "max_pdf_decompressed_bytes = 150000\n",
        encoding="utf-8",
    )
    config = load_config(toml, env={"CITEBOUND_INGEST_MAX_PDF_PAGES": "7"})
    assert config.ingest.max_pdf_pages == 7 and config.ingest.max_document_chars == 100_000
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main,
        ["ingest", str(docs), "--store", str(tmp_path / "st"), "--no-progress"],
        env={"CITEBOUND_INGEST_MAX_FILE_BYTES": "1000000"},
    )
    assert result.exit_code == 0, result.output
    assert "1 added" in result.output and "3 skipped" in result.output
    assert "docs/bomb.pdf  OVER_LIMIT  pages 1-3 of 40 hold" in result.output
    assert "docs/huge.jsonl:1  OVER_LIMIT  the record is" in result.output


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS bounds the worker on Linux")
def test_a_file_past_the_memory_limit_is_refused_and_nothing_is_lost(tmp_path: Path) -> None:
    """The worker's memory limit (`RLIMIT_AS`): a text file whose parsing needs more than
    `max_worker_memory_mb` is OVER_LIMIT with the limit to raise, the command exits 0 with no
    traceback (the worker's stderr is the command's), and what the store held stays."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a_ok.txt").write_text("The pump runs at 40 bar. " * 2000, encoding="utf-8")
    (docs / "c_good.md").write_text("# Seal\n\nThe seal is inspected weekly.\n", "utf-8")
    toml = tmp_path / "citebound.toml"
    toml.write_text("[ingest]\nmax_worker_memory_mb = 256\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}

    def ingest() -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "citebound", "ingest", str(docs), "--store",
               str(tmp_path / "st"), "--config", str(toml), "--no-progress"]  # fmt: skip
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)

    first = ingest()
    assert first.returncode == 0, first.stderr
    with SqliteStore(tmp_path / "st") as store:
        before = sorted((c.chunk_id, c.text) for c in store.iter_chunks("default"))
    assert before
    # 48 MB of text: under every other default limit, but reading, decoding and normalizing
    # it needs several times that in the worker.
    line = "Seal inspection happens weekly on line xxxxxxxxxx. "
    (docs / "b_big.txt").write_text(line * 950_000, encoding="utf-8")
    started = time.perf_counter()
    second = ingest()
    assert time.perf_counter() - started < 300
    out = second.stdout + second.stderr
    assert second.returncode == 0, out
    assert "Traceback" not in out and "MemoryError" not in out, out
    (row,) = [x for x in out.splitlines() if "b_big.txt" in x]
    assert "OVER_LIMIT" in row and "max_worker_memory_mb = 256" in row, row
    assert "raise [ingest] max_worker_memory_mb" in row, row
    with SqliteStore(tmp_path / "st") as store:
        assert sorted(s.source_path for s in store.list_sources("default")) == [
            "docs/a_ok.txt",
            "docs/c_good.md",
        ]
        assert sorted((c.chunk_id, c.text) for c in store.iter_chunks("default")) == before
