"""Locate the shared evaluation data (`../shared/data`), which is never part of the repo."""

from __future__ import annotations

import os
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[3]


def shared_data_dir() -> Path | None:
    """`$CITEBOUND_SHARED_DATA`, else `<repo>/../shared/data`; None when absent."""
    env = os.environ.get("CITEBOUND_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates += [_REPO_ROOT.parent / "shared" / "data", Path.cwd().parent / "shared" / "data"]
    for c in candidates:
        if c.is_dir():
            return c.resolve()
    return None


def dataset_dir(name: str) -> Path | None:
    """One data set folder (`scifact`, `squad2-dev`, `halueval-dev`, `fprime-docs`), or None."""
    root = shared_data_dir()
    if root is None or not (root / name).is_dir():
        return None
    return root / name
