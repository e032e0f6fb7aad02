"""`citebound serve` (HTTP API + web page) and `citebound apikey` (make a key and its hash)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

from citebound.cli._common import (
    config_option,
    database_option,
    fail,
    require_store,
    resolve_database,
    resolve_store,
    store_option,
    store_override,
)
from citebound.cli.ask import config_from_options
from citebound.errors import CiteboundError

if TYPE_CHECKING:
    from citebound.config import Config


def with_bind_host(config: Config, host: str) -> Config:
    """Serve the Host name the server was bound to (`--host 10.0.0.5` is reached as
    10.0.0.5). A wildcard bind (0.0.0.0, ::) names no host: clients' names must be listed in
    [api] allowed_hosts, or requests get 421 (the Host allow-list against DNS rebinding)."""
    allowed = config.api.allowed_hosts
    if host in ("0.0.0.0", "::", "") or host in allowed or "*" in allowed:
        if host in ("0.0.0.0", "::"):
            click.echo(
                f"citebound: bound to {host}: only Host names in api.allowed_hosts {allowed} "
                "are served (set $CITEBOUND_API_ALLOWED_HOSTS)",
                err=True,
            )
        return config
    api = config.api.model_copy(update={"allowed_hosts": [*allowed, host]})
    return config.model_copy(update={"api": api})


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8000, show_default=True, type=int, help="Port to bind.")
@store_option
@config_option
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
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Server processes sharing the port (uvicorn workers). Above 1, use --database so "
    "they share one store and audit trail (docs/postgres.md).",
)
@database_option
def serve_cmd(
    host: str,
    port: int,
    store_dir: Path | None,
    config_file: str | None,
    demo: bool,
    log_level: str,
    workers: int,
    database: str | None,
) -> None:
    """Serve the HTTP API (/v1, OpenAI-compatible /v1/chat/completions) and the web page (/).

    Without API keys in the config the server only binds loopback addresses and every
    caller is an anonymous reader of every collection.

    With --database postgresql://... every process (--workers, or serve processes on other
    hosts) shares one store and one audit trail and sees the others' ingests.
    """
    import uvicorn

    # Lazy: the web stack (fastapi, uvicorn) and the Postgres store cost ~0.25-1 s to import
    # (python -X importtime), not paid by `citebound serve --help`.
    from citebound.api import check_bind, create_app
    from citebound.store.pg_connect import redact

    # citebound's own loggers follow --log-level too (per-request LLM telemetry is INFO).
    level = getattr(logging, log_level.upper(), logging.INFO)
    logging.basicConfig(level=level, format="%(levelname)s: %(name)s: %(message)s")
    root: Path | None = None
    try:
        if demo:
            from citebound.api.sample import build_sample_store

            root = Path(tempfile.mkdtemp(prefix="citebound-serve-demo-"))
            click.echo(f"citebound: ingesting the sample corpus into {root} ...", err=True)
            store_dir = build_sample_store(root)
        overrides: dict[str, object] = {"store": store_override(store_dir), "database": database}
        if demo:
            overrides["collection"] = "demo"
        config = config_from_options(config_file, **overrides)
        if not demo and not config.database:
            require_store(config.store_path)
        try:
            from citebound.api.security import KeyRing

            if not config.database:
                check_bind(host, KeyRing(config.api.keys))
            config = with_bind_host(config, host)
            app = create_app(config)
            check_bind(host, app.state.runtime.keyring)  # with keys stored in the database
            if workers > 1:
                # Validates the config and runs migrations once, here; each worker then
                # builds its own app (a pipeline per process: the GIL is per process).
                app.state.runtime.ctx.store  # noqa: B018
                app.state.runtime.close()
        except CiteboundError as err:
            fail(str(err))
        where = (
            f"database {redact(config.database)}" if config.database else f"store {config.store}"
        )
        click.echo(
            f"citebound: serving http://{host}:{port}/ ({where}, {workers} worker(s))", err=True
        )
        # uvicorn re-raises SIGTERM after its graceful shutdown; exiting through SystemExit
        # instead lets the `finally` below remove the --demo store.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        if workers == 1:
            uvicorn.run(app, host=host, port=port, log_level=log_level)
        else:
            from citebound.api.worker import CONFIG_ENV

            os.environ[CONFIG_ENV] = config.model_dump_json()
            uvicorn.run(
                "citebound.api.worker:app_from_env",
                factory=True,
                workers=workers,
                host=host,
                port=port,
                log_level=log_level,
            )
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
@store_option
@click.option("--revoke", is_flag=True, help="With --database: delete the stored key NAME.")
@database_option
def apikey_cmd(
    name: str,
    role: str,
    collections: str,
    store_dir: Path | None,
    revoke: bool,
    database: str | None,
) -> None:
    """Make a new API key: prints the key once (stdout) and the config entry (stderr).

    Only the sha256 of the key goes into citebound.toml (or $CITEBOUND_API_KEYS as JSON).
    With --database the hash is stored in the database instead, and every replica accepts
    the key within a few seconds (--revoke removes it the same way).
    """
    from citebound.api.security import KEY_REFRESH_S, new_key

    cols = [c.strip() for c in collections.split(",") if c.strip()]
    if not cols:
        fail("--collections needs at least one collection (or '*')")
    url = resolve_database(database)
    if revoke and not url:
        fail("--revoke needs --database (configured keys are removed from citebound.toml)")
    key, entry = new_key(name, role=role, collections=cols)
    if url:
        from citebound.store.postgres import PostgresStore

        try:
            with PostgresStore(url, root=resolve_store(store_dir) / "pg-cache") as db:
                if revoke:
                    if not db.revoke_api_key(name):
                        fail(f"no stored API key named {name!r}")
                    click.echo(f"citebound: revoked {name!r} (replicas drop it within "
                               f"{KEY_REFRESH_S:g} s)", err=True)  # fmt: skip
                    return
                db.add_api_key(entry)
        except CiteboundError as err:
            fail(str(err))
        click.echo(key)
        click.echo(
            f"citebound: stored {name!r} ({role}, collections {cols}) in the database; every "
            f"replica accepts it within {KEY_REFRESH_S:g} s. The key is shown only now.",
            err=True,
        )
        return
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
