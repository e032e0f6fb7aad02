"""The extractive answerer's tuning values come from the policy's [answerer] section."""

from __future__ import annotations

import pytest
from llm_helpers import fast_policy, make_bundle

from citebound.errors import ConfigError
from citebound.llm import ExtractiveProvider, make_provider
from citebound.policy import PRESETS, AnswererPolicy, load_policy

REFUSAL = fast_policy().refusal.model_text


def test_every_preset_states_its_answerer_values_and_they_are_fingerprinted() -> None:
    for name in PRESETS:
        policy = load_policy(name)
        assert isinstance(policy.answerer, AnswererPolicy)
        changed = policy.evolve(answerer={**policy.answerer.model_dump(), "tie_share": 1.5})
        assert changed.fingerprint != policy.fingerprint


def test_make_provider_uses_the_policys_answerer_values() -> None:
    settings = AnswererPolicy(floor=0.35, max_tied=1)
    provider = make_provider("extractive", answerer=settings)
    assert isinstance(provider, ExtractiveProvider)
    assert provider.settings == settings
    assert ExtractiveProvider(settings, floor=0.1).settings.floor == 0.1
    with pytest.raises(ConfigError, match="max_tied"):
        ExtractiveProvider(max_tied=0)


def test_a_restatement_is_left_out_and_no_weaker_sentence_joins_in_its_place() -> None:
    texts = [
        "Every trip function of the ESD-3 must be proof tested every 12 months.",
        "The ESD-3 emergency shutdown panel must be proof tested every 12 months.",
        "On 2024-11-05 the ESD-3 emergency shutdown panel tripped both pumps.",
    ]
    bundle = make_bundle(
        texts, "How often must the ESD-3 emergency shutdown panel be proof tested?"
    )
    assert ExtractiveProvider().answer(bundle, REFUSAL) == (
        "Every trip function of the ESD-3 must be proof tested every 12 months. [C0]"
    )


def test_near_ties_are_quoted_unless_the_lead_has_the_number_asked_for() -> None:
    texts = [
        "The Normans adopted the religion of the Franks.",
        "The Norman religion became Catholicism within a century.",
    ]
    tied = ExtractiveProvider().answer(make_bundle(texts, "What was the Norman religion?"), REFUSAL)
    assert tied == (
        "The Normans adopted the religion of the Franks. [C0] "
        "The Norman religion became Catholicism within a century. [C1]"
    )
    off = ExtractiveProvider(tie_share=1.5)
    assert off.answer(make_bundle(texts, "What was the Norman religion?"), REFUSAL) == (
        "The Normans adopted the religion of the Franks. [C0]"
    )
    numbers = ["The pump runs at 40 bar.", "The pump runs at 40 bar in summer too."]
    assert ExtractiveProvider().answer(
        make_bundle(numbers, "At what pressure does the pump run?"), REFUSAL
    ) == ("The pump runs at 40 bar. [C0]")
