"""Helpers shared by CLI commands: exit codes, JSON output, one-line errors, and the options
several commands take, each declared once here (`--config`, `--store`, `--collection`,
`--policy`, `--provider`, `--database`, the filters) so its help and behaviour are the same
everywhere (tests/core/test_core_cli_options.py checks every command)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeVar

import click

from citebound._names import PROVIDERS
from citebound.errors import ConfigError
from citebound.presets import DEFAULT_PRESET, PRESETS

if TYPE_CHECKING:
    from pydantic import BaseModel

    from citebound.contracts.retrieval import FiltersApplied

# pydantic and the contracts are imported where they are used: a command module imports this
# one at start, and `citebound ask` starts its query embedder before they load (cli/_warm.py).

F = TypeVar("F", bound=Callable[..., object])

EXIT_OK = 0
EXIT_FAILED = 2
EXIT_NO_EVIDENCE = 3

STATUS_EXIT = {
    "OK": EXIT_OK,
    "PASSED": EXIT_OK,
    "NO_EVIDENCE": EXIT_NO_EVIDENCE,
    "FAILED": EXIT_FAILED,
}


def to_json(model: BaseModel) -> str:
    return model.model_dump_json(indent=2)


def fail(message: str, code: int = EXIT_FAILED) -> NoReturn:
    """Print one line to stderr and exit with `code`."""
    click.echo(f"citebound: {message}", err=True)
    sys.exit(code)


def filter_options(fn: F) -> F:
    """The metadata filter options shared by `ask` and `retrieve` (a missing value never passes:
    a document without the field never matches)."""
    for option in reversed(
        [
            click.option("--equipment-id", default=None, help="Only evidence of this equipment."),
            click.option(
                "--knowledge-type", default=None, help="Only evidence of this knowledge type."
            ),
            click.option("--date-from", default=None, help="event_date on or after (YYYY-MM-DD)."),
            click.option("--date-to", default=None, help="event_date on or before (YYYY-MM-DD)."),
        ]
    ):
        fn = option(fn)
    return fn


def filters_from_options(
    equipment_id: str | None, knowledge_type: str | None, date_from: str | None, date_to: str | None
) -> FiltersApplied | None:
    """FiltersApplied from the filter options, None when none is set. Dates are checked when
    the filters are compiled, so a bad date fails the request with a clear reason."""
    if not (equipment_id or knowledge_type or date_from or date_to):
        return None
    for option, value in (("--date-from", date_from), ("--date-to", date_to)):
        if value is not None:
            check_date(option, value)
    if date_from and date_to and date_from > date_to:
        fail(f"--date-from {date_from} is after --date-to {date_to}: no document could match")
    # Lazy: the contracts and the config (pydantic) cost ~160-280 ms of a cold `citebound ask
    # --help` and of every command's --help, which import this module (python -X importtime).
    from citebound.contracts.retrieval import DateRange, FiltersApplied

    date_range = DateRange(start=date_from, end=date_to) if (date_from or date_to) else None
    return FiltersApplied(
        equipment_id=equipment_id, knowledge_type=knowledge_type, date_range=date_range
    )


def check_date(option: str, value: str) -> None:
    """Exit 2 with one line unless `value` is a real calendar date written YYYY-MM-DD."""
    try:
        ok = len(value) == 10 and date.fromisoformat(value).isoformat() == value
    except ValueError:
        ok = False
    if not ok:
        fail(f"{option} {value!r} is not a date: use YYYY-MM-DD (e.g. 2024-03-31)")


def require_store(store: Path) -> None:
    """Exit 2 with one line unless `store` is an existing store directory.

    Commands that only read (ask, retrieve, serve, documents) must never create a store: a
    typo in --store would otherwise leave an empty folder and a confusing "no index" later.
    """
    if store.exists() and not store.is_dir():
        fail(
            f"--store {store} is a file, not a store directory: pass the folder that "
            "`citebound ingest --store DIR` created (default ./.citebound)"
        )
    if not store.is_dir():
        fail(
            f"no citebound store at {store}: run `citebound ingest FOLDER --store {store} "
            "--collection NAME` first, or pass the --store that ingest used"
        )


CONFIG_HELP = "citebound.toml to read (default: ./citebound.toml when present)."
STORE_HELP = "Store directory (default: the config's store, else ./.citebound)."
COLLECTION_HELP = "Collection (default: the config's collection, else 'default')."
# Commands that read no config (assemble, execute) take PRESET_HELP with the default shown.
PRESET_HELP = f"Policy preset ({', '.join(PRESETS)}) or a policy TOML file."
POLICY_HELP = (
    f"{PRESET_HELP[:-1]} (default: the config's, else {DEFAULT_PRESET}; `citebound config show` "
    "says what each preset is)."
)
PROVIDER_HELP = "LLM provider (default: the config's, else extractive)."


def config_option(fn: F) -> F:
    """`--config FILE` (the value reaches the command as `config_file`)."""
    return click.option("--config", "config_file", default=None, help=CONFIG_HELP)(fn)


def store_option(fn: F) -> F:
    """`--store DIR` (as `store_dir`, a Path or None: `resolve_store` or the Config fills it)."""
    return click.option(
        "--store", "store_dir", type=click.Path(path_type=Path), default=None, help=STORE_HELP
    )(fn)


def collection_option(fn: F) -> F:
    """`--collection NAME` (None: the config's collection)."""
    return click.option("--collection", default=None, help=COLLECTION_HELP)(fn)


def policy_option(fn: F) -> F:
    """`--policy PRESET|FILE` (None: the config's policy)."""
    return click.option("--policy", default=None, help=POLICY_HELP)(fn)


def provider_option(fn: F) -> F:
    """`--provider NAME`, one of `citebound.llm.PROVIDERS` (None: the config's provider)."""
    return click.option(
        "--provider", type=click.Choice(PROVIDERS), default=None, help=PROVIDER_HELP
    )(fn)


def store_override(store_dir: Path | None) -> str | None:
    """`--store` as a config override (None: leave the config's store)."""
    return None if store_dir is None else str(store_dir)


def resolve_store(store_dir: Path | None) -> Path:
    """--store, else the config's store ($CITEBOUND_STORE, else ./citebound.toml's when
    present), else ./.citebound: what `ask` reads, for commands that build no Config."""
    if store_dir is not None:
        return store_dir
    from citebound.config import load_config

    try:
        return load_config().store_path
    except ConfigError as err:
        fail(str(err))


DATABASE_HELP = (
    "PostgreSQL URL (postgresql://user:password@host:port/db) of a served store and audit "
    "shared by several processes; default $CITEBOUND_DATABASE_URL, then [store] url in "
    "citebound.toml, else the embedded store. docs/postgres.md."
)


def database_option(fn: F) -> F:
    """`--database URL` (also read from $CITEBOUND_DATABASE_URL)."""
    return click.option(
        "--database", default=None, envvar="CITEBOUND_DATABASE_URL", help=DATABASE_HELP
    )(fn)


def resolve_database(cli_value: str | None) -> str:
    """--database / $CITEBOUND_DATABASE_URL, else `[store] url` of ./citebound.toml, else ""."""
    if cli_value:
        return cli_value
    from pathlib import Path

    if not Path("citebound.toml").is_file():
        return ""
    from citebound.config import load_config

    try:
        return load_config().database
    except ConfigError as err:
        fail(str(err))
