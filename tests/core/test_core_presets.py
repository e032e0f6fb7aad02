"""The presets say what they are (#32 item 4): seed-v1 is seeds 000/001 literally; strict-v1,
the default, is fitted, and keeps its name and fingerprint so configs and audit records made
before seed-v1 existed still resolve to it."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from citebound.config import Config, load_config
from citebound.gate.rule import lowest_score
from citebound.policy import DEFAULT_PRESET, PRESET_SUMMARIES, PRESETS, Policy, load_policy

REFUSAL_000 = "NO_EVIDENCE: The provided evidence does not contain sufficient information to answer this question."
# strict-v1's fingerprint before seed-v1 existed (also pinned in test_core_policy.py): the
# audit records of every deployment on the default preset carry it.
STRICT_V1_FINGERPRINT = "sha256:9c25fa0106871570e57fe566a882cc1e5ff2762b88d2de7465109f8b1c2b18c5"


def _flat(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and key != "support_weights":
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _differences(a: Policy, b: Policy) -> set[str]:
    fa, fb = _flat(a.model_dump(mode="json")), _flat(b.model_dump(mode="json"))
    return {k for k in fa.keys() | fb.keys() if fa.get(k) != fb.get(k)}


def test_seed_v1_carries_the_seeds_frozen_values_literally() -> None:
    p = load_policy("seed-v1")
    # Seed 000's selection snapshot, refusal string and temperature: test_core_policy.py
    # (test_preset_carries_the_seed_000_snapshot). Seed 001: 0.76, and nothing passes below it.
    assert p.min_top_similarity == p.gate.min_score == 0.76
    assert lowest_score(p.gate, p.gate.min_score) == 0.76
    assert (p.gate.covered_min_score, p.gate.found_min_score, p.gate.rare_min_score) == (
        None,
        None,
        None,
    )
    assert p.gate.min_coverage == 0.0 and p.gate.min_chunks == 1
    # Its caps literally: no evidence slot beyond them.
    assert p.retrieval.extra_chunks == 0
    # Seed 000's refusal string lock; seed 001 R4 temperature; seed 001 R5 length flag; V1 prompt.
    assert p.refusal.model_text == REFUSAL_000 == p.refusal.no_evidence_text
    assert p.llm.temperature == 0.0
    assert p.validation.length_ratio_limit == 10.0
    assert (p.citation_style, p.prompt_contract) == ("C", "v1")


def test_seed_v1_differs_from_strict_v1_only_where_the_seeds_freeze_another_value() -> None:
    # Everything the seeds leave open is strict-v1's: a change there must be made in both
    # files (or stated here).
    assert _differences(load_policy("strict-v1"), load_policy("seed-v1")) == {
        "name",
        "gate.min_coverage",
        "gate.covered_min_score",
        "gate.covered_share",
        "gate.covered_min_terms",
        "gate.found_min_score",
        "gate.rare_min_score",
        "gate.rare_share",
        "retrieval.extra_chunks",
    }


def test_strict_v1_is_the_fitted_default_and_not_the_seed_gate() -> None:
    p = load_policy("strict-v1")
    assert lowest_score(p.gate, p.gate.min_score) == 0.55 < 0.76 == p.min_top_similarity
    assert DEFAULT_PRESET == PRESETS[0] == "strict-v1"
    assert load_policy().name == Config().policy == DEFAULT_PRESET
    assert PRESET_SUMMARIES[DEFAULT_PRESET].startswith("The default")
    assert "seed-v1" in PRESET_SUMMARIES[DEFAULT_PRESET]


def test_every_preset_file_is_registered_with_a_summary() -> None:
    files = {
        f.name.removesuffix(".toml")
        for f in resources.files("citebound.presets").iterdir()
        if f.name.endswith(".toml")
    }
    assert files == set(PRESETS) == set(PRESET_SUMMARIES)
    for name in PRESETS:
        assert load_policy(name).name == name and PRESET_SUMMARIES[name]
    fingerprints = {load_policy(name).fingerprint for name in PRESETS}
    assert len(fingerprints) == len(PRESETS)


def test_a_config_naming_strict_v1_keeps_its_policy_and_fingerprint(tmp_path: Path) -> None:
    # Kept, not renamed: the name is in users' configs, and the policy fingerprint (recorded in
    # every audit record, compared by replay and batch resume) hashes it.
    path = tmp_path / "citebound.toml"
    path.write_text('policy = "strict-v1"\n', encoding="utf-8")
    config = load_config(path, env={})
    assert config.policy == "strict-v1"
    assert config.load_policy().fingerprint == STRICT_V1_FINGERPRINT
    assert load_policy("strict-v1").fingerprint == STRICT_V1_FINGERPRINT
    assert load_config(None, env={"CITEBOUND_POLICY": "seed-v1"}).load_policy().name == "seed-v1"
