"""Anchors shown in the order the answer cites them (#15): renumbering, re-validation, styles."""

from __future__ import annotations

import random

import pytest
from respond_samples import POLICY

from citebound.contracts.enums import CitationStyle, PublicStatus, ValidationStatus
from citebound.contracts.execution import ValidationResult
from citebound.contracts.public import PublicResponse
from citebound.prompt.anchors import citation_format
from citebound.respond import package_response
from citebound.respond import renumber as rn
from citebound.testing.bundles import make_answer_bundle, make_llm_result
from citebound.validate import EvidenceView, validate_answer

# One distinct fact per chunk, so each answer sentence is a quotation of the chunk it cites.
FACTS = [
    "Torque the M8 cylinder head bolts to 25 Nm in a cross pattern.",
    "Replace the hydraulic filter every 500 operating hours.",
    "Check the coolant level only when the engine is cold.",
    "Drain the condensate trap at the start of every shift.",
    "Grease the fan bearings with 12 g of lithium grease monthly.",
]
STYLES = list(CitationStyle)


def _marker(style: CitationStyle, position: int) -> str:
    fmt = citation_format(style)
    return fmt.marker(fmt.label(position))


def _answer(style: CitationStyle, cited: list[int]) -> str:
    """One quoted sentence per cited chunk position, in `cited` order."""
    return " ".join(f"{FACTS[i].rstrip('.')} {_marker(style, i)}." for i in cited)


def _package(style: CitationStyle, text: str) -> tuple[ValidationResult, PublicResponse]:
    b = make_answer_bundle(FACTS, style=style)
    llm = make_llm_result(b, text)
    v = validate_answer(b, llm, POLICY)
    assert v.validation_status is ValidationStatus.PASSED, v.message
    return v, package_response(b, llm, v, policy=POLICY, latency_ms=1.0)


def test_renumbering_is_first_citation_order_then_rank_order() -> None:
    anchors = ["C0", "C1", "C2", "C3"]
    assert rn.renumbering(["C2", "C0"], anchors, "C") == {
        "C2": "C0",
        "C0": "C1",
        "C1": "C2",
        "C3": "C3",
    }
    # Repeats count once, at their first citation; unknown anchors are ignored.
    assert rn.shown_anchors(["C3", "C3", "C1", "C9"], anchors, "C") == {"C3": "C0", "C1": "C1"}
    # Already in order: the identity.
    assert rn.renumbering(["C0", "C1"], anchors, "C") == {a: a for a in anchors}


def test_relabel_renames_exact_markers_in_one_pass_and_nothing_else() -> None:
    swap = {"C0": "C1", "C1": "C0"}
    text = "A [C1][C0]. B [C0] [c1] (C0) C1 [C10]."
    # A swap must not chain (C0 -> C1 -> C0); near misses, bare words and unknown labels stay.
    assert rn.relabel_text(text, swap, "C") == "A [C0][C1]. B [C1] [c1] (C0) C1 [C10]."


@pytest.mark.parametrize("style", STYLES, ids=lambda s: s.value)
def test_a_gap_is_closed_in_every_style(style: CitationStyle) -> None:
    v, r = _package(style, _answer(style, [0, 2]))
    assert v.validated_citations == [citation_format(style).label(i) for i in (0, 2)]
    assert r.status is PublicStatus.OK
    assert r.answer == _answer(style, [0, 1]).replace(FACTS[1].rstrip("."), FACTS[2].rstrip("."))
    shown = [c.anchor for c in r.citations]
    assert shown == [citation_format(style).label(i) for i in (0, 1)]
    assert [c.knowledge_id for c in r.citations] == ["kb-0", "kb-2"]
    assert rn.numbering_problem(r.answer, shown, style) is None


@pytest.mark.parametrize("style", STYLES, ids=lambda s: s.value)
def test_adjacent_and_repeated_markers(style: CitationStyle) -> None:
    m = [_marker(style, i) for i in range(5)]
    text = (
        f"{FACTS[3].rstrip('.')} {m[3]}. "
        f"{FACTS[1].rstrip('.')} {m[1]}{m[3]}. "
        f"{FACTS[3].rstrip('.')} {m[3]}."
    )
    _, r = _package(style, text)
    s = [_marker(style, i) for i in range(2)]
    assert r.answer == (
        f"{FACTS[3].rstrip('.')} {s[0]}. "
        f"{FACTS[1].rstrip('.')} {s[1]}{s[0]}. "
        f"{FACTS[3].rstrip('.')} {s[0]}."
    )
    assert [c.knowledge_id for c in r.citations] == ["kb-3", "kb-1"]


def test_any_order_of_any_subset_reads_without_gaps() -> None:
    """Random subsets and orders (fixed seed), every style: shown anchors are the first labels
    in citation order, each still names the chunk the model cited there."""
    rng = random.Random(15)
    for _ in range(40):
        style = rng.choice(STYLES)
        cited = rng.sample(range(len(FACTS)), rng.randint(1, len(FACTS)))
        v, r = _package(style, _answer(style, cited))
        anchors = [c.anchor for c in r.citations]
        assert rn.numbering_problem(r.answer, anchors, style) is None
        assert [c.knowledge_id for c in r.citations] == [f"kb-{i}" for i in cited]
        assert len(v.validated_citations) == len(cited)


def test_the_same_inputs_give_the_same_bytes() -> None:
    text = _answer(CitationStyle.C, [4, 0, 2])
    first = _package(CitationStyle.C, text)[1]
    again = _package(CitationStyle.C, text)[1]
    assert first.model_dump_json() == again.model_dump_json()


def test_refusals_and_failures_have_nothing_to_renumber() -> None:
    b = make_answer_bundle(FACTS)
    view = EvidenceView.from_bundle(b)
    for text in (POLICY.refusal.model_text, _answer(CitationStyle.C, [2]) + " [C9]"):
        v = validate_answer(b, make_llm_result(b, text), POLICY)
        out = rn.renumber(view, v, POLICY)
        assert (out.text, dict(out.mapping), dict(out.shown)) == (v.validated_answer_text, {}, {})
    v = validate_answer(b, make_llm_result(b, POLICY.refusal.model_text), POLICY)
    r = package_response(b, make_llm_result(b, POLICY.refusal.model_text), v, policy=POLICY)
    assert (r.status, r.answer) == (PublicStatus.NO_EVIDENCE, POLICY.refusal.model_text)


def test_a_renumbered_text_that_validates_differently_is_not_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fail closed: if the relabelled answer's verdict differs in anything (here a metric),
    packaging refuses it with INTERNAL_ERROR instead of showing unvalidated text."""
    b = make_answer_bundle(FACTS)
    llm = make_llm_result(b, _answer(CitationStyle.C, [2, 0]))
    v = validate_answer(b, llm, POLICY)
    real = rn.validate_view

    def drifting(*args: object, **kw: object) -> ValidationResult:
        out = real(*args, **kw)  # type: ignore[arg-type]
        metrics = out.grounding_metrics.model_copy(update={"citation_count": 99})
        return out.model_copy(update={"grounding_metrics": metrics})

    monkeypatch.setattr(rn, "validate_view", drifting)
    with pytest.raises(rn.RenumberError, match="grounding_metrics"):
        rn.renumber(EvidenceView.from_bundle(b), v, POLICY)
    r = package_response(b, llm, v, policy=POLICY)
    assert (r.status, r.answer, r.citations) == (PublicStatus.FAILED, "", [])
    assert r.failure_reason == "INTERNAL_ERROR"


def test_in_order_answers_are_not_validated_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """The identity renaming leaves text and evidence as validated: no second validation."""
    b = make_answer_bundle(FACTS)
    llm = make_llm_result(b, _answer(CitationStyle.C, [0, 1]))
    v = validate_answer(b, llm, POLICY)

    def never(*args: object, **kw: object) -> ValidationResult:
        raise AssertionError("validated again")

    monkeypatch.setattr(rn, "validate_view", never)
    r = package_response(b, llm, v, policy=POLICY)
    assert r.answer == v.validated_answer_text and [c.anchor for c in r.citations] == ["C0", "C1"]


def test_numbering_problem_names_gaps_and_source_order() -> None:
    assert rn.numbering_problem("A [C1].", ["C1"], "C") == (
        "anchors cited in the order C1; expected C0"
    )
    assert rn.numbering_problem("A [1]. B [2].", ["2", "1"], "decimal") == (
        "sources listed as 2, 1; expected 1, 2"
    )
    assert rn.numbering_problem("A [¹]. B [²][¹].", ["¹", "²"], "superscript") is None
    assert rn.numbering_problem("A [^1]. B [^3].", ["^1", "^3"], "footnote") is not None


def test_citations_outside_the_evidence_fail_closed_even_in_order() -> None:
    b = make_answer_bundle(FACTS)
    text = _answer(CitationStyle.C, [0])
    v = validate_answer(b, make_llm_result(b, text), POLICY)
    forged = v.model_copy(update={"validated_citations": ["C0", "C7"]})
    with pytest.raises(rn.RenumberError, match="C7"):
        rn.renumber(EvidenceView.from_bundle(b), forged, POLICY)


@pytest.mark.parametrize("style", STYLES)
def test_package_answer_returns_the_shown_anchors_the_audit_keeps(style: CitationStyle) -> None:
    from citebound.respond import package_answer

    b = make_answer_bundle(FACTS, style=style)
    llm = make_llm_result(b, _answer(style, [3, 0, 3, 2]))
    v = validate_answer(b, llm, POLICY)
    assert v.validation_status is ValidationStatus.PASSED
    out = package_answer(b, llm, v, policy=POLICY, latency_ms=1.0)
    with_view = package_answer(
        b, llm, v, policy=POLICY, latency_ms=1.0, view=EvidenceView.from_bundle(b)
    )
    assert out == with_view and out.response == package_response(
        b, llm, v, policy=POLICY, latency_ms=1.0
    )
    # the same mapping build_audit_record derived before it was passed along
    assert out.display_anchors == rn.shown_of(b, v)
    assert list(out.display_anchors or {}) == [b.allowed_anchors[i] for i in (3, 0, 2)]
    assert [c.anchor for c in out.response.citations] == list((out.display_anchors or {}).values())
    rejected = make_llm_result(b, _answer(style, [1]) + " Mars has two moons.")
    failed = package_answer(b, rejected, validate_answer(b, rejected, POLICY), policy=POLICY)
    assert failed.response.status is PublicStatus.FAILED and failed.display_anchors is None
