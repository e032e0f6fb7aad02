"""`citebound` command. Each module in this package contributes `COMMANDS` (click commands).

Exit codes are shared by every command: 0 OK/answered, 3 NO_EVIDENCE/refused, 2 FAILED or
usage error, with a one-line reason on stderr.
"""

from __future__ import annotations

import importlib
import pkgutil

import click

from citebound import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="citebound")
def main() -> None:
    """Answer questions only from your own documents: cited and validated, or refused."""


def _register() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for command in getattr(module, "COMMANDS", []):
            main.add_command(command)


_register()
