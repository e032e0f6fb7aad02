"""`citebound assemble BUNDLE.json`: R2 assembly + R3 prompt build from a retrieval bundle."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Literal

import click

from citebound._names import PROVIDERS
from citebound.assemble import assemble_and_build
from citebound.cli._common import EXIT_FAILED, PRESET_HELP, STATUS_EXIT, fail
from citebound.errors import ConfigError
from citebound.policy import DEFAULT_PRESET, Policy, load_policy


def load_policy_option(value: str) -> Policy:
    try:
        return load_policy(value)
    except ConfigError as err:
        fail(str(err))


@click.command("assemble")
@click.argument("bundle_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--policy",
    "policy_name",
    default=DEFAULT_PRESET,
    show_default=True,
    help=PRESET_HELP,
)
@click.option("--question", default=None, help="Use this question instead of the bundle's.")
@click.option("--prompt-only", is_flag=True, help="Print only the exact prompt bytes.")
@click.option(
    "--execute",
    "do_execute",
    is_flag=True,
    help="Also send the prompt; print the LLMExecutionResult.",
)
@click.option(
    "--provider",
    type=click.Choice(PROVIDERS),
    default="extractive",
    show_default=True,
    help="Provider for --execute.",
)
@click.option("--model", default=None, help="Model for openai/ollama.")
@click.option("--base-url", default=None, help="Server URL for openai/ollama.")
@click.option("--api-key-env", default=None, help="Env var holding the API key (openai).")
@click.option("--api", type=click.Choice(["chat", "responses"]), default="chat", show_default=True)
def assemble_cmd(
    bundle_file: Path,
    policy_name: str,
    question: str | None,
    prompt_only: bool,
    do_execute: bool,
    provider: str,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    api: Literal["chat", "responses"],
) -> None:
    """Assemble evidence and build the frozen prompt for BUNDLE_FILE (a RetrievalBundle JSON).

    Prints {"answer_bundle": ..., "prompt": ...} as JSON; with --execute it sends the prompt to
    the provider and prints the LLMExecutionResult instead. Exit codes: 0 OK, 3 NO_EVIDENCE,
    2 FAILED (one-line reason on stderr).
    """
    policy = load_policy_option(policy_name)
    if do_execute and prompt_only:
        fail("--execute and --prompt-only cannot be combined")
    try:
        raw = bundle_file.read_bytes()
    except OSError as err:
        fail(f"cannot read {bundle_file}: {err.strerror or err}")
    outcome = assemble_and_build(raw, policy, question=question)
    status = outcome.prompt.build_status.value
    if do_execute:
        # Lazy: the providers (citebound.llm, ~45 ms of python -X importtime) load only when
        # --execute sends the prompt.
        from citebound.llm import execute, make_provider

        try:
            llm = make_provider(
                provider,
                model=model,
                base_url=base_url,
                api_key_env=api_key_env,
                api=api,
                answerer=policy.answerer,
            )
        except ConfigError as err:
            fail(str(err))
        try:
            result = execute(outcome.prompt, outcome.bundle, llm, policy)
        finally:
            close = getattr(llm, "close", None)
            if close is not None:
                close()
        click.echo(result.model_dump_json(indent=2))
        gen = result.generation_status.value
        if gen != "OK":
            click.echo(f"citebound: {gen}: {result.failure_reason}: {result.message}", err=True)
        sys.exit(STATUS_EXIT.get(gen, EXIT_FAILED))
    if prompt_only:
        if status == "OK":
            sys.stdout.buffer.write(outcome.prompt.prompt_text.encode("utf-8"))
            sys.stdout.flush()
    else:
        payload = {
            "answer_bundle": outcome.bundle.model_dump(mode="json"),
            "prompt": outcome.prompt.model_dump(mode="json"),
        }
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    if status != "OK":
        reason = outcome.bundle.failure_reason or outcome.prompt.failure_reason
        detail = (outcome.bundle.messages or [outcome.prompt.message])[0]
        click.echo(f"citebound: {status}: {reason}: {detail}", err=True)
    sys.exit(STATUS_EXIT.get(status, EXIT_FAILED))


COMMANDS = [assemble_cmd]
