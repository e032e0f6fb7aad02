"""The extractive answerer's tuning values come from the policy's [answerer] section."""

from __future__ import annotations

import pytest
from llm_helpers import fast_policy, make_bundle

from citebound.contracts import CitationStyle
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


def test_the_sentence_after_the_lead_joins_when_it_brings_a_question_term() -> None:
    texts = [
        "Ethelred fled to Normandy in 1013. He was forced from his kingdom by Sweyn Forkbeard. "
        "His stay lasted three years."
    ]
    question = "Who forced Ethelred to flee to Normandy?"
    bundle = make_bundle(texts, question)
    joined = ExtractiveProvider().answer(bundle, REFUSAL)
    assert joined == (
        "Ethelred fled to Normandy in 1013. [C0] "
        "He was forced from his kingdom by Sweyn Forkbeard. [C0]"
    )
    alone = ExtractiveProvider(neighbours="none").answer(bundle, REFUSAL)
    assert alone == "Ethelred fled to Normandy in 1013. [C0]"
    # A following sentence without a question term is filler, never added.
    bare = make_bundle(["Ethelred fled to Normandy in 1013. The weather was fine."], question)
    plain = ExtractiveProvider(asked_scope=False).answer(bare, REFUSAL)
    assert plain == "Ethelred fled to Normandy in 1013. [C0]"
    # asked_scope (asked.py): neither sentence says who forced him; the one after the lead
    # did above, which is what let the lead qualify.
    assert ExtractiveProvider().answer(bare, REFUSAL) == REFUSAL


def test_what_is_x_leads_with_the_sentence_that_defines_x() -> None:
    texts = [
        "This class is used by queued components and by the scheduler.",
        "Queued component: has no thread but does have a queue.",
    ]
    question = "What is a queued component?"
    bundle = make_bundle(texts, question)
    # The passing mention ranks first, yet the definition answers.
    assert ExtractiveProvider().answer(bundle, REFUSAL) == (
        "Queued component: has no thread but does have a queue. [C1]"
    )
    assert (
        # weak_lead off too: it also passes over the anaphoric "This class ..."
        ExtractiveProvider(prefer_defining=False, weak_lead=False)
        .answer(bundle, REFUSAL)
        .startswith("This class is used by queued components")
    )


def test_a_one_line_definition_keeps_the_sentence_that_goes_on_about_its_subject() -> None:
    texts = [
        "`BufferManager` is a passive ISF component. It allocates a set of fixed-sized buffers. "
        "The memory comes from an allocator."
    ]
    bundle = make_bundle(texts, "What is BufferManager?")
    assert ExtractiveProvider().answer(bundle, REFUSAL) == (
        "`BufferManager` is a passive ISF component. [C0] "
        "It allocates a set of fixed-sized buffers. [C0]"
    )


def test_a_penalised_best_sentence_still_leads() -> None:
    # Every candidate scores below 0 (an intro penalty larger than its coverage): the lead
    # filter used to exceed the best score and crash on an empty choice.
    # (An intro of more than six words: a shorter one is a bare label, which states nothing
    # and is refused.)
    intro = "Valve checks on the cooling skid follow these rules:"
    bundle = make_bundle([intro], "Which valve checks?")
    policy = AnswererPolicy(intro_penalty=1.0, floor=0.0)
    assert ExtractiveProvider(policy).answer(bundle, REFUSAL) == f"{intro} [C0]"


@pytest.mark.parametrize("style", list(CitationStyle))
def test_a_sentence_the_validator_reads_as_a_citation_is_never_quoted(
    style: CitationStyle,
) -> None:
    # SQuAD: "... the binary alphabet (i.e., the set {0,1}) ..." - `{0,1}` looks like a
    # malformed citation to the validator, so quoting it failed the whole answer.
    texts = [
        "A problem instance is a string over an alphabet. Usually, the alphabet is taken to be "
        "the binary alphabet (i.e., the set {0,1}), and thus the strings are bitstrings."
    ]
    bundle = make_bundle(
        texts, "Which alphabet is usually taken for a problem instance?", style=style
    )
    text = ExtractiveProvider().answer(bundle, REFUSAL)
    assert "{0,1}" not in text and text.startswith("A problem instance is a string")


def test_a_phrase_that_only_mentions_x_does_not_define_it() -> None:
    texts = [
        "The pure virtual function to implement a port call is derived from the port name.",
        "A port is a typed connection point between components.",
    ]
    bundle = make_bundle(texts, "What is a port?")
    assert ExtractiveProvider().answer(bundle, REFUSAL) == (
        "A port is a typed connection point between components. [C1]"
    )
    loose = ExtractiveProvider(subject_qualifiers=10).answer(bundle, REFUSAL)
    assert loose.startswith("The pure virtual function")
