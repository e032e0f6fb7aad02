"""Fixtures for the R4 tests; the factories and helpers live in `llm_helpers.py`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_helpers import HTTP_KINDS, FakeSleep, http_provider

from citebound.llm import Provider
from citebound.testing import ScriptedLLMServer


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as s:
        yield s


@pytest.fixture
def fake_sleep() -> FakeSleep:
    return FakeSleep()


@pytest.fixture(params=HTTP_KINDS)
def http_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def provider(http_kind: str, server: ScriptedLLMServer) -> Iterator[Provider]:
    p = http_provider(http_kind, server)
    yield p
    p.close()  # type: ignore[attr-defined]
