"""The public surface is pinned: `__all__` of the package and of each stage package."""

from __future__ import annotations

import importlib

import pytest

import citebound


def test_top_level_all_is_exact_and_importable() -> None:
    for name in citebound.__all__:
        assert hasattr(citebound, name), name
    assert sorted(citebound.__all__) == sorted(set(citebound.__all__))


@pytest.mark.parametrize(
    "module", ["citebound.contracts", "citebound.text", "citebound.prompt", "citebound.assemble"]
)
def test_subpackage_all_is_importable(module: str) -> None:
    mod = importlib.import_module(module)
    for name in mod.__all__:
        assert hasattr(mod, name), f"{module}.{name}"
