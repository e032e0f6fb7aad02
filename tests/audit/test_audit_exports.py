"""The public surface of validate, respond and audit: every name in __all__ resolves."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("module", ["citebound.validate", "citebound.respond", "citebound.audit"])
def test_all_names_resolve(module: str) -> None:
    mod = importlib.import_module(module)
    names = mod.__all__
    assert len(set(names)) == len(names)
    for name in names:
        assert hasattr(mod, name), f"{module}.{name}"
