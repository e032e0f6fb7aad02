"""Chunks the embedder reads whole (#31): a config reference documenting every option in `#`
comment lines inside code blocks, measured with the embedder's own tokenizer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_ingest_chunker import check_invariants, parse_md

import citebound.ingest.pipeline as ingest_pipeline
from citebound.contracts.documents import Chunk
from citebound.contracts.ingest import ChunkerConfig
from citebound.ingest import chunk_document, chunker, ingest_paths
from citebound.store import SqliteStore
from citebound.text import get_tokenizer
from citebound.text.window import TOKENIZER_FILE, WINDOW_TOKENS, index_text

FIRMWARE = Path(__file__).resolve().parents[1] / "fixtures" / "firmware"
CONFIG_REFERENCE = FIRMWARE / "config_reference.md"
_OPTION_LINE = re.compile(r"^#?[a-z_]+:.*$")


def _embedder_tokens(text: str) -> int:
    """Tokens as the embedder counts them: its tokenizer.json, [CLS] and [SEP] included."""
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer.from_file(str(TOKENIZER_FILE))
    tok.no_truncation()
    return len(tok.encode(text).ids)


def _chunks(store: SqliteStore) -> list[Chunk]:
    ingest_paths(store, [FIRMWARE], progress=False, update_index=False)
    return sorted(store.iter_chunks(), key=lambda c: (c.source_path, c.chunk_index))


def test_the_window_is_the_embedders() -> None:
    embedder = pytest.importorskip("citebound.index.embedder")
    assert WINDOW_TOKENS == embedder.MAX_TOKENS == 256
    assert embedder.MINILM_TOKENIZER.resolve() == TOKENIZER_FILE


def test_no_chunk_of_a_config_reference_exceeds_the_embedders_window(store: SqliteStore) -> None:
    text = CONFIG_REFERENCE.read_text(encoding="utf-8")
    # the fixture is what the issue describes: one code block alone is past the window
    blocks = re.findall(r"```\n(.*?)```", text, flags=re.S)
    assert max(_embedder_tokens(b) for b in blocks) > 2 * WINDOW_TOKENS
    chunks = [c for c in _chunks(store) if c.source_path.endswith("config_reference.md")]
    sizes = [_embedder_tokens(index_text(c)) for c in chunks]
    assert max(sizes) <= WINDOW_TOKENS, sizes
    # every non-blank line of the file is in a chunk: nothing is left unembedded
    held = "\n".join(c.text for c in chunks)
    assert all(line.strip() in held for line in text.splitlines())


def test_an_option_line_stays_with_its_comment(store: SqliteStore) -> None:
    lines = CONFIG_REFERENCE.read_text(encoding="utf-8").splitlines()
    chunks = _chunks(store)
    pairs = [
        (line, lines[i + 1])
        for i, line in enumerate(lines[:-1])
        if _OPTION_LINE.match(line) and lines[i + 1].startswith("#   ")
    ]
    assert len(pairs) > 40
    for option, comment in pairs:
        assert any(f"{option}\n{comment}" in c.text for c in chunks), option


def test_pieces_of_a_cut_block_name_its_first_line_after_the_headings() -> None:
    options = "\n".join(
        f"#option_{i}: {i}\n#   What option {i} sets, in a sentence of its own words."
        for i in range(40)
    )
    md = f"# Config\n\nThe printer options:\n\n```\n[printer]\n{options}\n```\n"
    parsed = parse_md(md)
    config = ChunkerConfig()
    chunks = chunk_document(parsed, config)
    check_invariants(parsed, chunks, config)
    assert len(chunks) > 2
    assert chunks[0].heading_path == ("Config",)
    assert chunks[0].text.startswith("# Config\n\nThe printer options:\n\n```\n[printer]")
    for c in chunks[1:]:
        assert c.heading_path == ("Config", "[printer]")
        assert c.text.startswith("#option_"), c.text  # cut where a comment ends
    # a heading that already names the block is not repeated
    named = chunk_document(parse_md(md.replace("# Config", "# Config\n\n## [printer]")))
    assert {c.heading_path for c in named} == {("Config", "[printer]")}


def test_a_long_table_row_is_cut_to_the_window() -> None:
    cell = " ".join(f"word{i}" for i in range(400))
    parsed = parse_md(f"# T\n\n| a | b |\n|---|---|\n| x | {cell} |\n")
    chunks = chunk_document(parsed, ChunkerConfig())
    assert len(chunks) > 1
    assert all(_embedder_tokens(index_text(c)) <= WINDOW_TOKENS for c in chunks)


def test_the_ingest_version_makes_stored_files_rechunk(
    tmp_path: Path, store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert ingest_pipeline.INGEST_VERSION == "ingest-v7"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "config_reference.md").write_bytes(CONFIG_REFERENCE.read_bytes())
    with monkeypatch.context() as m:
        m.setattr(ingest_pipeline, "INGEST_VERSION", "ingest-v6")
        ingest_paths(store, [docs], progress=False, update_index=False)
    report = ingest_paths(store, [docs], progress=False, update_index=False)
    assert report.files_updated == 1 and report.files_unchanged == 0
    again = ingest_paths(store, [docs], progress=False, update_index=False)
    assert again.files_unchanged == 1


def test_a_cut_to_the_window_keeps_a_table_header_with_a_row() -> None:
    # dashes cost one embedder token each: a header and its separator are ~130 tokens. With
    # more or less prose before the table, the longest head that fits would often end on the
    # header; the cut goes before it instead (`_fit` on a section's units as one group).
    dash = "-" * 40
    rows = "\n".join(
        f"| FW_MACRO_{i}_MAX_SIZE | Defines the size of buffer {i} | {i * 8} |" for i in range(12)
    )
    table = f"| Macro | Definition | Default |\n|{dash}|{dash}|{dash}|\n{rows}\n"
    tok = get_tokenizer("cl100k_base")
    for n in range(12):
        prose = " ".join(f"The buffer of kind {k} holds the values of that kind." for k in range(n))
        parsed = parse_md(f"# Config\n\n{prose}\n\nTable 42 lists the macros.\n\n{table}")
        text = parsed.document.text
        for section in chunker._sections(parsed.blocks):
            units = chunker._units(text, section, tok, 200)
            parts = chunker._fit(text, parsed.document.title, units, tok)
            assert [u for part in parts for u in part] == units
            for part in parts[:-1]:
                last = text[part[-1].start : part[-1].end]
                assert not last.endswith(f"{dash}|"), (n, last)
