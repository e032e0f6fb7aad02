"""The Python cl100k counter (text/bpe_py.py) counts exactly what quicktok counts.

`HybridCl100k` moves from it to quicktok in the middle of a process, so any difference would
change prompts and selections depending on how much a process has counted: every check here
compares with quicktok itself, on real documents and on generated Unicode text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import quicktok
from hypothesis import given, settings
from hypothesis import strategies as st

import citebound.text.tokens as tokens
from citebound.text.bpe_py import PyCl100k, merge_count

SAMPLE = Path(tokens.__file__).parents[1] / "sample_corpus"

TRICKY = [
    "",
    " ",
    "'s 'S 'ſ 'LL 'Ll 've 'RE x's don't DON'T '",
    "  hello\r\n\r\n  world  ",
    "\x1c\x1d abc\x85\xa0def\u2028g\u3000h",
    "123456 7 ٣٤٥٦ ½ ⅔ 1,000.5",
    "emoji 😀🎉👩‍👩‍👧 中文字符 한국어 𝔘𝔫𝔦 𐍈",
    "trailing spaces   ",
    "\n\n\n",
    "a\u0301b\u0300 Ñandú",
    "  \t\n x \t",
    "ok!!!\n\n...---***\r\n",
    "<|endoftext|> <|fim_prefix|>",
    "x" * 3000,
    "https://example.com/a_b-c?d=1&e=%20#frag",
]


@pytest.fixture(scope="module")
def py_count() -> Callable[[str], int]:
    return PyCl100k().count


@pytest.fixture(scope="module")
def qt_count() -> Callable[[str], int]:
    return quicktok.Tokenizer("cl100k_base").count  # type: ignore[no-any-return]


def _mismatches(texts: list[str], a: Callable[[str], int], b: Callable[[str], int]) -> list[str]:
    return [t[:80] for t in texts if a(t) != b(t)]


def test_tricky_strings(py_count: Callable[[str], int], qt_count: Callable[[str], int]) -> None:
    assert _mismatches(TRICKY, py_count, qt_count) == []
    assert py_count("hello world") == 2  # tiktoken's reference value


def test_sample_corpus(py_count: Callable[[str], int], qt_count: Callable[[str], int]) -> None:
    texts = [p.read_text("utf-8") for p in sorted(SAMPLE.rglob("*.md"))]
    assert len(texts) >= 5
    # whole documents, and their paragraphs (the sizes assembly counts)
    paragraphs = [p for t in texts for p in t.split("\n\n")]
    assert _mismatches(texts + paragraphs, py_count, qt_count) == []


def test_shared_data_sets(
    shared_dataset: Callable[[str], Path],
    py_count: Callable[[str], int],
    qt_count: Callable[[str], int],
) -> None:
    docs = shared_dataset("fprime-docs")
    texts = [p.read_text("utf-8", errors="replace") for p in sorted(docs.rglob("*.md"))[:300]]
    lines = (shared_dataset("scifact") / "corpus.jsonl").read_text("utf-8").splitlines()
    texts += [json.loads(line)["text"] for line in lines[:1500]]
    squad = json.loads((shared_dataset("squad2-dev") / "dev-v2.0-part1.json").read_text("utf-8"))
    texts += [p["context"] for a in squad["data"][:20] for p in a["paragraphs"]]
    assert len(texts) > 1000
    assert _mismatches(texts, py_count, qt_count) == []


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=60))
def test_generated_unicode(text: str) -> None:
    py, qt = _counters()
    assert py(text) == qt(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("aZ9٣ _'\n\r\t.,-ſ€😀中\u00a0\u2028sStT")), max_size=40))
def test_generated_mixtures(chars: list[str]) -> None:
    py, qt = _counters()
    text = "".join(chars)
    assert py(text) == qt(text)


_CACHE: dict[str, Callable[[str], int]] = {}


def _counters() -> tuple[Callable[[str], int], Callable[[str], int]]:
    if not _CACHE:
        _CACHE["py"] = PyCl100k().count
        _CACHE["qt"] = quicktok.Tokenizer("cl100k_base").count
    return _CACHE["py"], _CACHE["qt"]


def test_merge_count_is_byte_pair_merge() -> None:
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"bc": 4, b"abc": 5}
    assert merge_count(b"abc", ranks) == 1
    assert merge_count(b"abcab", {**ranks, b"abca": 9}) == 2  # abc + ab
    assert merge_count(b"cba", ranks) == 3


def test_hybrid_switches_to_quicktok_with_the_same_counts(
    monkeypatch: pytest.MonkeyPatch, qt_count: Callable[[str], int]
) -> None:
    monkeypatch.setattr(tokens, "PY_COUNT_BUDGET_CHARS", 40)
    fast_calls: list[str] = []
    py = PyCl100k().count

    def fast(text: str) -> int:
        fast_calls.append(text)
        return py(text)

    hybrid = tokens.HybridCl100k(fast)
    first, second = "The CX-9 valve opens at 10.5 bar.", "Torque the bolts to 40 Nm, then"
    assert hybrid.count(first) == qt_count(first)
    assert hybrid.count(second) == qt_count(second)  # over budget: quicktok
    assert fast_calls == [first]
    assert hybrid.count("never in python") == qt_count("never in python")
    assert fast_calls == [first]
    assert hybrid.decode(hybrid.encode(first)) == first


def test_get_tokenizer_uses_quicktok_when_the_cache_is_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tokens._load_tokenizer.cache_clear()
    try:
        with monkeypatch.context() as m:
            m.setenv("CITEBOUND_CACHE_DIR", "off")
            assert isinstance(tokens.get_tokenizer("cl100k_base"), tokens.QuicktokTokenizer)
    finally:
        tokens._load_tokenizer.cache_clear()
    assert isinstance(tokens.get_tokenizer("cl100k_base"), tokens.HybridCl100k)
    assert isinstance(tokens.get_tokenizer("o200k_base"), tokens.QuicktokTokenizer)
