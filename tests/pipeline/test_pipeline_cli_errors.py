"""Every error a newcomer meets is one actionable line on stderr with the exit-code contract
(0 OK / 3 refused / 2 failed), never a traceback, and never a silently created store."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from citebound.cli import main
from citebound.store.sqlite import SqliteStore

QUESTION = "What is the CX-9 safety valve set pressure?"


def run(tmp_path: Path, *args: str) -> Result:
    env = {"CITEBOUND_AUDIT_SQLITE_PATH": str(tmp_path / "audit.sqlite")}
    return CliRunner().invoke(main, list(args), env=env)


def one_line(result: Result) -> str:
    """The single stderr line (a traceback or a multi-line dump fails here)."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("citebound: ") and "Traceback" not in result.output
    return lines[0]


def ask(store: Path, tmp_path: Path, *args: str, collection: str = "demo") -> Result:
    return run(tmp_path, "ask", *args, "--store", str(store), "--collection", collection)


@pytest.mark.parametrize("command", ["ask", "serve"])
def test_store_that_is_a_file(tmp_path: Path, command: str) -> None:
    afile = tmp_path / "notastore"
    afile.write_text("x", encoding="utf-8")
    args = [command, QUESTION] if command == "ask" else [command, "--port", "0"]
    result = run(tmp_path, *args, "--store", str(afile))
    assert result.exit_code == 2
    assert "is a file, not a store directory" in one_line(result)


@pytest.mark.parametrize("command", ["ask", "serve", "retrieve"])
def test_missing_store_is_not_created(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "typo"
    args = [command, QUESTION] if command != "serve" else [command, "--port", "0"]
    result = run(tmp_path, *args, "--store", str(missing))
    assert result.exit_code == 2
    line = one_line(result)
    assert str(missing) in line and "citebound ingest" in line
    assert not missing.exists()


def test_misspelled_collection_lists_the_existing_ones(
    demo_store_dir: Path, tmp_path: Path
) -> None:
    result = ask(demo_store_dir, tmp_path, QUESTION, collection="demoo")
    assert result.exit_code == 2
    line = one_line(result)
    assert "no collection 'demoo'" in line and "(existing: demo)" in line


def test_ingest_of_an_empty_folder_fails(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = run(tmp_path, "ingest", str(tmp_path / "empty"), "--store", str(tmp_path / "s"))
    assert result.exit_code == 2
    line = one_line(result)
    assert "no files in" in line and ".md" in line and ".pdf" in line


def test_ingest_of_unsupported_types_names_them(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "manual.odt").write_bytes(b"PK\x03\x04")
    (docs / "sheet.numbers").write_bytes(b"PK\x03\x04")
    result = run(tmp_path, "ingest", str(docs), "--store", str(tmp_path / "s"))
    assert result.exit_code == 2
    line = one_line(result)
    assert "2 file(s) of unsupported type (.numbers .odt)" in line and "supported: " in line


def test_too_long_question_says_the_limit(demo_store: SqliteStore, tmp_path: Path) -> None:
    result = ask(demo_store.root, tmp_path, "pump valve " * 200)
    assert result.exit_code == 2
    line = one_line(result)
    assert "QUESTION_TOO_LONG" in line and "allows 256" in line and "characters" in line


@pytest.mark.parametrize(
    ("option", "value"),
    [("--date-from", "2024-13-45"), ("--date-to", "2024-2-3"), ("--date-to", "soon")],
)
def test_bad_date_is_a_usage_error(
    demo_store: SqliteStore, tmp_path: Path, option: str, value: str
) -> None:
    result = ask(demo_store.root, tmp_path, QUESTION, option, value)
    assert result.exit_code == 2
    line = one_line(result)
    assert f"{option} {value!r} is not a date" in line and "YYYY-MM-DD" in line
    assert "INTERNAL_ERROR" not in line


def test_model_server_down_names_the_url_and_the_fix(
    demo_store: SqliteStore, tmp_path: Path
) -> None:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    result = ask(
        demo_store.root, tmp_path, QUESTION, "--provider", "ollama", "--model", "llama3",
        "--base-url", url,
    )  # fmt: skip
    assert result.exit_code == 2
    line = one_line(result)
    assert url in line and "ollama serve" in line and "--base-url" in line
    assert result.stdout == ""  # a failed ask is the stderr line only, as the README says
    as_json = ask(demo_store.root, tmp_path, QUESTION, "--provider", "ollama", "--model", "m",
                  "--base-url", url, "--json")  # fmt: skip
    assert json.loads(as_json.stdout)["status"] == "FAILED"  # --json still prints the response


def test_ask_without_collection_uses_the_only_one(demo_store: SqliteStore, tmp_path: Path) -> None:
    assert demo_store.collections() == ["demo"]
    result = run(tmp_path, "ask", QUESTION, "--store", str(demo_store.root))
    assert result.exit_code == 0, result.output
    assert "Sources:" in result.stdout


def test_ask_without_collection_on_a_store_of_two_names_them(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Valves\n\nThe CX-9 safety valve opens at 10.5 bar.\n")
    store = tmp_path / "two"
    for name in ("one", "two"):
        assert run(tmp_path, "ingest", str(docs), "--store", str(store), "--collection", name,
                   "--no-progress").exit_code == 0  # fmt: skip
    result = run(tmp_path, "ask", QUESTION, "--store", str(store))
    assert result.exit_code == 2
    assert "no collection 'default'" in one_line(result) and "one, two" in one_line(result)


def test_audit_list_takes_the_store_and_shows_the_question(
    demo_store: SqliteStore, tmp_path: Path
) -> None:
    assert ask(demo_store.root, tmp_path, QUESTION).exit_code == 0
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    (store_dir / "audit.sqlite").write_bytes((tmp_path / "audit.sqlite").read_bytes())
    # No --audit and no audit variable: --store finds STORE/audit.sqlite like every command.
    result = CliRunner().invoke(main, ["audit", "list", "--store", str(store_dir)], env={})
    assert result.exit_code == 0, result.output
    assert result.stdout.rstrip().split("\t")[-1] == QUESTION
    empty = tmp_path / "empty-store"
    empty.mkdir()
    missing = CliRunner().invoke(main, ["audit", "list", "--store", str(empty)], env={})
    assert missing.exit_code == 2 and "no audit store at" in one_line(missing)
