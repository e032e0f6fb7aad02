"""Helpers shared by pipeline tests (imported by name, as tests/llm/llm_helpers.py)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def strict_with(tmp_path: Path, setting: str, value: str) -> str:
    """The path of strict-v1 written with one `setting = ...` line switched to `value` (a
    rule turned off, to show it is what decides); fails when the preset lacks the line."""
    preset = files("citebound.presets").joinpath("strict-v1.toml").read_text("utf-8")
    line = next(x for x in preset.splitlines() if x.split("=")[0].strip() == setting)
    path = tmp_path / f"strict-v1-{setting}-{value}.toml"
    path.write_text(preset.replace(f"\n{line}\n", f"\n{setting} = {value}\n"), "utf-8")
    return str(path)
