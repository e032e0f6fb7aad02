"""`citebound serve` (HTTP API + web page) and `citebound apikey` (make a key and its hash)."""

from __future__ import annotations

import json
import logging
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import click

from citebound.cli._common import fail, require_store


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8000, show_default=True, type=int, help="Port to bind.")
@click.option("--store", default=None, help="Store directory (default: config, ./.citebound).")
@click.option(
    "--config",
    "config_file",
    default=None,
    help="citebound.toml (default: ./citebound.toml if present).",
)
@click.option(
    "--demo",
    is_flag=True,
    help="Serve the bundled sample corpus from a temporary store (collection 'demo').",
)
@click.option(
    "--log-level",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    default="info",
    show_default=True,
    help="Log level of uvicorn and citebound.",
)
def serve_cmd(
    host: str, port: int, store: str | None, config_file: str | None, demo: bool, log_level: str
) -> None:
    """Serve the HTTP API (/v1, OpenAI-compatible /v1/chat/completions) and the web page (/).

    Without API keys in the config the server only binds loopback addresses and every
    caller is an anonymous reader of every collection.
    """
    import uvicorn

    from citebound.api import check_bind, create_app
    from citebound.cli.ask import config_from_options
    from citebound.errors import ConfigError

    # citebound's own loggers follow --log-level too (per-request LLM telemetry is INFO).
    level = getattr(logging, log_level.upper(), logging.INFO)
    logging.basicConfig(level=level, format="%(levelname)s: %(name)s: %(message)s")
    root: Path | None = None
    try:
        if demo:
            from citebound.api.sample import build_sample_store

            root = Path(tempfile.mkdtemp(prefix="citebound-serve-demo-"))
            click.echo(f"citebound: ingesting the sample corpus into {root} ...", err=True)
            store = str(build_sample_store(root))
        overrides: dict[str, object] = {"store": store}
        if demo:
            overrides["collection"] = "demo"
        config = config_from_options(config_file, **overrides)
        if not demo:
            require_store(config.store_path)
        try:
            from citebound.api.security import KeyRing

            check_bind(host, KeyRing(config.api.keys))
            app = create_app(config)
        except ConfigError as err:
            fail(str(err))
        click.echo(f"citebound: serving http://{host}:{port}/ (store {config.store})", err=True)
        # uvicorn re-raises SIGTERM after its graceful shutdown; exiting through SystemExit
        # instead lets the `finally` below remove the --demo store.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        uvicorn.run(app, host=host, port=port, log_level=log_level)
    finally:
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)


@click.command("apikey")
@click.argument("name")
@click.option("--role", type=click.Choice(["reader", "admin"]), default="reader", show_default=True)
@click.option(
    "--collections",
    default="*",
    show_default=True,
    help="Comma-separated collections the key may read ('*' = all).",
)
def apikey_cmd(name: str, role: str, collections: str) -> None:
    """Make a new API key: prints the key once (stdout) and the config entry (stderr).

    Only the sha256 of the key goes into citebound.toml (or $CITEBOUND_API_KEYS as JSON).
    """
    from citebound.api.security import new_key

    cols = [c.strip() for c in collections.split(",") if c.strip()]
    if not cols:
        fail("--collections needs at least one collection (or '*')")
    key, entry = new_key(name, role=role, collections=cols)
    click.echo(key)
    click.echo(
        "\n# add to citebound.toml:\n[[api.keys]]\n"
        f"name = {json.dumps(entry.name)}\nsha256 = {json.dumps(entry.sha256)}\n"
        f"role = {json.dumps(entry.role)}\ncollections = {json.dumps(entry.collections)}\n"
        f"\n# or in the environment (a JSON list):\n"
        f"# CITEBOUND_API_KEYS='{json.dumps([entry.model_dump()])}'",
        err=True,
    )


COMMANDS = [serve_cmd, apikey_cmd]
