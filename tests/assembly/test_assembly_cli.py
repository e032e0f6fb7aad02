"""`citebound assemble`: JSON output, exact prompt bytes, exit codes and one-line reasons."""

from __future__ import annotations

import json
from pathlib import Path

from assembly_factories import make_bundle, make_row
from click.testing import CliRunner

from citebound.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "retrieval_bundle.json"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_example_bundle_assembles_ok() -> None:
    code, out, _ = _run("assemble", str(EXAMPLE))
    assert code == 0
    data = json.loads(out)
    assert data["answer_bundle"]["assembly_status"] == "OK"
    assert data["prompt"]["build_status"] == "OK"
    assert data["answer_bundle"]["anchor_map"] == {"C0": "c-7f3a91", "C1": "c-19be04"}


def test_prompt_only_prints_exact_bytes() -> None:
    code, out, _ = _run("assemble", str(EXAMPLE), "--prompt-only")
    _, full, _ = _run("assemble", str(EXAMPLE))
    assert code == 0
    assert out == json.loads(full)["prompt"]["prompt_text"]
    assert out.startswith("=== SYSTEM INSTRUCTIONS ===\n") and not out.endswith("\n\n")


def test_no_evidence_exits_3(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps(make_bundle([make_row(0, similarity=0.1)])))
    code, out, err = _run("assemble", str(path))
    assert code == 3
    assert json.loads(out)["answer_bundle"]["assembly_status"] == "NO_EVIDENCE"
    assert err.count("\n") == 1 and "NO_EVIDENCE" in err


def test_failed_exits_2_with_one_line_reason(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text("{not json")
    code, _, err = _run("assemble", str(path))
    assert code == 2
    assert err.strip().startswith("citebound: FAILED: V1_SCHEMA") and err.count("\n") == 1


def test_question_override_and_policy_choice(tmp_path: Path) -> None:
    code, out, _ = _run(
        "assemble", str(EXAMPLE), "--policy", "hybridrag", "--question", "Bolt torque?"
    )
    assert code == 0
    data = json.loads(out)
    assert data["answer_bundle"]["user_question"] == "Bolt torque?"
    assert "[S1 | chunk_id=" in data["prompt"]["prompt_text"]


def test_missing_file_and_bad_policy_exit_2(tmp_path: Path) -> None:
    code, _, err = _run("assemble", str(tmp_path / "nope.json"))
    assert code == 2 and "cannot read" in err
    code, _, err = _run("assemble", str(EXAMPLE), "--policy", str(tmp_path / "missing.toml"))
    assert code == 2 and "unknown policy" in err


def test_execute_with_extractive_provider_prints_llm_result() -> None:
    code, out, _ = _run("assemble", str(EXAMPLE), "--execute", "--provider", "extractive")
    assert code == 0
    data = json.loads(out)
    assert data["generation_status"] == "OK" and data["provider"] == "extractive"
    assert "[C0]" in data["raw_model_text"] and data["attempts"] == 1
    _, full, _ = _run("assemble", str(EXAMPLE))
    assert data["prompt_sha256"] == json.loads(full)["prompt"]["prompt_sha256"]


def test_execute_against_scripted_server_over_http() -> None:
    from citebound.testing import ScriptedLLMServer

    with ScriptedLLMServer() as server:
        server.reply("Tighten the impeller bolts to 45 Nm. [C0]")
        code, out, _ = _run(
            "assemble",
            str(EXAMPLE),
            "--execute",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            server.base_url,
        )
    assert code == 0
    assert json.loads(out)["raw_model_text"] == "Tighten the impeller bolts to 45 Nm. [C0]"
