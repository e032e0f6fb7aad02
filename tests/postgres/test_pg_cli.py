"""--database / $CITEBOUND_DATABASE_URL / [store] url on the CLI, against a real PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citebound.api.security import SharedKeyRing
from citebound.audit.postgres import PostgresAuditSink
from citebound.cli import main
from citebound.config import load_config
from citebound.errors import AccessDenied, ConfigError
from citebound.store.postgres import PostgresStore

CORPUS = Path(__file__).resolve().parents[2] / "src" / "citebound" / "sample_corpus"


def test_store_table_and_env_select_the_database(tmp_path: Path) -> None:
    toml = tmp_path / "citebound.toml"
    toml.write_text('[store]\npath = "st"\nurl = "postgresql://u:pw@db/x"\n', "utf-8")
    config = load_config(toml, env={})
    assert config.database == "postgresql://u:pw@db/x" and config.store == str(tmp_path / "st")
    env = {"CITEBOUND_DATABASE_URL": "postgresql://other/y"}
    assert load_config(toml, env=env).database == "postgresql://other/y"
    assert load_config(None, env={}).database == ""  # embedded by default
    toml.write_text('[store]\nurl = "postgresql://u@db/x"\nsize = 1\n', "utf-8")
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(toml, env={})


def test_config_show_never_prints_the_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CITEBOUND_DATABASE_URL", "postgresql://u:hunter2@db:5432/x")
    out = CliRunner().invoke(main, ["config", "show"]).output
    assert "hunter2" not in out and "postgresql://u:***@db:5432/x" in out


@pytest.mark.parametrize("command", [["ingest", str(CORPUS)], ["ask", "oil grade?"],
                                     ["audit", "list"], ["documents", "list"]])  # fmt: skip
def test_unreachable_database_is_one_clear_line(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url = "postgresql://u:hunter2@127.0.0.1:9/x?connect_timeout=2"
    r = CliRunner().invoke(main, [*command, "--database", url])
    assert r.exit_code == 2, r.output
    assert (
        "cannot reach the" in r.output and "database at postgresql://u:***@127.0.0.1:9" in r.output
    )
    assert "hunter2" not in r.output and "Traceback" not in r.output


def test_ingest_ask_and_audit_through_the_database(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gb7.md").write_text((CORPUS / "gb7_specification.md").read_text("utf-8"), "utf-8")
    monkeypatch.setenv("CITEBOUND_DATABASE_URL", pg_url)
    runner = CliRunner()
    r = runner.invoke(main, ["ingest", str(docs), "--collection", "plant", "--no-progress"])
    assert r.exit_code == 0, r.output
    assert not (tmp_path / ".citebound" / "store.sqlite").exists()  # nothing embedded
    r = runner.invoke(main, ["ask", "What is the GB-7 gearbox oil grade?", "--collection",
                             "plant", "--json"])  # fmt: skip
    assert r.exit_code == 0, r.output
    answer = json.loads(r.output)
    assert "ISO VG 220" in answer["answer"]
    assert not (tmp_path / ".citebound" / "audit.sqlite").exists()  # audited in the database
    with PostgresAuditSink(pg_url) as sink:
        (record,) = sink.find(answer["request_id"])
    r = runner.invoke(main, ["audit", "show", answer["request_id"]])
    assert r.exit_code == 0 and json.loads(r.output)["record_hash"] == record.record_hash
    r = runner.invoke(main, ["audit", "replay", answer["request_id"]])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["documents", "list", "--collection", "plant"])
    assert r.exit_code == 0 and "gb7.md" in r.output


def test_api_keys_stored_in_the_database_reach_every_replica(pg_url: str, tmp_path: Path) -> None:
    runner = CliRunner()
    store = PostgresStore(pg_url, root=tmp_path / "r")
    ring = SharedKeyRing([], store.api_keys, refresh_s=0)  # a replica, re-reading every call
    assert not ring.enabled
    r = runner.invoke(main, ["apikey", "ops", "--role", "admin", "--database", pg_url,
                             "--store", str(tmp_path)])  # fmt: skip
    assert r.exit_code == 0, r.output
    key = r.stdout.strip().splitlines()[0]
    assert key.startswith("cb_") and key not in json.dumps(
        [k.model_dump() for k in store.api_keys()]
    )
    who = ring.authenticate(key)
    assert (who.name, who.role) == ("ops", "admin")
    again = runner.invoke(main, ["apikey", "ops", "--database", pg_url, "--store", str(tmp_path)])
    assert again.exit_code == 2 and "exists" in again.output
    r = runner.invoke(main, ["apikey", "ops", "--revoke", "--database", pg_url,
                             "--store", str(tmp_path)])  # fmt: skip
    assert r.exit_code == 0, r.output
    with pytest.raises(AccessDenied):
        ring.authenticate(key)
    store.close()


def test_revoking_the_last_stored_key_never_opens_the_server(pg_url: str, tmp_path: Path) -> None:
    store = PostgresStore(pg_url, root=tmp_path / "r")
    from citebound.api.security import new_key

    key, entry = new_key("only", role="reader", collections=["*"])
    store.add_api_key(entry)
    ring = SharedKeyRing([], store.api_keys, refresh_s=0)
    assert ring.enabled and ring.authenticate(key).name == "only"
    assert store.revoke_api_key("only")
    assert ring.enabled  # still a server that needs keys
    for presented in (key, None):
        with pytest.raises(AccessDenied):
            ring.authenticate(presented)
    store.close()
