"""CLI start-up: commands load lazily, so `--version` and `ask` import only what they need.

Import sets are checked, not timings (timings live in benchmarks/bench_cli_startup.py).
"""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from citebound import cli


def modules_after(argv: list[str]) -> set[str]:
    """Run the CLI with `argv` in a fresh interpreter; the modules it had imported at exit."""
    code = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: print('\\nMODULES=' + json.dumps(sorted(sys.modules))))\n"
        "from citebound.cli import main\n"
        f"main({argv!r})\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    line = [x for x in out.stdout.splitlines() if x.startswith("MODULES=")]
    assert line, out.stderr
    return set(json.loads(line[-1].removeprefix("MODULES=")))


def test_every_command_module_is_registered() -> None:
    # An unregistered module still works but makes every command import it: register it.
    assert cli.unregistered_modules() == []


@pytest.mark.parametrize("name", sorted(cli.REGISTRY))
def test_registry_names_resolve_to_that_command(name: str) -> None:
    ctx = click.Context(cli.main)
    command = cli.main.get_command(ctx, name)
    assert command is not None and command.name == name


def test_version_imports_no_command_and_no_heavy_library() -> None:
    mods = modules_after(["--version"])
    heavy = {
        "pydantic",
        "numpy",
        "onnxruntime",
        "httpx",
        "citebound.contracts",
        "citebound.cli.ask",
    }
    assert not heavy & mods


def test_help_lists_every_command_without_importing_them() -> None:
    mods = modules_after(["--help"])
    assert not {f"citebound.cli.{m}" for m, _ in cli.REGISTRY.values()} & mods
    result = subprocess.run(
        [sys.executable, "-m", "citebound", "--help"], capture_output=True, text=True, timeout=60
    )
    for name in cli.REGISTRY:
        assert f"  {name} " in result.stdout


def test_an_unregistered_command_module_still_works(monkeypatch: pytest.MonkeyPatch) -> None:
    # What another branch's new command looks like before it is registered: found, and runs.
    monkeypatch.delitem(cli.REGISTRY, "demo")
    assert cli.unregistered_modules() == ["demo"]
    ctx = click.Context(cli.main)
    assert "demo" in cli.main.list_commands(ctx)
    command = cli.main.get_command(ctx, "demo")
    assert command is not None and command.name == "demo"


def test_extractive_ask_never_imports_the_web_or_http_stack(tmp_path: object) -> None:
    # A failing ask (no store) still goes through the command's imports.
    mods = modules_after(["ask", "pump?", "--store", str(tmp_path), "--collection", "none"])
    assert "citebound.cli.ask" in mods
    assert not {"httpx", "fastapi", "uvicorn", "citebound.api", "pyarrow"} & mods
