"""Policy presets, fingerprints, and errors that name the bad field."""

from __future__ import annotations

from pathlib import Path

import pytest

from citebound.errors import ConfigError
from citebound.policy import PRESETS, Policy, load_policy

REFUSAL_000 = "NO_EVIDENCE: The provided evidence does not contain sufficient information to answer this question."


@pytest.mark.parametrize("name", ["strict-v1", "seed-v1"])
def test_preset_carries_the_seed_000_snapshot(name: str) -> None:
    p = load_policy(name)
    assert (p.max_chunks, p.max_chunks_per_knowledge_id, p.max_evidence_tokens) == (6, 2, 2200)
    assert (p.reserved_output_tokens, p.max_total_prompt_tokens) == (800, 3500)
    assert (p.max_chunk_token_ratio, p.overlap_ratio_threshold) == (0.35, 0.80)
    assert (p.ordering_mode, p.sanitization_mode, p.strict_no_evidence) == (
        "rank_strict",
        "safe_normalize_v1",
        True,
    )
    assert p.policy_version == "R2_POLICY_V1"
    assert p.min_top_similarity == p.gate.min_score == 0.76
    assert p.refusal.model_text == REFUSAL_000 == p.refusal.no_evidence_text
    assert p.citation_style == "C"
    assert p.llm.temperature == 0.0


def test_hybridrag_carries_seed_003_values() -> None:
    p = load_policy("hybridrag")
    assert (p.gate.min_score, p.gate.min_chunks) == (0.20, 2)
    assert p.refusal.no_evidence_text == "No supporting documentation found in indexed sources."
    assert p.refusal.model_text == "The indexed documentation does not contain this information."
    assert p.citation_style == "S"


def test_fingerprints_are_stable_and_distinct() -> None:
    a, b = load_policy("strict-v1"), load_policy("hybridrag")
    assert a.fingerprint.startswith("sha256:") and len(a.fingerprint) == 71
    assert a.fingerprint != b.fingerprint
    again = Policy.model_validate(a.model_dump())
    assert again.fingerprint == a.fingerprint
    changed = Policy.model_validate({**a.model_dump(), "max_chunks": 5})
    assert changed.fingerprint != a.fingerprint


def test_presets_are_package_files() -> None:
    assert set(PRESETS) == {"strict-v1", "seed-v1", "hybridrag", "superprompt-v1"}
    for name in PRESETS:
        assert load_policy(name).name == name


def test_v1_fingerprint_is_unchanged_by_the_superprompt_fields() -> None:
    """Audit records carry the policy fingerprint; the fields added for superprompt-v1 are
    left out while at their defaults, so strict-v1's fingerprint moves only with its own values
    (last: the refit support rule of [validation] with echo_scattered, #14, and [answerer]
    weak_lead, anaphora_penalty, prefer_overview, max_subject_terms, manner_follower, #15;
    max_code_lines, #15 code blocks; [retrieval] promote_definitions, #15; [gate]
    found_min_score, found_min_terms, #15; [answerer] answer_types, answer_type_bonus,
    answer_type_penalty, answer_type_firm, #15 answer types; [retrieval] extra_chunks,
    #15 evidence; [answerer] semantic*, #15 semantic signal; code_scope,
    transposed_min_letters, #15 review; asked_scope, #15 absent attributes; [gate]
    rare_min_score, rare_share, #15 gate; [answerer] compared_stated, HaluEval leak)."""
    strict = load_policy("strict-v1")
    assert strict.fingerprint == (
        "sha256:9c25fa0106871570e57fe566a882cc1e5ff2762b88d2de7465109f8b1c2b18c5"
    )
    sp = load_policy("superprompt-v1")
    assert sp.prompt_contract == "superprompt-v1" and sp.fingerprint != strict.fingerprint
    assert strict.evolve(prompt_contract="superprompt-v1").fingerprint != strict.fingerprint
    tuned = strict.evolve(superprompt={"s_ctx_max_items": 3})
    assert tuned.fingerprint != strict.fingerprint


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_bad_policy_file_names_the_field(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[2] / "src/citebound/presets/strict-v1.toml"
    text = src.read_text().replace("max_chunks = 6", "max_chunks = -3")
    with pytest.raises(ConfigError) as err:
        load_policy(_write(tmp_path, text))
    assert err.value.field == "max_chunks"
    assert "max_chunks" in str(err.value)


def test_nested_field_and_unknown_field_are_named(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[2] / "src/citebound/presets/strict-v1.toml"
    text = src.read_text().replace("min_chunks = 1", "min_chunks = 0")
    with pytest.raises(ConfigError, match=r"gate\.min_chunks"):
        load_policy(_write(tmp_path, text))
    with pytest.raises(ConfigError, match="max_chunkz"):
        load_policy(_write(tmp_path, src.read_text() + "\nmax_chunkz = 3\n"))


def test_budget_consistency_and_bad_toml(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[2] / "src/citebound/presets/strict-v1.toml"
    with pytest.raises(ConfigError, match="max_total_prompt_tokens"):
        load_policy(
            _write(
                tmp_path,
                src.read_text().replace(
                    "max_total_prompt_tokens = 3500", "max_total_prompt_tokens = 2000"
                ),
            )
        )
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_policy(_write(tmp_path, "max_chunks = = 3"))
    with pytest.raises(ConfigError, match="unknown policy"):
        load_policy("no-such-preset")


def test_strict_no_evidence_cannot_be_disabled(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[2] / "src/citebound/presets/strict-v1.toml"
    with pytest.raises(ConfigError, match="strict_no_evidence"):
        load_policy(
            _write(
                tmp_path,
                src.read_text().replace("strict_no_evidence = true", "strict_no_evidence = false"),
            )
        )


def test_evolve_validates_and_refingerprints() -> None:
    p = load_policy("strict-v1")
    q = p.evolve(max_chunks=5)
    assert q.max_chunks == 5 and q.fingerprint != p.fingerprint
    with pytest.raises(ConfigError, match="max_chunks"):
        p.evolve(max_chunks=0)
