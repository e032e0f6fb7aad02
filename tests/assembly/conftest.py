"""Fixtures for the assembly and prompt tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from assembly_factories import Row, make_bundle, make_row


@pytest.fixture
def row() -> Callable[..., Row]:
    return make_row


@pytest.fixture
def bundle() -> Callable[..., dict[str, Any]]:
    return make_bundle
