"""The bounded extra evidence slot (`[retrieval] extra_chunks`, assemble/extra.py): a row that
`max_chunks` or the per-document cap cut joins the evidence only when it is a section of the
best row's document holding more of the question's key terms than the best row; every other row
stays cut. Each case has its control (the slot off, another document, fewer terms)."""

from __future__ import annotations

from typing import Any

from assembly_factories import make_bundle, make_row

from citebound.assemble import assemble
from citebound.assemble.extra import closer_section
from citebound.contracts import ReasonCode
from citebound.contracts.retrieval import RetrievalRow
from citebound.policy import Policy, load_policy

STRICT = load_policy("strict-v1")
QUESTION = "How do I run the tests of the build system?"
BEST_DOC = {"knowledge_id": "doc-uts", "source": {"document": "Build System Tests"}}
SECTION = "The build system runs its tests with the pytest runner."
_OTHERS = ("alpha", "bravo", "charlie", "delta", "echo")


def _policy(extra: int, **top: object) -> Policy:
    retrieval = STRICT.model_dump()["retrieval"] | {"extra_chunks": extra}
    return STRICT.evolve(retrieval=retrieval, **top)


def _ids(out: Any) -> list[str]:
    return [e.chunk_id for e in out.selected_evidence]


def _codes(out: Any) -> dict[str, str]:
    return {d.chunk_id: d.reason_code for d in out.assembly_metrics.drops}


def _rows(section: str = SECTION, **where: Any) -> list[dict[str, Any]]:
    """The best row (its document's overview: tests, build, system), five rows of other
    documents, then a 7th row, by default another section of the best row's document that
    also says "runs"."""
    rows = [make_row(0, "These tests check the build system.", **BEST_DOC)]
    rows += [
        make_row(r, f"Board {_OTHERS[r - 1]} B{r} has a build of its system.") for r in range(1, 6)
    ]
    rows.append(make_row(6, section, **(where or BEST_DOC)))
    return rows


def test_policy_ships_one_extra_slot_in_strict_presets_only() -> None:
    assert STRICT.retrieval.extra_chunks == 1
    assert load_policy("superprompt-v1").retrieval.extra_chunks == 1
    assert load_policy("hybridrag").retrieval.extra_chunks == 0


def test_closer_section_of_the_best_document_is_admitted_at_its_rank() -> None:
    bundle = make_bundle(_rows(), user_question=QUESTION)
    off = assemble(bundle, _policy(0))
    assert _ids(off) == [f"chunk-{r:03d}" for r in range(6)]  # control: max_chunks 6 cuts it
    assert _codes(off) == {"chunk-006": ReasonCode.DROP_MAX_CHUNKS}
    on = assemble(bundle, _policy(1))
    assert _ids(on) == [f"chunk-{r:03d}" for r in range(7)]
    assert _codes(on) == {}
    assert on.selected_evidence[-1].citation_anchor == "C6"


def test_same_section_in_another_document_stays_cut() -> None:
    other = {"knowledge_id": "doc-other", "source": {"document": "Build System Tests"}}
    out = assemble(make_bundle(_rows(**other), user_question=QUESTION), _policy(1))
    assert _codes(out) == {"chunk-006": ReasonCode.DROP_MAX_CHUNKS}


def test_section_holding_no_more_terms_than_the_best_row_stays_cut() -> None:
    rows = _rows("The build system tests are listed in the appendix.")
    out = assemble(make_bundle(rows, user_question=QUESTION), _policy(1))
    assert _codes(out) == {"chunk-006": ReasonCode.DROP_MAX_CHUNKS}


def test_row_cut_by_the_per_document_cap_is_admitted_and_slots_bound_it() -> None:
    rows = _rows()[:4]  # room left: only the per-document cap cuts
    rows[1] = make_row(1, "The build system tests are listed here.", **BEST_DOC)
    rows.append(make_row(4, SECTION, **BEST_DOC))
    rows.append(make_row(5, "To run the system tests, build them with pytest.", **BEST_DOC))
    bundle = make_bundle(rows, user_question=QUESTION)
    off = assemble(bundle, _policy(0))
    assert _codes(off) == {
        "chunk-004": ReasonCode.DROP_PER_KNOWLEDGE_CAP,
        "chunk-005": ReasonCode.DROP_PER_KNOWLEDGE_CAP,
    }
    one = assemble(bundle, _policy(1))
    assert _ids(one) == [f"chunk-{r:03d}" for r in range(5)]  # the first in rank order
    two = assemble(bundle, _policy(2))
    assert _ids(two) == [f"chunk-{r:03d}" for r in range(6)]


def test_extra_row_over_the_evidence_budget_is_not_admitted() -> None:
    bundle = make_bundle(_rows(), user_question=QUESTION)
    six = assemble(bundle, _policy(0)).assembly_metrics.evidence_token_count
    assert "chunk-006" in _ids(assemble(bundle, _policy(1)))  # control: room for it
    out = assemble(bundle, _policy(1, max_evidence_tokens=six + 5))
    assert _codes(out) == {"chunk-006": ReasonCode.DROP_MAX_CHUNKS}
    assert out.assembly_metrics.evidence_token_count == six


def test_closer_section_needs_a_question_with_key_terms() -> None:
    best = RetrievalRow.model_validate(make_row(0, "The pump.", knowledge_id="d"))
    row = RetrievalRow.model_validate(make_row(1, "The pump is primed.", knowledge_id="d"))
    assert closer_section("Is the pump primed?", row, best)
    assert not closer_section("Is the pump primed?", best, row)
    assert not closer_section(None, row, best)
    assert not closer_section("What is it?", row, best)
