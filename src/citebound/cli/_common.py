"""Helpers shared by CLI commands: exit codes, JSON output, one-line errors."""

from __future__ import annotations

import sys
from typing import NoReturn

import click
from pydantic import BaseModel

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
