"""Chunker invariants: atomic tables and code, offsets, coverage, overlap, determinism."""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citebound.contracts.documents import Chunk
from citebound.contracts.ingest import ChunkerConfig, ParsedDocument
from citebound.ingest import SourceFile, chunk_document, chunker, load_file
from citebound.text import get_tokenizer
from citebound.text.window import WINDOW_TOKENS, index_text, window_tokens


def parse_md(text: str, name: str = "doc.md") -> ParsedDocument:
    raw = text.encode()
    src = SourceFile(Path(name), f"d/{name}", "default", raw, hashlib.sha256(raw).hexdigest())
    (parsed,) = load_file(src, lambda s: None)
    return parsed


def check_invariants(parsed: ParsedDocument, chunks: list[Chunk], config: ChunkerConfig) -> None:
    text = parsed.document.text
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    for c in chunks:
        assert c.text == text[c.char_start : c.char_end]
        assert c.text.strip() == c.text and c.text
    covered = bytearray(len(text))
    for c in chunks:
        covered[c.char_start : c.char_end] = b"\x01" * (c.char_end - c.char_start)
    for b in parsed.blocks:
        # every non-space character of every block is in some chunk: nothing is lost
        lost = [i for i in range(b.start, b.end) if not covered[i] and not text[i].isspace()]
        assert not lost, (b, text[lost[0] : lost[0] + 20])
        for c in chunks:
            if b.kind == "table_row":
                # no chunk boundary falls strictly inside a table row
                assert not (b.start < c.char_start < b.end), (b, c.char_start)
                assert not (b.start < c.char_end < b.end), (b, c.char_end)
            elif b.kind == "code":
                # a code block is cut between lines only (its lines here fit a chunk)
                if b.start < c.char_start < b.end:
                    assert not text[text.rfind("\n", 0, c.char_start) : c.char_start].strip()
                if b.start < c.char_end < b.end:
                    assert text[c.char_end] == "\n", (b, c.char_end)
    tok = get_tokenizer(config.tokenizer)
    for c in chunks:
        assert c.token_count == tok.count(c.text)
        rows = [
            b
            for b in parsed.blocks
            if b.kind == "table_row" and c.char_start <= b.start < c.char_end
        ]
        if not rows:
            assert c.token_count <= config.chunk_tokens + 8, c.text
        # the embedder reads every chunk whole (title and headings included)
        assert (window_tokens(index_text(c)) or 0) <= WINDOW_TOKENS, c.text


def test_large_table_splits_only_between_rows() -> None:
    rows = "\n".join(f"| part-{i} | {i * 10} h | {i} Nm torque value |" for i in range(120))
    md = f"# Parts\n\n| Part | Interval | Torque |\n|---|---|---|\n{rows}\n"
    parsed = parse_md(md)
    config = ChunkerConfig(chunk_tokens=64, overlap_tokens=0)
    chunks = chunk_document(parsed, config)
    assert len(chunks) > 5
    check_invariants(parsed, chunks, config)
    table_lines = [line for c in chunks for line in c.text.splitlines() if line.startswith("|")]
    assert len(table_lines) >= 120  # every row is somewhere (headers may repeat)
    for line in table_lines:
        assert line.endswith("|"), line
    header = next(c for c in chunks if "| Part |" in c.text)
    assert "| Part | Interval | Torque |\n|---|---|---|" in header.text


def test_code_longer_than_a_chunk_is_cut_between_lines_naming_its_first_line() -> None:
    body = "\n".join(f"    call_step_{i}(arg={i})  # step {i}" for i in range(80))
    md = f"# Code\n\nBefore the code.\n\n```python\ndef run():\n{body}\n```\n\nAfter the code.\n"
    parsed = parse_md(md)
    config = ChunkerConfig(chunk_tokens=64, overlap_tokens=16)
    chunks = chunk_document(parsed, config)
    check_invariants(parsed, chunks, config)
    holders = [c for c in chunks if "call_step_" in c.text]
    assert len(holders) > 5
    # the block's intro and opening fence lead the first piece; its end closes the last
    assert holders[0].text.startswith("# Code\n\nBefore the code.\n\n```python\ndef run():")
    assert holders[0].heading_path == ("Code",)
    assert any("call_step_79(arg=79)  # step 79\n```" in c.text for c in holders)
    # every later piece names the block's first line after its heading path
    for c in holders[1:]:
        assert c.heading_path == ("Code", "def run():"), c.text
        assert c.token_count <= 64
    steps = [int(s.split("(")[0]) for c in holders for s in c.text.split("call_step_")[1:]]
    assert sorted(set(steps)) == list(range(80))


def test_fence_inside_list_item_is_atomic() -> None:
    steps = "\n".join(f"  echo step {i} of the procedure" for i in range(40))
    md = f"# Steps\n\n- first do this. Then that.\n  ```sh\n{steps}\n  ```\n- finally done.\n"
    parsed = parse_md(md)
    assert [b.kind for b in parsed.blocks] == ["heading", "text", "code", "text"]
    config = ChunkerConfig(chunk_tokens=32, overlap_tokens=0)
    check_invariants(parsed, chunk_document(parsed, config), config)


def test_heading_only_sections_merge_into_the_next() -> None:
    parsed = parse_md("# A\n\n## B\n\n### C\n\nBody text.\n\n## D\n\nMore.\n")
    chunks = chunk_document(parsed, ChunkerConfig())
    assert [(c.heading_path, c.text) for c in chunks] == [
        (("A", "B", "C"), "# A\n\n## B\n\n### C\n\nBody text."),
        (("A", "D"), "## D\n\nMore."),
    ]


def test_trailing_heading_is_kept() -> None:
    parsed = parse_md("Text first.\n\n# Last heading\n")
    chunks = chunk_document(parsed, ChunkerConfig())
    assert [(c.heading_path, c.text) for c in chunks] == [
        ((), "Text first."),
        (("Last heading",), "# Last heading"),
    ]


def test_long_sentence_is_cut_between_words_and_giant_word_by_chars() -> None:
    words = " ".join(f"word{i}" for i in range(300))
    blob = "x" * 3000
    parsed = parse_md(f"{words}\n\n{blob}\n")
    config = ChunkerConfig(chunk_tokens=50, overlap_tokens=0)
    chunks = chunk_document(parsed, config)
    check_invariants(parsed, chunks, config)
    assert all(c.token_count <= 58 for c in chunks)
    joined = "".join(c.text for c in chunks if c.text.startswith("word"))
    assert "word0" in joined and "word299" in joined


def test_overlap_zero_gives_disjoint_spans_and_overlap_repeats_sentences() -> None:
    md = "# S\n\n" + " ".join(f"Sentence number {i} says something useful." for i in range(60))
    parsed = parse_md(md)
    plain = chunk_document(parsed, ChunkerConfig(chunk_tokens=60, overlap_tokens=0))
    assert all(a.char_end <= b.char_start for a, b in itertools.pairwise(plain))
    lapped = chunk_document(parsed, ChunkerConfig(chunk_tokens=60, overlap_tokens=20))
    shared = [b.char_start < a.char_end for a, b in itertools.pairwise(lapped)]
    assert all(shared) and len(lapped) >= len(plain)


def test_unchanged_sections_keep_their_chunk_ids_after_an_edit() -> None:
    before = parse_md("# A\n\nAlpha text.\n\n# B\n\nBeta text.\n")
    after = parse_md("# A\n\nAlpha text, edited.\n\n# B\n\nBeta text.\n")
    ids_before = [c.chunk_id for c in chunk_document(before)]
    ids_after = [c.chunk_id for c in chunk_document(after)]
    assert ids_before[1] == ids_after[1] and ids_before[0] != ids_after[0]


_BLOCKS = st.one_of(
    st.builds(
        lambda n, t: "#" * n + " " + t, st.integers(1, 4), st.sampled_from(["Intro", "Usage"])
    ),
    st.builds(
        lambda k: " ".join(f"Fact {i} holds for unit {k}." for i in range(k)), st.integers(1, 40)
    ),
    st.builds(
        lambda k: "| a | b |\n|---|---|\n" + "\n".join(f"| r{i} | v{i} |" for i in range(k)),
        st.integers(1, 30),
    ),
    st.builds(
        lambda k: "```\n" + "\n".join(f"line {i}" for i in range(k)) + "\n```", st.integers(1, 60)
    ),
    st.builds(lambda k: "\n".join(f"- item {i} of the list" for i in range(k)), st.integers(1, 20)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks=st.lists(_BLOCKS, min_size=1, max_size=12),
    size=st.integers(16, 120),
    overlap_share=st.integers(0, 50),
)
def test_property_invariants_hold_for_any_markdown(
    blocks: list[str], size: int, overlap_share: int
) -> None:
    parsed = parse_md("\n\n".join(blocks) + "\n")
    config = ChunkerConfig(chunk_tokens=size, overlap_tokens=size * overlap_share // 100)
    chunks = chunk_document(parsed, config)
    check_invariants(parsed, chunks, config)
    assert chunk_document(parsed, config) == chunks  # deterministic


def test_short_lead_in_stays_with_the_first_piece_of_a_long_code_block() -> None:
    lines = "\n".join(f"option --flag-{i}  does thing number {i}" for i in range(60))
    parsed = parse_md(f"### `events`\n\nHelp message:\n\n```\n{lines}\n```\n\nAfter text.\n")
    config = ChunkerConfig(chunk_tokens=64, overlap_tokens=0)
    chunks = chunk_document(parsed, config)
    check_invariants(parsed, chunks, config)
    assert chunks[0].text.startswith("### `events`\n\nHelp message:\n\n```\noption --flag-0 ")
    assert chunks[-1].text.endswith("number 59\n```\n\nAfter text.")
    named = ("events", "option --flag-0  does thing number 0")
    assert all(c.heading_path == named for c in chunks[1:])


def test_chunks_start_at_a_sentence_start_in_hard_wrapped_prose() -> None:
    # 120-column wrapping as in the F´ docs: the old line-based cut started chunks with
    # "passed to the component, and ..." (the tail of a sentence from the line before).
    sentence = (
        "The command dispatcher forwards each command it receives to the component that owns "
        "the opcode, the arguments are\npassed to the component, and the command dispatcher "
        "waits for the command response before it reports status."
    )
    body = " ".join([sentence] * 12)
    parsed = parse_md(f"# Dispatch\n\n{body}\n")
    config = ChunkerConfig(chunk_tokens=80, overlap_tokens=0)
    chunks = chunk_document(parsed, config)
    check_invariants(parsed, chunks, config)
    assert len(chunks) > 2
    for c in chunks:
        first = c.text.lstrip("# \n").split()[0]
        assert first in ("The", "Dispatch"), c.text[:60]


def test_metadata_blocks_are_not_chunked() -> None:
    text = (
        "\\page SvcTlmChanComponent Svc::TlmChan Component\n\n"
        "<!-- generated: do not edit -->\n\n"
        "- [Introduction](#intro)\n- [Design](#design)\n\n"
        "# Svc::TlmChan\n\nThe TlmChan component stores telemetry channel values.\n"
    )
    parsed = parse_md(text)
    chunks = chunk_document(parsed, ChunkerConfig(chunk_tokens=200, overlap_tokens=0))
    joined = "\n".join(c.text for c in chunks)
    assert "\\page" not in joined and "<!--" not in joined and "(#intro)" not in joined
    assert "stores telemetry channel values" in joined


def _prose(n: int, word: str) -> str:
    return " ".join(f"The {word} sentence number {i} says something plain." for i in range(n))


def test_command_block_stays_with_the_sentence_introducing_it() -> None:
    # Issue #15: a cut between "run the following command" and its fenced block loses the
    # command's meaning; the chunk ends before the intro instead.
    md = (
        "# Setup\n\n"
        + _prose(6, "filler")
        + " Users can install the container by running the following command.\n\n"
        + "```bash\ndocker pull example/image:latest\n```\n\n"
        + _prose(6, "closing")
        + "\n"
    )
    parsed = parse_md(md)
    config = ChunkerConfig(chunk_tokens=90, overlap_tokens=0)
    chunks = chunk_document(parsed, config)
    check_invariants(parsed, chunks, config)
    (holder,) = [c for c in chunks if "docker pull" in c.text]
    assert "running the following command" in holder.text


def test_introduced_list_is_not_cut_from_its_intro() -> None:
    items = "\n".join(f"{i}. item{i}: what item {i} means in a few words." for i in range(1, 5))
    md = (
        "# Channels\n\n"
        + _prose(5, "opening")
        + " Channels are defined with the following properties:\n\n"
        + items
        + "\n\n"
        + _prose(2, "closing")
        + "\n"
    )
    parsed = parse_md(md)
    config = ChunkerConfig(chunk_tokens=100, overlap_tokens=0)
    chunks = chunk_document(parsed, config)
    check_invariants(parsed, chunks, config)
    (holder,) = [c for c in chunks if "item4:" in c.text]
    assert "the following properties:" in holder.text
    assert all(f"item{i}:" in holder.text for i in range(1, 5))


def test_list_without_intro_colon_is_packed_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without ':' or a code block nothing introduces anything: rule 4 must not move a cut.
    items = "\n".join(f"- item{i} is one more plain entry of the list." for i in range(12))
    md = "# List\n\n" + _prose(4, "opening") + "\n\n" + items + "\n"
    parsed = parse_md(md)
    config = ChunkerConfig(chunk_tokens=80, overlap_tokens=10)
    chunks = chunk_document(parsed, config)
    check_invariants(parsed, chunks, config)
    monkeypatch.setattr(chunker, "_joins", lambda text, units: units)
    plain = chunk_document(parsed, config)
    assert len(chunks) >= 2
    assert [(c.char_start, c.char_end) for c in chunks] == [
        (c.char_start, c.char_end) for c in plain
    ]
