"""Options several commands take are declared once (cli/_common.py, #32 item 6): every command
that takes --config, --store, --collection, --policy or --provider shows the same help and
behaves the same; the provider choices are `citebound.llm.PROVIDERS`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
import pytest

import citebound.llm
from citebound import cli
from citebound.cli import _common

# Options that are not the shared one on purpose, and why.
OWN = {
    # A filter: without it every collection is listed (the shared one means "the config's").
    ("documents list", "--collection"),
    # These read no config: the default preset itself is their default (PRESET_HELP).
    ("assemble", "--policy"),
    ("execute", "--policy"),
    # Default: the policy the record / bundle was made with.
    ("audit replay", "--policy"),
    ("validate", "--policy"),
    # No config either: extractive by default, shown.
    ("assemble", "--provider"),
    ("execute", "--provider"),
}
SHARED_HELP = {
    "--config": _common.CONFIG_HELP,
    "--store": _common.STORE_HELP,
    "--collection": _common.COLLECTION_HELP,
    "--policy": _common.POLICY_HELP,
    "--provider": _common.PROVIDER_HELP,
}


def _commands() -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(cli.main)
    for name in sorted(cli.REGISTRY):
        command = cli.main.get_command(ctx, name)
        assert command is not None
        yield from _walk(name, command)


def _walk(path: str, command: click.Command) -> Iterator[tuple[str, click.Command]]:
    if isinstance(command, click.Group):
        for sub, child in sorted(command.commands.items()):
            yield from _walk(f"{path} {sub}", child)
    else:
        yield path, command


def _options() -> list[tuple[str, str, click.Option]]:
    return [
        (path, flag, param)
        for path, command in _commands()
        for param in command.params
        if isinstance(param, click.Option)
        for flag in param.opts
        if flag in SHARED_HELP
    ]


def test_the_shared_options_are_found_where_they_should_be() -> None:
    taken = {(path, flag) for path, flag, _ in _options()}
    for flag in ("--config", "--store", "--collection", "--policy", "--provider"):
        assert ("ask", flag) in taken and ("batch answer", flag) in taken
    assert {("ingest", "--store"), ("ingest", "--collection"), ("ingest", "--config")} <= taken
    assert {("audit replay", "--store"), ("serve", "--store"), ("mcp", "--store")} <= taken
    assert taken >= OWN  # an exception for an option no command has any more: remove it


@pytest.mark.parametrize("flag", sorted(SHARED_HELP))
def test_every_command_uses_the_shared_option(flag: str) -> None:
    found = [(path, opt) for path, f, opt in _options() if f == flag and (path, f) not in OWN]
    assert len(found) >= 4, found
    for path, opt in found:
        assert opt.help == SHARED_HELP[flag], f"{path} {flag}: declare it with cli/_common.py"
        assert opt.default is None, f"{path} {flag}: the shared default is the config's"
        assert opt.opts == [flag] and not opt.secondary_opts
    dests = {opt.name for _, opt in found}
    assert len(dests) == 1, f"{flag} reaches commands under several names: {dests}"
    if flag == "--store":
        assert all(isinstance(opt.type, click.Path) for _, opt in found)


def test_every_provider_choice_is_the_registry() -> None:
    choices = [(path, opt.type) for path, flag, opt in _options() if flag == "--provider"]
    assert len(choices) >= 6
    for path, kind in choices:
        assert isinstance(kind, click.Choice), path
        assert tuple(kind.choices) == citebound.llm.PROVIDERS, path


def test_every_preset_is_named_in_the_policy_help() -> None:
    from citebound.policy import DEFAULT_PRESET, PRESETS

    for name in PRESETS:
        assert name in _common.POLICY_HELP and name in _common.PRESET_HELP
    assert DEFAULT_PRESET in _common.POLICY_HELP


def test_resolve_store_reads_the_config_like_ask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CITEBOUND_STORE", raising=False)
    assert _common.resolve_store(None) == Path(".citebound")
    assert _common.resolve_store(tmp_path / "given") == tmp_path / "given"
    (tmp_path / "citebound.toml").write_text('store = "elsewhere"\n', encoding="utf-8")
    assert _common.resolve_store(None) == Path("elsewhere")
    monkeypatch.setenv("CITEBOUND_STORE", "from-env")
    assert _common.resolve_store(None) == Path("from-env")
