"""Fixtures for the end-to-end evaluation tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_helpers import TINY_SQUAD


@pytest.fixture
def tiny_squad(tmp_path: Path) -> Path:
    """A folder holding a two-article SQuAD 2.0 file in the shared layout."""
    folder = tmp_path / "squad2-dev"
    folder.mkdir()
    (folder / "dev-v2.0-part1.json").write_text(json.dumps(TINY_SQUAD), encoding="utf-8")
    return folder
