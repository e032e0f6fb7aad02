"""Shared helpers of the batch tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from citebound.config import Config, load_config


def batch_config(store: Path, **overrides: Any) -> Config:
    """Config on the demo store, extractive provider unless overridden."""
    values: dict[str, Any] = {
        "store": str(store),
        "collection": "demo",
        "provider.name": "extractive",
        **overrides,
    }
    return load_config(env={}, overrides=values)
