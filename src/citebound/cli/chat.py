"""`citebound chat`: an interactive conversation; each question may follow up the earlier ones.

Every turn is a full request (gate, validation, audit record) whose earlier turns (the last N4
pairs) go into the prompt's fenced Recent conversation block and the follow-up retrieval
rewrite. Lines starting with `/` are commands: `/reset` forgets the conversation, `/exit`
ends it (so does end of input).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from citebound.cli._common import (
    EXIT_OK,
    collection_option,
    config_option,
    fail,
    filter_options,
    filters_from_options,
    policy_option,
    provider_option,
    store_option,
    store_override,
)
from citebound.cli.ask import config_from_options
from citebound.errors import ConfigError

HELP = "Commands: /reset forgets the conversation, /exit ends it (or end of input, Ctrl-D)."


@click.command("chat")
@config_option
@store_option
@collection_option
@provider_option
@click.option("--model", default=None, help="Model name for openai/ollama.")
@click.option("--base-url", default=None, help="Server URL for openai/ollama.")
@policy_option
@click.option("--json", "as_json", is_flag=True, help="Print one PublicResponse JSON per turn.")
@filter_options
def chat_cmd(
    config_file: str | None,
    store_dir: Path | None,
    collection: str | None,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    policy: str | None,
    as_json: bool,
    equipment_id: str | None,
    knowledge_type: str | None,
    date_from: str | None,
    date_to: str | None,
) -> None:
    """Ask questions one per line; follow-up questions ("And how often?") use the earlier turns.

    Answers are cited and validated, or refused, exactly as with `citebound ask`; the earlier
    turns are context only and never evidence. Exit code 0 when the input ends.
    """
    # Lazy: the contracts, the pipeline and the renderer cost ~250-570 ms (python -X importtime),
    # not paid by `citebound chat --help`.
    from citebound.contracts.conversation import ConversationTurn
    from citebound.pipeline import Pipeline, PipelineContext
    from citebound.respond import render_text

    config = config_from_options(
        config_file,
        store=store_override(store_dir),
        collection=collection,
        policy=policy,
        **{"provider.name": provider, "provider.model": model, "provider.base_url": base_url},
    )
    try:
        ctx = PipelineContext(config)
        _ = ctx.reranker
    except ConfigError as err:
        fail(str(err))
    pipe = Pipeline(ctx)
    filters = filters_from_options(equipment_id, knowledge_type, date_from, date_to)
    interactive = sys.stdin.isatty()
    history: list[ConversationTurn] = []
    if interactive:
        click.echo(f"citebound chat ({config.collection}). {HELP}", err=True)
    try:
        while True:
            if interactive:
                click.echo("you> ", nl=False, err=True)
            line = sys.stdin.readline()
            if not line:
                break
            question = line.strip()
            if not question:
                continue
            if question in ("/exit", "/quit"):
                break
            if question == "/reset":
                history = []
                click.echo("citebound: conversation forgotten", err=True)
                continue
            if question.startswith("/"):
                click.echo(f"citebound: unknown command {question!r}. {HELP}", err=True)
                continue
            state = pipe.run(question, filters=filters, history=history)
            resp = state.response
            assert resp is not None
            rewrite = state.extras.get("followup_rewrite", {})
            if rewrite.get("query") and rewrite["query"] != rewrite.get("original"):
                click.echo(f"citebound: follow-up searched as {rewrite['query']!r}", err=True)
            if as_json:
                click.echo(resp.model_dump_json())
            else:
                click.echo(render_text(resp, bundle=state.answer_bundle))
                click.echo("")
            if resp.status.value == "FAILED":
                reason = state.extras.get("error", {}).get("message") or resp.failure_reason
                click.echo(f"citebound: FAILED: {reason}", err=True)
            history.append(ConversationTurn(question=question, answer=resp.answer))
    finally:
        ctx.close()
    sys.exit(EXIT_OK)


COMMANDS = [chat_cmd]
