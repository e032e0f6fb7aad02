"""Fixtures for validator tests: one three-chunk bundle in the default C style."""

from __future__ import annotations

import pytest
from validate_samples import EVIDENCE

from citebound.contracts.assembly import AnswerBundle
from citebound.policy import Policy, load_policy
from citebound.testing.bundles import make_answer_bundle


@pytest.fixture
def bundle() -> AnswerBundle:
    return make_answer_bundle(EVIDENCE, question="How do I service the X200 pump?")


@pytest.fixture
def strict() -> Policy:
    return load_policy("strict-v1")


@pytest.fixture
def hybrid() -> Policy:
    return load_policy("hybridrag")
