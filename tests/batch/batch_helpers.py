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


def support_policy(tmp: Path, floor: float) -> Path:
    """strict-v1 with `min_sentence_support = floor` (and its own version), as a policy file."""
    import re

    base = (Path(__file__).parents[2] / "src/citebound/presets/strict-v1.toml").read_text()
    text, n = re.subn(
        r"(?m)^min_sentence_support = [0-9.]+$", f"min_sentence_support = {floor}", base
    )
    assert n == 1
    text = text.replace('policy_version = "', f'policy_version = "support-{floor}-', 1)
    path = tmp / f"support-{floor}.toml"
    path.write_text(text)
    return path
