"""Sentence segmentation cannot be gamed: a claim glued to a cited one is still its own sentence.

Issue #14: "The pump never needs maintenance.The pump runs at 45 bar [C0]." used to pass as one
cited sentence (also with `etc.`, `A.`, `…` and `。` as separators). Every join below must fail
with UNCITED_FACTUAL_STATEMENT, while names, initials, qualified names and decimals stay whole.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citebound.contracts.enums import ReasonCode
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.text import split_sentences
from citebound.validate import validate_text

EVIDENCE = "The pump runs at 45 bar. Written by J. R. R. Tolkien in 1937."
BUNDLE = make_answer_bundle([EVIDENCE])
POLICY = load_policy("strict-v1")
CITED = "The pump runs at 45 bar [C0]."
MARKER = r"\[C\d+\]"


def _fails_uncited(text: str) -> None:
    r = validate_text(BUNDLE, text, POLICY)
    assert r.validation_status == "FAILED", text
    assert ReasonCode.UNCITED_FACTUAL_STATEMENT.value in r.reason_codes, (text, r.message)


@pytest.mark.parametrize(
    "text",
    [
        "The pump never needs maintenance.The pump runs at 45 bar [C0].",
        "The pump never needs maintenance etc. The pump runs at 45 bar [C0].",
        "The pump never needs maintenance etc.The pump runs at 45 bar [C0].",
        "The pump never needs grade A. The pump runs at 45 bar [C0].",
        "The pump never needs maintenance… The pump runs at 45 bar [C0].",
        "The pump never needs maintenance…The pump runs at 45 bar [C0].",
        "The pump never needs maintenance。The pump runs at 45 bar [C0].",
        "The pump never needs maintenance?The pump runs at 45 bar [C0].",
        'The pump never needs maintenance."The pump runs at 45 bar [C0].',
        "The pump never needs maintenance.\u200bThe pump runs at 45 bar [C0].",
        "The pump never needs maintenance\u2028The pump runs at 45 bar [C0].",
        "The pump never needs maintenance\rThe pump runs at 45 bar [C0].",
        "The pump never needs maintenance • The pump runs at 45 bar [C0].",
        "The pump runs at 45 bar.[C0] The pump never needs maintenance.",
    ],
)
def test_glued_claims_fail_uncited(text: str) -> None:
    _fails_uncited(text)


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("Written by J. R. R. Tolkien in 1937 [C0].", 1),
        ("Use Fw.BufferSend and Svc.BufferManager [C0].", 1),
        ("Command Dispatcher.Instance ids must match [C0].", 1),
        ("Dr. A. Smith wrote it, e.g. Python code, i.e. NASA code [C0].", 1),
        ("See Fig. 3 and No. 5, version 3.5 and v1.2.0, e.g.x [C0].", 1),
        ("Torque to 40 Nm. [C0] Then stop!", 2),
    ],
)
def test_names_and_abbreviations_stay_whole(text: str, pieces: int) -> None:
    assert len(split_sentences(text, marker=MARKER)) == pieces


# Words of 4+ letters that are not abbreviations: `Dr. Pumps` rightly stays one sentence.
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=4, max_size=9).filter(
    lambda w: w != "approx"
)
CLAIM = st.lists(WORD, min_size=2, max_size=6).map(lambda ws: " ".join(ws).capitalize())
SEPARATOR = st.sampled_from(
    [".", "!", "?", "…", "。", "！", "？", " etc.", " A.", ".\u200b", '."', "\n", "\r\n",
     "\u2028", "\x85", " •"]
)  # fmt: skip
SPACE = st.sampled_from(["", " ", "  ", "\t", "\u00a0"])
OPENER = st.sampled_from(["The", "This", "It", "Pumps", "Valves"])


@settings(max_examples=300, deadline=None)
@given(claim=CLAIM, sep=SEPARATOR, space=SPACE, opener=OPENER)
def test_generated_joins_fail_uncited(claim: str, sep: str, space: str, opener: str) -> None:
    """An uncited claim + any separator + a cited sentence is never one cited sentence."""
    if sep in (" A.", " •") and opener not in ("The", "This", "It"):
        opener = "The"  # `grade A. Pumps` reads as an initial; `The` always opens a sentence.
    if sep == " •" and not space:
        space = " "  # an inline bullet needs a space after it
    text = f"{claim}{sep}{space}{opener} pump runs at 45 bar [C0]."
    _fails_uncited(text)
