"""`citebound execute PROMPT_JSON`: JSON out, exit 0 OK / 3 NO_EVIDENCE / 2 FAILED."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from llm_helpers import make_bundle, make_prompt

from citebound.cli import main
from citebound.contracts import (
    AnswerBundle,
    AssemblyStatus,
    LLMExecutionResult,
    PromptBuildResult,
)
from citebound.testing import ScriptedLLMServer


def write_input(tmp_path: Path, bundle: AnswerBundle, prompt: PromptBuildResult) -> Path:
    path = tmp_path / "assembled.json"
    data = {
        "answer_bundle": bundle.model_dump(mode="json"),
        "prompt": prompt.model_dump(mode="json"),
        "extra_key_from_assemble": {"ignored": True},
    }
    path.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    return path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["execute", *args])
    return result.exit_code, result.stdout, result.stderr


def test_extractive_ok(tmp_path: Path) -> None:
    bundle = make_bundle()
    code, out, _ = run(str(write_input(tmp_path, bundle, make_prompt(bundle))))
    assert code == 0
    result = LLMExecutionResult.model_validate_json(out)
    assert result.raw_model_text == "The pump runs at 40 bar. [C0]"
    assert result.provider == "extractive"


def test_hybridrag_policy_refusal(tmp_path: Path) -> None:
    bundle = make_bundle(question="Who won the 1998 world cup?")
    path = write_input(tmp_path, bundle, make_prompt(bundle))
    code, out, _ = run(str(path), "--policy", "hybridrag")
    assert code == 0
    assert json.loads(out)["raw_model_text"] == (
        "The indexed documentation does not contain this information."
    )


def test_no_evidence_exits_3_without_a_call(tmp_path: Path) -> None:
    bundle = make_bundle(status=AssemblyStatus.NO_EVIDENCE)
    code, out, err = run(str(write_input(tmp_path, bundle, make_prompt(bundle))))
    assert code == 3
    assert json.loads(out)["attempts"] == 0
    assert "LLM_SKIPPED" in err


@pytest.mark.integration
@pytest.mark.parametrize(
    ("args", "path"),
    [
        (["--provider", "openai", "--api", "chat"], "/v1/chat/completions"),
        (["--provider", "openai", "--api", "responses"], "/v1/responses"),
        (["--provider", "ollama"], "/api/chat"),
    ],
)
def test_http_providers(tmp_path: Path, args: list[str], path: str) -> None:
    bundle = make_bundle()
    file = write_input(tmp_path, bundle, make_prompt(bundle))
    with ScriptedLLMServer() as server:
        server.reply("The pump runs at 40 bar. [C0]")
        base = server.root_url if "ollama" in args else server.base_url
        code, out, _ = run(str(file), *args, "--model", "llama3", "--base-url", base)
        assert [r.path for r in server.requests] == [path]
    assert code == 0
    assert json.loads(out)["model_name"] == "llama3"


@pytest.mark.integration
def test_failed_call_exits_2(tmp_path: Path) -> None:
    bundle = make_bundle()
    file = write_input(tmp_path, bundle, make_prompt(bundle))
    with ScriptedLLMServer() as server:
        server.error(400)
        code, out, err = run(
            str(file), "--provider", "openai", "--model", "m", "--base-url", server.base_url
        )
    assert code == 2
    assert json.loads(out)["failure_reason"] == "LLM_BAD_REQUEST"
    assert "LLM_BAD_REQUEST" in err


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("not json", "not JSON"),
        ('{"prompt": {}}', "answer_bundle"),
        ('{"answer_bundle": {"request_id": "x"}, "prompt": {}}', "answer_bundle."),
    ],
)
def test_bad_input_file_is_one_line_exit_2(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, "utf-8")
    code, out, err = run(str(path))
    assert code == 2 and out == ""
    assert needle in err and err.count("\n") == 1


def test_missing_file_and_missing_model(tmp_path: Path) -> None:
    code, _, err = run(str(tmp_path / "nope.json"))
    assert code == 2 and "cannot read" in err
    bundle = make_bundle()
    file = write_input(tmp_path, bundle, make_prompt(bundle))
    code, _, err = run(str(file), "--provider", "ollama")
    assert code == 2 and "--model" in err
