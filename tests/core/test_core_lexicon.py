"""The lexicon (`text/lexicon.py`): each reader's word list pinned, and the folders it frees.

Every set here decides answers, gate verdicts or validator verdicts: the sizes and digests pin
them, so an edit to a word list shows up here and has to be made on purpose (update the pin in
the same commit, and say what it changes).
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from pathlib import Path

import pytest

from citebound.text import lexicon
from citebound.text.lexicon import (
    DIGITS_OF,
    FOLLOWUP_STOPWORDS,
    MAGNITUDE_WORDS,
    MODALS,
    MULTIPLIER_WORDS,
    NEGATIONS,
    OBLIGATION_MODALS,
    PERMISSION_MODALS,
    QUESTION_STOPWORDS,
    REQUEST_WORDS,
    SPELLED_NUMBERS,
    STOPWORDS,
    SUPPORT_STOPWORDS,
    UNFINISHED_END_WORDS,
    UNITS,
    number_words,
    stem,
)

SRC = Path(__file__).resolve().parents[2] / "src" / "citebound"


def _digest(words: Iterable[str]) -> str:
    return hashlib.sha256(" ".join(words).encode()).hexdigest()[:16]


@pytest.mark.parametrize(
    ("name", "size", "digest"),
    [
        ("STOPWORDS", 93, "604f8c99143b97b3"),
        ("MORE_FUNCTION_WORDS", 38, "9eaf167cd5753756"),
        ("REQUEST_WORDS", 9, "87c0861c1c86bd65"),
        ("FOLLOWUP_FILLERS", 12, "bcfcee1d1264d60d"),
        # The validator's support check and `text.overlap`.
        ("SUPPORT_STOPWORDS", 131, "973615b985fb334c"),
        # The gate's and the answerer's question terms (`text.terms`).
        ("QUESTION_STOPWORDS", 102, "6291f982eebf5836"),
        # The follow-up rewrite (`pipeline.conversation`).
        ("FOLLOWUP_STOPWORDS", 83, "213c228d92607804"),
        ("UNITS", 93, "a98d361f45f91add"),
        ("NEGATIONS", 26, "f84fc7b34a6cce4a"),
        ("MODALS", 7, "570d1983c7ce036f"),
    ],
)
def test_word_sets_are_pinned(name: str, size: int, digest: str) -> None:
    words = getattr(lexicon, name)
    assert (len(words), _digest(sorted(words))) == (size, digest)


def test_each_readers_stopwords_are_the_core_and_named_parts() -> None:
    assert STOPWORDS <= SUPPORT_STOPWORDS
    assert STOPWORDS <= QUESTION_STOPWORDS
    assert {"only", "other", "out", "off", "herself"} <= SUPPORT_STOPWORDS - QUESTION_STOPWORDS
    assert QUESTION_STOPWORDS - SUPPORT_STOPWORDS == REQUEST_WORDS
    assert all(len(w) >= 4 for w in FOLLOWUP_STOPWORDS)  # content words carried are 4+ letters
    assert {"describe", "please", "make", "another", "yours"} <= FOLLOWUP_STOPWORDS
    assert not {"list", "itself", "were", "once"} & FOLLOWUP_STOPWORDS


def test_number_words_are_one_list() -> None:
    assert (len(SPELLED_NUMBERS), _digest(f"{k}:{v}" for k, v in SPELLED_NUMBERS.items())) == (
        39,
        "973c42d9a878a39d",
    )
    assert DIGITS_OF["forty"] == "40" and DIGITS_OF["third"] == "3rd"
    assert number_words(20, 90) == (
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "eighty",
        "ninety",
    )
    assert number_words(1, 3, ordinal=True) == ("first", "second", "third")
    assert MAGNITUDE_WORDS == ("hundred", "thousand", "million", "billion", "trillion", "dozen")
    assert MULTIPLIER_WORDS == ("twice", "thrice", "half")


def test_modals_and_line_ends() -> None:
    assert {"must", "shall"} == OBLIGATION_MODALS
    assert {"may", "might", "can", "could"} == PERMISSION_MODALS
    assert {"should"} == MODALS - OBLIGATION_MODALS - PERMISSION_MODALS
    # In order: the answerer's line-continuation pattern joins them as they stand.
    assert (len(UNFINISHED_END_WORDS), _digest(UNFINISHED_END_WORDS)) == (35, "6dc3a8793992ba1f")


def test_word_patterns() -> None:
    assert lexicon.WORD.findall("F´ v1.2 don't") == ["F", "v1", "2", "don", "t"]
    assert lexicon.ALL_WORDS.findall("don't café 45nm") == ["don", "t", "caf", "45nm"]
    assert lexicon.HYPHENATED_WORD.findall("O'Brien's well-known F´") == [
        "O'Brien's",
        "well-known",
        "F",
    ]
    assert lexicon.HYPHENATED_WORD_ACUTE.findall("What does F´ use?") == [
        "What",
        "does",
        "F´",
        "use",
    ]
    assert lexicon.THOUSANDS.sub("", "10,000 and 1,5 and 1,0000") == "10000 and 1,5 and 1,0000"
    assert [stem(w) for w in ("valves", "tightening", "studies", "glass")] == [
        "valv",
        "tighten",
        "study",
        "glass",
    ]
    assert "km" in UNITS and "not" in NEGATIONS and "cant" in NEGATIONS


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_lexicon_imports_nothing_from_citebound() -> None:
    assert not {m for m in _imports(SRC / "text" / "lexicon.py") if m.startswith("citebound")}


@pytest.mark.parametrize("folder", ["text", "prompt"])
def test_word_layer_folders_do_not_import_the_validator(folder: str) -> None:
    """`text/` and `prompt/` read words from the lexicon, never from `validate/`: the validator
    imports them, so the other way round makes an import loop."""
    offenders = sorted(
        str(p.relative_to(SRC))
        for p in (SRC / folder).rglob("*.py")
        if any(m.startswith("citebound.validate") for m in _imports(p))
    )
    assert offenders == []
