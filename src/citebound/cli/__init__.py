"""`citebound` command. Each module in this package contributes `COMMANDS` (click commands).

Exit codes are shared by every command: 0 OK/answered, 3 NO_EVIDENCE/refused, 2 FAILED or
usage error, with a one-line reason on stderr.

Start-up: a command's module is imported only when that command runs, so `citebound --version`
imports click and nothing else, and `citebound ask` never imports the web server, the audit
exporters or PDF generation. `REGISTRY` maps each command name to its module and a one-line help
(shown by `citebound --help` without importing anything).

Adding a command: put it in a module of this package with `COMMANDS = [...]` and add one line to
`REGISTRY`. A module that is not registered still works (its commands are found by importing
every unregistered module, which is slow), and `tests/core/test_core_cli_startup.py` fails until
it is registered.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from typing import Any

import click

from citebound._version import __version__
from citebound.cli import _exit

# name -> (module under citebound.cli, one-line help for `citebound --help`)
REGISTRY: dict[str, tuple[str, str]] = {
    "apikey": ("serve", "Make an API key and print its config entry."),
    "ask": ("ask", "Answer a question from your documents: cited and validated, or refused."),
    "assemble": ("assemble", "Validate and select a retrieval bundle, build the exact prompt."),
    "assemble-prompt": (
        "assemble_prompt",
        "Retrieve and assemble a prompt with citation markers for your own LLM.",
    ),
    "audit": ("audit", "List, show, export and replay the audit records."),
    "batch": ("batch", "Answer, re-validate, evaluate or ingest in bulk on Apache Spark."),
    "chat": ("chat", "Hold a conversation: follow-up questions, each cited and validated."),
    "config": ("ask", "Inspect the effective configuration."),
    "demo": ("demo", "Ingest the sample corpus and ask it fixed questions (offline)."),
    "documents": ("ingest", "List the documents of a collection."),
    "execute": ("execute", "Send a prompt build result to a model and print the result."),
    "ingest": ("ingest", "Ingest files or folders into a collection and update its indexes."),
    "mcp": ("mcp", "Serve the store to agents over the Model Context Protocol."),
    "retrieve": ("retrieve", "Print the retrieval bundle of a question (no model call)."),
    "serve": ("serve", "Serve the HTTP API and the web page."),
    "validate": ("validate", "Validate an answer against an assembled bundle."),
}


def _commands_of(module_name: str) -> dict[str, click.Command]:
    module = importlib.import_module(f"{__name__}.{module_name}")
    return {c.name: c for c in getattr(module, "COMMANDS", []) if c.name}


def unregistered_modules() -> list[str]:
    """Command modules of this package that `REGISTRY` does not name (sorted)."""
    known = {module for module, _ in REGISTRY.values()}
    return sorted(
        info.name
        for info in pkgutil.iter_modules(__path__)
        if not info.name.startswith("_") and info.name not in known
    )


class LazyGroup(click.Group):
    """A click group that imports a command's module on first use."""

    def main(self, args: Sequence[str] | None = None, *rest: Any, **kwargs: Any) -> Any:
        # The process's own command line (args from sys.argv): a command that is done may end
        # the process without the interpreter's teardown (cli/_exit.py). Called with explicit
        # arguments (tests, click's runner, an embedding program), it exits as click always does.
        if args is not None:
            return super().main(args, *rest, **kwargs)
        _exit.own_process()
        try:
            return super().main(None, *rest, **kwargs)
        except SystemExit as stop:
            if _exit.released() and (stop.code is None or isinstance(stop.code, int)):
                _exit.exit_now(stop.code or 0)
            raise

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(REGISTRY)
        for module_name in unregistered_modules():
            names.update(_commands_of(module_name))
        return sorted(names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = REGISTRY.get(cmd_name)
        if entry is not None:
            return _commands_of(entry[0]).get(cmd_name)
        for module_name in unregistered_modules():
            command = _commands_of(module_name).get(cmd_name)
            if command is not None:
                return command
        return None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The registry's help lines: `citebound --help` imports no command module.
        rows = [(name, REGISTRY[name][1]) for name in sorted(REGISTRY)]
        for module_name in unregistered_modules():
            for name, command in _commands_of(module_name).items():
                rows.append((name, command.get_short_help_str(limit=formatter.width)))
        with formatter.section("Commands"):
            formatter.write_dl(sorted(rows))


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="citebound")
def main() -> None:
    """Answer questions only from your own documents: cited and validated, or refused."""
