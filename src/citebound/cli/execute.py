"""`citebound execute`: run R4 on the JSON that `citebound assemble` prints."""

from __future__ import annotations

import json
from pathlib import Path

import click
from pydantic import ValidationError

from citebound.cli._common import PRESET_HELP, STATUS_EXIT, fail, to_json
from citebound.contracts.assembly import AnswerBundle, PromptBuildResult
from citebound.errors import ConfigError
from citebound.llm import PROVIDERS, execute, make_provider
from citebound.policy import DEFAULT_PRESET, load_policy


def load_execute_input(path: Path) -> tuple[AnswerBundle, PromptBuildResult]:
    """Read `{"answer_bundle": {...}, "prompt": {...}}`; other top-level keys are ignored.

    Raises:
        ConfigError: the file is missing, not JSON, or a part does not fit its contract.
    """
    try:
        data = json.loads(path.read_text("utf-8"))
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror}", source=str(path)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path} is not JSON: {err}", source=str(path)) from None
    if not isinstance(data, dict) or "answer_bundle" not in data or "prompt" not in data:
        raise ConfigError(
            f"{path} must be a JSON object with 'answer_bundle' and 'prompt' "
            "(the output of `citebound assemble`)",
            source=str(path),
        )
    parts: list[AnswerBundle | PromptBuildResult] = []
    for key, contract in (("answer_bundle", AnswerBundle), ("prompt", PromptBuildResult)):
        try:
            parts.append(contract.model_validate(data[key]))
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "<root>"
            raise ConfigError(
                f"{path}: '{key}.{where}': {first['msg']}", field=f"{key}.{where}"
            ) from None
    bundle, prompt = parts
    assert isinstance(bundle, AnswerBundle) and isinstance(prompt, PromptBuildResult)
    return bundle, prompt


@click.command("execute")
@click.argument("prompt_json", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--provider",
    "provider_name",
    type=click.Choice(PROVIDERS),
    default="extractive",
    show_default=True,
    help="extractive (built in, offline), openai (any OpenAI-compatible server) or ollama.",
)
@click.option("--model", default=None, help="Model name (required for openai and ollama).")
@click.option("--base-url", default=None, help="Server root, e.g. http://127.0.0.1:8080/v1.")
@click.option(
    "--api-key-env",
    default=None,
    help="Environment variable holding the API key (openai; default OPENAI_API_KEY).",
)
@click.option(
    "--api",
    type=click.Choice(["chat", "responses"]),
    default="chat",
    show_default=True,
    help="openai only: Chat Completions or the Responses API.",
)
@click.option(
    "--policy",
    "policy_name",
    default=DEFAULT_PRESET,
    show_default=True,
    help=PRESET_HELP,
)
def execute_cmd(
    prompt_json: Path,
    provider_name: str,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    api: str,
    policy_name: str,
) -> None:
    """Send a built prompt to a model (R4) and print the LLMExecutionResult JSON.

    PROMPT_JSON holds {"answer_bundle": {...}, "prompt": {...}} as printed by
    `citebound assemble`. Exit code 0 OK, 3 NO_EVIDENCE (no call made), 2 FAILED.
    """
    try:
        policy = load_policy(policy_name)
        bundle, prompt = load_execute_input(prompt_json)
        provider = make_provider(
            provider_name,
            model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            api="responses" if api == "responses" else "chat",
            answerer=policy.answerer,
        )
    except ConfigError as err:
        fail(str(err))
    try:
        result = execute(prompt, bundle, provider, policy)
    finally:
        close = getattr(provider, "close", None)
        if callable(close):
            close()
    click.echo(to_json(result))
    if result.failure_reason and result.generation_status != "OK":
        click.echo(f"citebound: {result.failure_reason}: {result.message}", err=True)
    raise SystemExit(STATUS_EXIT[result.generation_status.value])


COMMANDS = [execute_cmd]
