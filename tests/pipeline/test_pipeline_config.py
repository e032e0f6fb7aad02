"""citebound.toml + CITEBOUND_* overrides; config fingerprint; errors that name the field."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from citebound.config import ENV_VARS, load_config
from citebound.errors import ConfigError


def test_defaults_without_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    c = load_config(env={})
    assert (c.policy, c.store, c.provider.name) == ("strict-v1", ".citebound", "extractive")
    assert c.fingerprint.startswith("sha256:")


def test_file_then_env_then_overrides(tmp_path: Path) -> None:
    f = tmp_path / "citebound.toml"
    f.write_text(
        'policy = "hybridrag"\nstore = "s1"\n[provider]\nname = "ollama"\nmodel = "llama3"\n[limits]\nn1_retr_max_candidates = 120\n'
    )
    c = load_config(f, env={})
    assert (c.policy, c.store, c.provider.model, c.limits.n1_retr_max_candidates) == (
        "hybridrag",
        str(tmp_path / "s1"),
        "llama3",
        120,
    )
    assert c.load_policy().retrieval.n1_retr_max_candidates == 120
    c2 = load_config(
        f,
        env={
            "CITEBOUND_STORE": "s2",
            "CITEBOUND_N1_RETR_MAX_CANDIDATES": "80",
            "CITEBOUND_AUDIT_SINKS": "sqlite,delta",
        },
    )
    assert (c2.store, c2.limits.n1_retr_max_candidates, c2.audit.sinks) == (
        "s2",
        80,
        ["sqlite", "delta"],
    )
    c3 = load_config(
        f, env={"CITEBOUND_STORE": "s2"}, overrides={"store": "s3", "provider.name": "extractive"}
    )
    assert (c3.store, c3.provider.name) == ("s3", "extractive")
    assert len({c.fingerprint, c2.fingerprint, c3.fingerprint}) == 3
    assert (
        c.load_policy().fingerprint
        != load_config(tmp_path / "citebound.toml", env={"CITEBOUND_N1_RETR_MAX_CANDIDATES": "81"})
        .load_policy()
        .fingerprint
    )


def test_relative_paths_in_the_file_are_relative_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    preset = resources.files("citebound.presets").joinpath("strict-v1.toml").read_text("utf-8")
    (deploy / "my-policy.toml").write_text(preset, "utf-8")
    absolute = tmp_path / "elsewhere" / "audit.sqlite"
    (deploy / "citebound.toml").write_text(
        'policy = "my-policy.toml"\nstore = "data/store"\n'
        f'[rerank]\nmodel_path = "models/ce"\n[audit]\nsqlite_path = "{absolute.as_posix()}"\n',
        "utf-8",
    )
    monkeypatch.chdir(tmp_path)  # not the file's directory
    c = load_config("deploy/citebound.toml", env={})
    assert Path(c.store) == Path("deploy/data/store")
    assert Path(c.policy) == Path("deploy/my-policy.toml")
    assert c.load_policy().policy_version  # the policy file was found from another directory
    assert Path(c.rerank.model_path) == Path("deploy/models/ce")
    assert c.audit_sqlite_path == absolute  # absolute paths are kept
    assert c.audit.delta_path == ""  # unset keeps its default (<store>/audit_delta)
    assert c.audit_delta_path == Path("deploy/data/store/audit_delta")
    # Variables and options are relative to the working directory, as on any command line.
    env = load_config("deploy/citebound.toml", env={"CITEBOUND_STORE": "s2"})
    assert env.store == "s2"
    assert load_config("deploy/citebound.toml", env={}, overrides={"store": "s3"}).store == "s3"
    (deploy / "citebound.toml").write_text('policy = "hybridrag"\n', "utf-8")
    assert load_config("deploy/citebound.toml", env={}).policy == "hybridrag"  # a preset name


def test_bad_values_name_the_field(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text('[provider]\nname = "gpt"\n')
    with pytest.raises(ConfigError, match=r"provider\.name"):
        load_config(f, env={})
    with pytest.raises(ConfigError, match=r"limits\.n2_rerank_top_k"):
        load_config(None, env={"CITEBOUND_N2_RERANK_TOP_K": "zero"})
    with pytest.raises(ConfigError, match="unknown policy"):
        load_config(None, env={"CITEBOUND_POLICY": "nope"})
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.toml", env={})
    f.write_text("store = [")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(f, env={})


def test_env_var_names_are_documented() -> None:
    import citebound.config as mod

    for var in ENV_VARS:
        assert var.startswith("CITEBOUND_")
    assert "CITEBOUND_PROVIDER" in ENV_VARS and mod.__doc__ and "citebound.toml" in mod.__doc__
