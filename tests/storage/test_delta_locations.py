"""Delta tables anywhere: URI parsing, storage options, a real S3 server on loopback, abfss://."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citebound.audit.location import STORAGE_OPTIONS_ENV, table_location
from citebound.config import load_config
from citebound.errors import AuditError, ConfigError

SEED_URI = "abfss://gold-genai@ecomdatastoreproject.dfs.core.windows.net/rag/validations/v1/"


def test_abfss_uri_of_seed_001_parses() -> None:
    loc = table_location(SEED_URI)
    assert (loc.provider, loc.bucket, loc.account, loc.prefix) == (
        "azure",
        "gold-genai",
        "ecomdatastoreproject",
        "rag/validations/v1",
    )
    assert loc.uri == SEED_URI  # handed to delta-rs unchanged, "//" intact
    assert str(Path(SEED_URI)) != SEED_URI  # what the old sink did: the bug
    assert loc.child("answers").uri == SEED_URI.rstrip("/") + "/answers"


@pytest.mark.parametrize(
    ("uri", "provider", "bucket", "prefix"),
    [
        ("s3://bucket/a/b", "s3", "bucket", "a/b"),
        ("s3a://bucket", "s3", "bucket", ""),
        ("gs://bkt/audit/v1", "gcs", "bkt", "audit/v1"),
        ("az://container/x", "azure", "container", "x"),
    ],
)
def test_object_store_uris(uri: str, provider: str, bucket: str, prefix: str) -> None:
    loc = table_location(uri)
    assert (loc.provider, loc.bucket, loc.prefix, loc.uri) == (provider, bucket, prefix, uri)
    assert not loc.is_local


def test_local_forms(tmp_path: Path) -> None:
    assert table_location(tmp_path / "t").local_path == tmp_path / "t"
    assert table_location(f"file://{tmp_path}/t").local_path == tmp_path / "t"
    assert table_location("rel/t").local_path == Path("rel/t").absolute()


@pytest.mark.parametrize(
    "bad",
    [
        "abfss://account.dfs.core.windows.net/x",  # no container@
        "s3:///prefix",  # no bucket
        "hdfs://nn/x",  # unsupported scheme
        "file://otherhost/x",
        "s3://b/x?versionId=1",
    ],
)
def test_bad_uris_are_config_errors(bad: str) -> None:
    with pytest.raises(ConfigError):
        table_location(bad)


def test_storage_options_precedence() -> None:
    env = {STORAGE_OPTIONS_ENV: json.dumps({"AWS_REGION": "env", "AWS_ALLOW_HTTP": True})}
    loc = table_location(
        "s3://b/x",
        {"AWS_ENDPOINT_URL": "http://127.0.0.1:1"},
        config_options={"AWS_REGION": "file", "AWS_ENDPOINT_URL": "file"},
        env=env,
    )
    assert loc.storage_options == {
        "AWS_REGION": "env",
        "AWS_ALLOW_HTTP": "true",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
    }
    with pytest.raises(ConfigError, match=STORAGE_OPTIONS_ENV):
        table_location("s3://b/x", env={STORAGE_OPTIONS_ENV: "[1]"})


def test_config_keeps_uris_and_options(tmp_path: Path) -> None:
    (tmp_path / "citebound.toml").write_text(
        '[audit]\ndelta_path = "s3://bucket/audit"\n'
        'delta_storage_options = { AWS_REGION = "eu-west-1" }\n'
    )
    c = load_config(tmp_path / "citebound.toml", env={})
    assert c.audit_delta_path == "s3://bucket/audit"  # not anchored to the file's directory
    assert c.audit.delta_storage_options == {"AWS_REGION": "eu-west-1"}
    local = load_config(env={"CITEBOUND_AUDIT_DELTA_PATH": f"file://{tmp_path}/a"})
    assert local.audit_delta_path == tmp_path / "a"


deltalake = pytest.importorskip("deltalake")


@pytest.mark.integration
def test_abfss_sink_reaches_the_right_container_and_prefix() -> None:
    """No network: the Azure endpoint is a loopback server that records what it is asked."""
    from citebound.audit.delta import DeltaAuditSink
    from citebound.testing.object_store import recording_server

    with recording_server() as (url, lines):
        options = {
            "AZURE_STORAGE_ACCOUNT_KEY": "a2V5",
            "AZURE_ENDPOINT": url,
            "AZURE_ALLOW_HTTP": "true",
        }
        with pytest.raises(AuditError) as err:
            DeltaAuditSink(SEED_URI, storage_options=options)
        assert "did not match any known pattern" not in str(err.value)
    assert lines and lines[0].startswith("GET /gold-genai?")
    assert "prefix=rag%2Fvalidations%2Fv1%2F_delta_log%2F" in lines[0]


@pytest.mark.integration
def test_s3_sink_on_a_loopback_server(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("moto", reason="the S3 test needs moto[server] (citebound[spark])")
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "audit"))
    from audit_samples import record_for

    from citebound.audit import open_sink
    from citebound.audit.delta import DeltaAuditSink
    from citebound.testing.object_store import create_bucket, s3_server, storage_options

    with s3_server() as endpoint:
        create_bucket(endpoint, "audit")
        uri = "s3://audit/rag/validations/v1"
        sink = DeltaAuditSink(uri, storage_options=storage_options(endpoint))
        sink.append(record_for("ok"))
        sink.append_many([record_for("refusal", request_id=f"r{i}") for i in range(3)])
        with pytest.raises(AuditError, match="already exist"):
            sink.append_many([record_for("refusal", request_id="r1")])
        with pytest.raises(AuditError, match="already exists"):
            sink.append(record_for("ok"))
        # A second reader from the environment alone (how the CLI opens it)
        monkeypatch.setenv(STORAGE_OPTIONS_ENV, json.dumps(storage_options(endpoint)))
        again = open_sink(uri)
        assert isinstance(again, DeltaAuditSink)
        assert [r.request_id for r in again.records()] == ["r0", "r1", "r2", "req-1"]
        assert all(r.hash_ok() for r in again.records())
        from click.testing import CliRunner

        from citebound.cli import main

        listed = CliRunner().invoke(main, ["audit", "list", "--audit", uri])
        assert listed.exit_code == 0, listed.output
        assert all(rid in listed.output for rid in ("r0", "r1", "r2", "req-1"))
        table = deltalake.DeltaTable(uri, storage_options=storage_options(endpoint))
        assert table.version() == 2 and table.metadata().configuration == {
            "delta.appendOnly": "true"
        }


def test_batch_staging_on_a_loopback_s3_server() -> None:
    """The staging area of `batch answer` (staged rows, run manifest) and its idempotent commit
    work on an `s3://` OUT like on a directory: a commit run twice writes each record once."""
    pytest.importorskip("moto", reason="the S3 test needs moto[server] (citebound[spark])")
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "audit"))
    from audit_samples import record_for

    from citebound.audit.delta import DeltaAuditSink
    from citebound.batch.commit import commit_staged, run_request_ids
    from citebound.batch.staging import Staging, slice_key
    from citebound.contracts.public import PublicResponse
    from citebound.testing.object_store import create_bucket, s3_server, storage_options

    with s3_server() as endpoint:
        create_bucket(endpoint, "batch")
        out = table_location("s3://batch/runs/out", storage_options(endpoint))
        staging = Staging(out, "run-1")
        assert staging.read_manifest() is None
        staging.write_manifest({"run_id": "run-1", "complete": False})
        assert staging.read_manifest() == {"complete": False, "run_id": "run-1"}
        rows = []
        for rid in ("a", "b", "c"):
            record = record_for("refusal", request_id=rid, run_id="run-1")
            response = PublicResponse.model_validate(
                {
                    "request_id": rid,
                    "status": "NO_EVIDENCE",
                    "answer": "Not in the documents.",
                    "token_usage": {"prompt": 0, "completion": 0, "total": 0},
                    "latency_ms": 1.0,
                }
            )
            rows.append((rid, response.model_dump_json(), record.model_dump_json()))
        key = slice_key("run-1", "a")
        staging.write_part(key, rows[:2])
        staging.write_part(key, rows[2:])
        assert len(staging.part_files(key)) == 2 and staging.part_files("s0") == []
        audit_at, answers_at = out.child("audit"), out.child("answers")
        DeltaAuditSink(audit_at)
        done = commit_staged(staging, {"a", "b", "c"}, audit_at, answers_at)
        assert (done.audit_appended, done.answers_appended, done.files) == (3, 3, 2)
        assert staging.part_files() == []
        staging.write_part(key, rows[:1])  # staged again (a crash before the delete)
        again = commit_staged(staging, {"a", "b", "c"}, audit_at, answers_at)
        assert (again.audit_appended, again.answers_appended, again.staged_rows) == (0, 0, 1)
        assert run_request_ids(audit_at, "run-1") == {"a", "b", "c"}
        assert len(DeltaAuditSink(audit_at).records()) == 3
