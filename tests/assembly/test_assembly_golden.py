"""Golden prompt bytes and template hashes. Regenerate with CITEBOUND_UPDATE_GOLDEN=1 only for
an intended, reviewed change of the frozen prompt contract."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from assembly_factories import make_bundle, make_row

from citebound.assemble import assemble_and_build
from citebound.contracts import CitationStyle, PromptStyle
from citebound.policy import Policy, load_policy
from citebound.prompt import load_template

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
UPDATE = os.environ.get("CITEBOUND_UPDATE_GOLDEN") == "1"

TEMPLATE_SHA256 = {
    "qa": "7ebbbfcb540521c011f65f64a179f69cdb2a6a36fb40ce32e0ca640e80f6eeed",
    "summarize": "4be3a789f96e9baf38b8a800f05cf28e076fd2812e37702945846fec5c7e5a65",
}


@pytest.mark.parametrize("style", list(TEMPLATE_SHA256))
def test_template_hash_is_pinned(style: str) -> None:
    assert load_template(style).sha256 == TEMPLATE_SHA256[style]


def _unicode() -> dict[str, Any]:
    rows = [
        make_row(
            0,
            text="Drehmoment der Laufradschrauben: 45 Nm (±2 Nm). Prüfen Sie nach 24 h.",
            source={
                "document": "Wartungshandbuch HP-220",
                "heading_path": ["Kapitel 4 – Laufrad", "4.3 Zusammenbau"],
                "page": 12,
            },
        ),
        make_row(
            1,
            text="泵的叶轮螺栓扭矩为 45 牛·米。Température maximale : 80 °C. Ω ≥ 3 kΩ.",
            source={"document": "多语言 手册", "heading_path": [], "page": None},
        ),
    ]
    return make_bundle(rows, user_question="Wie hoch ist das Drehmoment? 扭矩是多少？")


def _empty_heading_paths() -> dict[str, Any]:
    rows = [
        make_row(0, source={"document": "notes.txt"}),
        make_row(1, source=None),
        make_row(2, source={"document": "a|b [draft]", "heading_path": []}),
    ]
    return make_bundle(rows)


def _fifty_rows() -> dict[str, Any]:
    rows = [make_row(i, knowledge_id=f"doc-{i % 7}") for i in range(50)]
    return make_bundle(list(reversed(rows)))


def _duplicates() -> dict[str, Any]:
    t = "Replace the filter cartridge F-12 every 500 operating hours."
    rows = [
        make_row(0, text=t),
        make_row(1, text=t),
        make_row(2, text=t + " Record it in the log."),
        make_row(3),
    ]
    return make_bundle(rows)


def _budget_pressure() -> dict[str, Any]:
    def body(i: int) -> str:
        return " ".join(f"Step s{i}n{j} torques bolt k{i}m{j} to {j + 10} Nm." for j in range(120))

    return make_bundle([make_row(i, text=body(i)) for i in range(8)])


CASES = {
    "unicode": (_unicode, "strict-v1", {}),
    "empty_heading_paths": (_empty_heading_paths, "strict-v1", {}),
    "fifty_rows": (_fifty_rows, "strict-v1", {}),
    "duplicates": (_duplicates, "strict-v1", {}),
    "budget_pressure": (
        _budget_pressure,
        "strict-v1",
        {"max_evidence_tokens": 1500, "max_total_prompt_tokens": 2800},
    ),
    "hybridrag_s_anchors": (_duplicates, "hybridrag", {}),
    "numeric_summarize": (
        _unicode,
        "strict-v1",
        {"citation_style": CitationStyle.DECIMAL, "prompt_style": PromptStyle.SUMMARIZE},
    ),
    "superscript": (
        _fifty_rows,
        "strict-v1",
        {
            "citation_style": CitationStyle.SUPERSCRIPT,
            "tokenizer": "chars",
            "max_evidence_tokens": 1200,
            "max_total_prompt_tokens": 4000,
        },
    ),
}


def _policy(preset: str, overrides: dict[str, Any]) -> Policy:
    return Policy.model_validate({**load_policy(preset).model_dump(), **overrides})


@pytest.mark.parametrize("name", list(CASES))
def test_golden_prompt_bytes(name: str) -> None:
    make, preset, overrides = CASES[name]
    out = assemble_and_build(make(), _policy(preset, overrides))
    assert out.prompt.build_status.value == "OK", out.prompt.message
    data = out.prompt.prompt_text.encode("utf-8")
    path = GOLDEN / f"prompt_{name}.txt"
    if UPDATE:
        path.write_bytes(data)
    assert path.exists(), f"missing golden {path}; run with CITEBOUND_UPDATE_GOLDEN=1"
    assert data == path.read_bytes()
