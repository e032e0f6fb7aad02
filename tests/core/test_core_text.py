"""safe_normalize_v1, question normalization, token counters and sentence splitting."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citebound.text import (
    CharTokenizer,
    get_tokenizer,
    normalize_question,
    safe_normalize_v1,
    split_sentences,
)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("a\x00b", "ab"),
        ("Torque\t45  Nm", "Torque 45 Nm"),
        ("line1\r\nline2\rline3", "line1\nline2\nline3"),
        ("p1\n\n\n\n\np2", "p1\n\np2"),
        ("  padded  \n", "padded"),
        ("bell\x07 and esc\x1b[0m", "bell and esc[0m"),
        ("rtl\u202eevil\u202c text", "rtlevil text"),
        ("zero\u200bwidth\ufeff", "zerowidth"),
        ("Caf\u0065\u0301", "Café"),
        ("keep ZWJ 👩\u200d🔧", "keep ZWJ 👩\u200d🔧"),
        ("| a | b |\n|---|---|", "| a | b |\n|---|---|"),
        ("45 Nm (±2), 3.5 bar; e.g. V-12!", "45 Nm (±2), 3.5 bar; e.g. V-12!"),
    ],
)
def test_safe_normalize_v1(raw: str, clean: str) -> None:
    assert safe_normalize_v1(raw) == clean


@given(st.text())
def test_sanitizer_is_idempotent_and_keeps_words(text: str) -> None:
    once = safe_normalize_v1(text)
    assert safe_normalize_v1(once) == once
    assert not any(ord(c) < 32 and c != "\n" for c in once)
    assert [w for w in once.split() if w.isalnum()] == [w for w in once.split() if w.isalnum()]


def test_question_whitespace_only() -> None:
    assert normalize_question("  Why\tdoes\n\nthe  pump\x00 stop? ") == "Why does the pump stop?"


def test_quicktok_counts_match_tiktoken_reference_values() -> None:
    # Reference counts from tiktoken cl100k_base / o200k_base for these strings.
    cl = get_tokenizer("cl100k_base")
    assert cl.count("hello world") == 2
    assert cl.count("") == 0
    assert cl.count("<|endoftext|>") > 1  # special-token text is counted as plain text
    assert get_tokenizer("o200k_base").count("hello world") == 2
    assert get_tokenizer("cl100k_base") is cl


def test_char_estimator_is_seed_004() -> None:
    assert CharTokenizer().count("abc de") == 6
    assert get_tokenizer("chars").name == "chars"


def test_sentence_split_rules() -> None:
    marker = r"\[C\d+\]"
    text = "Set 3.5 bar [C0]. Then stop! [C1] Why? e.g. this stays. Version v1.2.0 works\nNew line"
    assert split_sentences(text, marker=marker) == [
        "Set 3.5 bar [C0].",
        "Then stop! [C1]",
        "Why?",
        "e.g. this stays.",
        "Version v1.2.0 works",
        "New line",
    ]
    assert split_sentences("   ") == []
