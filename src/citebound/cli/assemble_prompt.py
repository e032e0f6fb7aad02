"""`citebound assemble-prompt QUESTION`: prompt assembly from packs (docs/assemble_prompt.md).

Packs come from `--packs FILE.json` (a JSON list of packs, camelCase as `retrieve_packs`
writes them; `-` reads stdin) or are retrieved from the store for QUESTION. Prints the
`AssembledPrompt` as camelCase JSON (or, with `--packs-only`, the retrieved packs). Exit codes:
0 assembled (also when no pack fits the budget: the prompt is then the question alone), 2 bad
input or retrieval failure, with a one-line reason on stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from citebound.cli._common import (
    EXIT_OK,
    collection_option,
    config_option,
    fail,
    filter_options,
    filters_from_options,
    store_option,
    store_override,
)
from citebound.cli.ask import config_from_options
from citebound.errors import CiteboundError


def _read_packs(source: str) -> list[Any]:
    try:
        raw = sys.stdin.read() if source == "-" else Path(source).read_text("utf-8")
    except OSError as err:
        fail(f"cannot read packs from {source}: {err.strerror or err}")
    try:
        data = json.loads(raw)
    except ValueError as err:
        fail(f"{source}: not JSON ({err})")
    if isinstance(data, dict) and "packs" in data:
        data = data["packs"]
    if not isinstance(data, list):
        fail(f'{source}: expected a JSON list of packs (or {{"packs": [...]}})')
    return data


@click.command("assemble-prompt")
@click.argument("question")
@click.option("--packs", "packs_file", default=None, help="JSON file of packs ('-' = stdin).")
@click.option("--headroom-tokens", default=300, show_default=True, type=click.IntRange(min=0))
@click.option("--style", type=click.Choice(["qa", "summarize"]), default="qa", show_default=True)
@click.option(
    "--citation-style",
    type=click.Choice(["numeric", "footnote"]),
    default="numeric",
    show_default=True,
    help="numeric: [¹] [²]; footnote: [^1] [^2].",
)
@click.option("--limit", default=5, show_default=True, type=click.IntRange(min=1))
@click.option("--per-hit-neighbors", default=0, show_default=True, type=click.IntRange(min=0))
@click.option("--expand", type=click.Choice(["neighbors"]), default=None)
@click.option(
    "--rank",
    type=click.Choice(["hybrid", "bm25", "tfidf", "dense"]),
    default="hybrid",
    show_default=True,
)
@collection_option
@config_option
@store_option
@filter_options
@click.option("--packs-only", is_flag=True, help="Print the retrieved packs, do not assemble.")
@click.option("--user-only", is_flag=True, help="Print only the exact user message.")
@click.pass_context
def assemble_prompt_cmd(
    ctx: click.Context,
    question: str,
    packs_file: str | None,
    headroom_tokens: int,
    style: str,
    citation_style: str,
    limit: int,
    per_hit_neighbors: int,
    expand: str | None,
    rank: str,
    collection: str | None,
    config_file: str | None,
    store_dir: Path | None,
    equipment_id: str | None,
    knowledge_type: str | None,
    date_from: str | None,
    date_to: str | None,
    packs_only: bool,
    user_only: bool,
) -> None:
    """Assemble a prompt with citation markers for QUESTION."""
    # Lazy: the packs, the retriever and the store (tantivy, numpy: ~280 ms, python -X importtime)
    # are not paid by `citebound assemble-prompt --help`.
    from citebound.packs import assemble_prompt, retrieve_packs

    packs: list[Any]
    try:
        if packs_file is not None:
            packs = _read_packs(packs_file)
        else:
            from citebound.cli.retrieve import open_store
            from citebound.retrieve.retriever import Retriever

            config = config_from_options(
                config_file,
                store=store_override(store_dir),
                collection=collection,
            )
            obj = ctx.find_object(dict) or {}
            store = obj.get("store") or open_store(config.store_path)
            packs = retrieve_packs(
                question,
                limit=limit,
                per_hit_neighbors=per_hit_neighbors,
                expand=expand,
                rank=rank,
                retriever=Retriever(store, policy=config.load_policy()),
                collection=config.collection,
                filters=filters_from_options(equipment_id, knowledge_type, date_from, date_to),
            )
        if packs_only:
            click.echo(
                json.dumps(
                    [p.model_dump(mode="json", by_alias=True) for p in packs],
                    ensure_ascii=False,
                    indent=2,
                )
            )
            ctx.exit(EXIT_OK)
        out = assemble_prompt(
            question,
            packs,
            headroom_tokens=headroom_tokens,
            style=style,
            citation_style=citation_style,
        )
    except CiteboundError as err:
        fail(str(err))
    if user_only:
        click.echo(out.prompt.user, nl=False)
    else:
        click.echo(out.model_dump_json(by_alias=True, indent=2))
    ctx.exit(EXIT_OK)


COMMANDS = [assemble_prompt_cmd]
