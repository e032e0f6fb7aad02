"""The evidence window a verifier reads (validate/premise.py): whole when it fits, else the
sentences that share most with the claim (far-apart ones included), each with the sentence
before it, in document order, within the budget."""

from __future__ import annotations

from citebound.validate.premise import window


def _words(text: str) -> int:
    return len(text.split())


EVIDENCE = (
    "The pump station was built in 1998. It serves the north district. "
    "Maintenance crews visit it weekly. The station has three pumps. "
    "Each pump delivers 40 litres per second. The district council owns the station."
)


def test_evidence_that_fits_is_the_window_whole() -> None:
    assert window("Who owns it?", EVIDENCE, count=_words, budget=100) == EVIDENCE


def test_a_long_evidence_gives_the_sentences_the_claim_needs_in_document_order() -> None:
    claim = "The council-owned station has three pumps."
    w = window(claim, EVIDENCE, count=_words, budget=20)
    assert _words(w) <= 20
    # Both facts of the fused claim, far apart in the evidence, are in the window, in order.
    assert w.index("The station has three pumps.") < w.index("The district council owns")
    assert "built in 1998" not in w


def test_the_sentence_before_a_chosen_one_joins_when_there_is_room() -> None:
    w = window("Crews visit weekly.", EVIDENCE, count=_words, budget=12)
    assert w == "It serves the north district. Maintenance crews visit it weekly."


def test_the_best_sentence_stays_even_when_it_alone_exceeds_the_budget() -> None:
    w = window("Each pump delivers 40 litres per second.", EVIDENCE, count=_words, budget=3)
    assert w == "Each pump delivers 40 litres per second."


def test_the_window_is_deterministic() -> None:
    claim = "The station was built in 1998 and has three pumps."
    assert len({window(claim, EVIDENCE, count=_words, budget=15) for _ in range(5)}) == 1
