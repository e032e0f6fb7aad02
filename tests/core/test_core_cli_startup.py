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


# What the CLI's first screen must never import: the web stack, the contracts and pipeline
# (pydantic), numpy and onnxruntime. `ask` imports them only once it runs.
HEAVY = {
    "pydantic",
    "numpy",
    "onnxruntime",
    "tokenizers",
    "fastapi",
    "httpx",
    "citebound.api",
    "citebound.contracts",
    "citebound.pipeline",
    "citebound.index",
}


def test_ask_help_imports_no_model_library_nor_the_pipeline() -> None:
    mods = modules_after(["ask", "--help"])
    assert "citebound.cli.ask" in mods
    assert not HEAVY & mods


def test_importing_the_cli_imports_click_only() -> None:
    code = "import sys, json; import citebound.cli; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    mods = set(json.loads(out.stdout))
    assert "click" in mods and not HEAVY & mods


def test_the_query_embedder_imports_neither_the_index_builder_nor_the_store() -> None:
    # `ask` starts the embedder's onnxruntime session on a thread before anything else
    # (cli/_warm.py); every module imported on that thread before the session delays it.
    code = (
        "import sys, json; import citebound.index.embedder\nprint(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    mods = set(json.loads(out.stdout))
    assert "citebound.index.embedder" in mods
    unwanted = {"citebound.index.build", "citebound.store", "citebound.contracts", "pydantic"}
    assert not unwanted & mods


def test_the_index_package_still_exports_its_names_lazily() -> None:
    import citebound.index as index

    for name in index.__all__:
        assert getattr(index, name) is not None
    assert set(index.__all__) <= set(dir(index))
    with pytest.raises(AttributeError):
        _ = index.no_such_name


def test_exit_now_leaves_the_normal_exit_to_a_stream_that_cannot_flush() -> None:
    # A closed stdout: exit_now returns and the interpreter exits as usual (its code, its
    # message), rather than dropping output silently.
    code = (
        "import sys\n"
        "from citebound.cli import _exit\n"
        "sys.stdout.close()\n"
        "_exit.exit_now(5)\n"
        "sys.stderr.write('returned\\n')\n"
        "sys.exit(4)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 4 and "returned" in out.stderr


def test_exit_now_runs_atexit_functions_and_flushes_before_ending() -> None:
    code = (
        "import atexit, sys\n"
        "from citebound.cli import _exit\n"
        "atexit.register(lambda: print('atexit ran'))\n"
        "sys.stdout.write('x' * 100000)\n"
        "_exit.exit_now(3)\n"
        "print('not reached')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 3
    assert out.stdout == "x" * 100000 + "atexit ran\n"


def test_the_collector_pauses_only_when_the_cli_owns_the_process() -> None:
    code = (
        "import gc\n"
        "from citebound.cli import _exit\n"
        "_exit.pause_gc(); a = gc.isenabled()\n"  # in-process caller: unchanged
        "_exit.own_process(); _exit.pause_gc(); b = gc.isenabled()\n"
        "_exit.resume_gc(); print(a, b, gc.isenabled())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["True", "False", "True"]


def test_a_deleted_index_name_stays_deleted() -> None:
    code = (
        "import citebound.index as index\n"
        "assert callable(index.update_indexes)\n"
        "del index.update_indexes\n"
        "print(hasattr(index, 'update_indexes'), hasattr(index, 'fuse'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "True"], out.stderr
