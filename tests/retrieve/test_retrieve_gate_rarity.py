"""The gate's rare pass: the best row holds the question's rarest words (idf-weighted)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pydantic import ValidationError
from retrieve_helpers import row

from citebound.contracts import GateMeasures, GateTrace, ReasonCode
from citebound.gate.measures import top_coverage, weighted_rarity
from citebound.gate.rule import apply_gate, lowest_score, refusal
from citebound.index.lexical import LexicalDoc, LexicalIndex, build_lexical
from citebound.policy import GatePolicy, load_policy
from citebound.text.terms import terms

RARE = GatePolicy(min_score=0.76, min_chunks=1, rare_min_score=0.60, rare_share=0.5)
QUESTION = "When was the Maastricht treaty signed?"
IDF = {"maastricht": 3.0, "treaty": 1.0, "signed": 1.0}


def rarity(word: str) -> float:
    return IDF.get(word.lower(), 0.0)


def measured(share: float | None) -> GateMeasures:
    return GateMeasures(key_terms=3, key_terms_held=1, names_unfound=0, rarity_held=share)


def test_a_rare_word_held_weighs_more_than_common_ones() -> None:
    # Maastricht carries 3 of the 5 units of the question's rarity; treaty + signed 2.
    assert weighted_rarity(QUESTION, terms("The Maastricht summit."), rarity) == 0.6
    assert weighted_rarity(QUESTION, terms("The treaty was signed."), rarity) == 0.4
    assert weighted_rarity(QUESTION, terms("Nothing of it."), rarity) == 0.0
    # No word rarer than nothing (an empty collection): not measured, never a pass.
    assert weighted_rarity(QUESTION, terms("Maastricht"), lambda w: 0.0) is None


def test_top_coverage_measures_rarity_only_when_given() -> None:
    rows = [row(0, 0.7, "The Maastricht summit of 1991."), row(1, 0.6, "A treaty was signed.")]
    with_rarity = top_coverage(QUESTION, rows, rarity)
    assert with_rarity is not None and with_rarity.rarity_held == 0.6
    plain = top_coverage(QUESTION, rows)
    assert plain is not None and plain.rarity_held is None
    # The other counts do not depend on it.
    assert plain.model_copy(update={"rarity_held": 0.6}) == with_rarity


@pytest.mark.parametrize(
    ("top", "share", "reason"),
    [
        (0.62, 0.6, None),  # the rare words held, above rare_min_score
        (0.60, 0.5, None),  # both bounds inclusive
        (0.62, 0.49, ReasonCode.GATE_BELOW_MIN_SCORE),  # too little of the rarity held
        (0.59, 0.9, ReasonCode.GATE_BELOW_MIN_SCORE),  # below rare_min_score
        (0.62, None, ReasonCode.GATE_BELOW_MIN_SCORE),  # not measured: no rare pass
        (0.80, 0.0, None),  # min_score suffices alone, as before
    ],
)
def test_the_rare_pass(top: float, share: float | None, reason: ReasonCode | None) -> None:
    trace = apply_gate([top], RARE, measured(share))
    assert trace.reason_code == (reason.value if reason else None)
    assert trace.rarity_held == share
    # The trace gives assembly the same measure back, so both stages decide alike.
    assert trace.measures == measured(share)
    # Without rare_min_score the rarity changes nothing.
    plain = RARE.model_copy(update={"rare_min_score": None})
    assert refusal(plain, top, measured(share), 0.76) == refusal(plain, top, measured(None), 0.76)


def test_rare_min_score_above_min_score_is_rejected_and_lowers_the_lowest_score() -> None:
    with pytest.raises(ValidationError, match="rare_min_score"):
        GatePolicy(min_score=0.5, min_chunks=1, rare_min_score=0.6)
    assert lowest_score(RARE, 0.76) == 0.60
    with pytest.raises(ValidationError):
        GateTrace(passed=True, min_score=0.76, min_chunks=1, chunks_above_min_score=1,
                  rarity_held=1.5)  # fmt: skip


def test_strict_v1_has_the_rare_pass_and_the_other_presets_do_not() -> None:
    gate = load_policy("strict-v1").gate
    assert gate.rare_min_score is not None and gate.rare_min_score < gate.min_score
    assert 0 < gate.rare_share <= 1
    # The lowest passing similarity stays the covered pass's, so the per-row floor holds.
    assert lowest_score(gate, gate.min_score) == gate.covered_min_score
    for name in ("hybridrag", "superprompt-v1"):
        assert load_policy(name).gate.rare_min_score is None


def _index(tmp_path: Path, texts: list[str]) -> LexicalIndex:
    docs = [LexicalDoc(row=i, text=t, equipment_id=None, knowledge_type="manual", event_day=None)
            for i, t in enumerate(texts)]  # fmt: skip
    random.Random(3).shuffle(docs)
    build_lexical(tmp_path / "lex", docs, "en_stem")
    return LexicalIndex(tmp_path / "lex", "en_stem")


def test_lexical_idf_orders_words_by_rarity(tmp_path: Path) -> None:
    ix = _index(tmp_path, ["pump seal", "pump valve", "pump shaft", "pumps and seals"])
    # "pump" is in every row, "seal" in two, "valve" in one, "turbine" in none.
    assert ix.idf("Pumping") < ix.idf("seals") < ix.idf("valve") < ix.idf("turbine")
    assert ix.idf("...") == 0.0
