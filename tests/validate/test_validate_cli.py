"""`citebound validate` on real files: assemble-shaped JSON, bare bundles, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from validate_samples import EVIDENCE, VALID

from citebound.cli import main
from citebound.contracts.enums import CitationStyle
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle


def _write(tmp_path: Path, wrapped: bool = True, style: CitationStyle = CitationStyle.C) -> Path:
    policy = load_policy("strict-v1" if style is CitationStyle.C else "hybridrag")
    bundle = make_answer_bundle(EVIDENCE, style=style, policy=policy)
    data = bundle.model_dump(mode="json")
    payload = {"answer_bundle": data, "prompt": {"prompt_sha256": "x"}} if wrapped else data
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def test_passed_exits_0_and_prints_result(tmp_path: Path) -> None:
    path = _write(tmp_path)
    r = CliRunner().invoke(main, ["validate", "--bundle", str(path), "--answer", VALID])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["validation_status"] == "PASSED" and out["validated_citations"] == ["C0", "C1"]


def test_failed_exits_2(tmp_path: Path) -> None:
    path = _write(tmp_path, wrapped=False)
    answer = tmp_path / "a.txt"
    answer.write_text(VALID + " [C99]", encoding="utf-8")
    r = CliRunner().invoke(main, ["validate", "--bundle", str(path), "--answer-file", str(answer)])
    assert r.exit_code == 2
    assert json.loads(r.stdout)["failure_reason"] == "INVALID_CITATION_REFERENCE"


def test_policy_follows_bundle_and_can_be_overridden(tmp_path: Path) -> None:
    path = _write(tmp_path, style=CitationStyle.S)
    text = "Torque the M8 cylinder head bolts to 30 Nm [S1]."
    r = CliRunner().invoke(main, ["validate", "--bundle", str(path), "--answer", text])
    assert r.exit_code == 0, r.output  # hybridrag only flags new numbers
    r2 = CliRunner().invoke(
        main, ["validate", "--bundle", str(path), "--answer", text, "--policy", "strict-v1"]
    )
    assert r2.exit_code == 2
    assert json.loads(r2.stdout)["failure_reason"] == "UNSUPPORTED_NEW_FACT"


def test_bad_inputs_fail_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"answer_bundle": {"request_id": 1}}', encoding="utf-8")
    r = CliRunner().invoke(main, ["validate", "--bundle", str(bad), "--answer", "x"])
    assert r.exit_code == 2 and "not an AnswerBundle" in r.stderr
    r2 = CliRunner().invoke(main, ["validate", "--bundle", str(bad)])
    assert r2.exit_code == 2 and "exactly one of" in r2.stderr
