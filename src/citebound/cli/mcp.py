"""`citebound mcp`: serve the store to agents over the Model Context Protocol (extra `mcp`)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from citebound.cli._common import (
    collection_option,
    config_option,
    database_option,
    fail,
    policy_option,
    provider_option,
    require_store,
    store_option,
    store_override,
)
from citebound.cli.ask import config_from_options
from citebound.errors import CiteboundError


@click.command("mcp")
@click.option("--http", "http", is_flag=True,
              help="Streamable HTTP at http://HOST:PORT/mcp instead of stdio.")  # fmt: skip
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (--http).")
@click.option("--port", default=8765, show_default=True, type=int, help="Port to bind (--http).")
@store_option
@config_option
@collection_option
@provider_option
@click.option("--model", default=None, help="Model name for openai/ollama.")
@click.option("--base-url", default=None, help="Server URL for openai/ollama.")
@policy_option
@database_option
def mcp_cmd(
    http: bool,
    host: str,
    port: int,
    store_dir: Path | None,
    config_file: str | None,
    collection: str | None,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    policy: str | None,
    database: str | None,
) -> None:
    """Serve the store as an MCP server: tools answer, search and get_source, and the
    collections as resources. Every answer runs the same gate, validator and audit as `ask`.

    Over stdio (the default; for Claude Desktop and other local agents) the tools read every
    collection. With --http the rules of `serve` apply: without [[api.keys]] only a loopback
    address, with keys every request needs 'Authorization: Bearer <key>' and sees only that
    key's collections.
    """
    try:
        import mcp  # noqa: F401
    except ImportError:
        fail("citebound mcp needs the mcp extra: pip install 'citebound[mcp]'")
    # After the check above: the MCP server needs the mcp extra, and the web stack costs ~1.8 s to
    # import (python -X importtime).
    from citebound.api.mcp_server import run

    # stdout is the protocol over stdio: every log line goes to stderr.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s: %(name)s: %(message)s")  # fmt: skip
    config = config_from_options(
        config_file,
        store=store_override(store_dir),
        database=database,
        collection=collection,
        policy=policy,
        **{"provider.name": provider, "provider.model": model, "provider.base_url": base_url},
    )
    if not config.database:
        require_store(config.store_path)
    if http:
        click.echo(f"citebound: MCP over streamable HTTP at http://{host}:{port}/mcp", err=True)
    try:
        run(config, http=http, host=host, port=port)
    except CiteboundError as err:
        fail(str(err))
    except KeyboardInterrupt:
        pass


COMMANDS = [mcp_cmd]
