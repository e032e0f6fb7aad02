"""`citebound audit list|show|export|verify|replay`: read the append-only audit store.

Exit codes: 0 OK; 2 unknown request, unreadable store, tampered record or chain (`verify`;
`list` and `export` flag what fails and exit 2 too) or replay impossible; 1 for `replay` when
the current validator reaches a different verdict.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from citebound.audit import (
    DEFAULT_AUDIT_PATH,
    AuditRecord,
    AuditSink,
    audit_json,
    open_sink,
    replay,
)
from citebound.audit.chain import ChainReport
from citebound.audit.location import is_uri
from citebound.audit.replay import store_inputs
from citebound.cli._common import (
    EXIT_FAILED,
    F,
    database_option,
    fail,
    resolve_database,
    resolve_store,
    store_option,
)
from citebound.contracts.documents import Chunk
from citebound.errors import AuditError, CiteboundError, ConfigError
from citebound.policy import PRESETS, Policy, load_policy

EXIT_VERDICT_CHANGED = 1

_audit_path_option = click.option(
    "--audit",
    "audit_path",
    type=str,  # not click.Path: it would turn abfss://c@a/x into abfss:/c@a/x
    default=None,
    help="Audit store: a SQLite file, a Delta table directory (*.delta or with _delta_log), or "
    "a Delta table URI (file://, s3://, abfss://, gs://; options from "
    "$CITEBOUND_DELTA_STORAGE_OPTIONS). "
    f"Default: the store's ([audit] sqlite_path, else STORE/audit.sqlite; {DEFAULT_AUDIT_PATH}).",
)


def _audit_path(audit_path: str | None, store_dir: Path | None) -> str | Path:
    """--audit if given, else the audit file of --store (or of the config's store)."""
    if audit_path is not None:
        return audit_path
    # Lazy: the config costs ~25 ms (python -X importtime), the stores ~60 ms, the Postgres and
    # Delta sinks need their extras (ImportError without): none is paid by a command that does not
    # use it.
    from citebound.config import load_config

    try:
        config = load_config(None, overrides={"store": str(store_dir)} if store_dir else {})
    except ConfigError as err:
        fail(str(err))
    return config.audit_sqlite_path


def _audit_option(fn: F) -> F:
    """--audit PATH|URI and --database URL (a PostgreSQL audit trail wins over the path)."""
    return _audit_path_option(database_option(fn))


def _open(where: str | Path, database: str | None = None) -> AuditSink:
    url = resolve_database(database)
    if url:
        from citebound.audit.postgres import PostgresAuditSink

        try:
            return PostgresAuditSink(url)
        except AuditError as err:
            fail(str(err))

    if is_uri(str(where)):
        try:
            return open_sink(str(where))
        except (AuditError, ConfigError) as err:
            fail(str(err))
    path = Path(where)
    if not path.exists():
        fail(
            f"no audit store at {path}: nothing was asked with this store yet "
            "(or pass --store DIR / --audit FILE)"
        )
    try:
        return open_sink(path)
    except AuditError as err:
        fail(str(err))


def _latest(sink: AuditSink, request_id: str) -> AuditRecord:
    try:
        found = sink.find(request_id)
    except AuditError as err:
        fail(str(err))
    if not found:
        fail(f"no audit record for request_id {request_id!r}")
    return found[-1]


def _records(sink: AuditSink) -> list[AuditRecord]:
    try:
        return sink.records()
    except AuditError as err:  # e.g. a row another program wrote (columns.from_row)
        fail(str(err))


def _chain(sink: AuditSink, anchor: str | None = None) -> ChainReport | None:
    """The chain report of a SQL sink (audit/chain.py); None for a sink without a chain."""
    verify_chain = getattr(sink, "verify_chain", None)
    if verify_chain is None:
        return None
    try:
        report: ChainReport = verify_chain(anchor)
    except (AuditError, ValueError) as err:
        fail(str(err))
    return report


def _flag_problems(report: ChainReport | None) -> None:
    """After list/export: name every break on stderr and exit 2 (the records were shown)."""
    if report is None or report.ok:
        return
    for p in report.problems:
        click.echo(f"{p.kind}: {p.message}", err=True)
    fail(f"{len(report.problems)} audit chain problem(s): see `citebound audit verify`")


@click.group("audit")
def audit_group() -> None:
    """Read the append-only audit store (one record per request)."""


@audit_group.command("list")
@_audit_option
@store_option
@click.option("--limit", type=int, default=50, show_default=True, help="Newest N records.")
def list_command(
    audit_path: str | None, store_dir: Path | None, database: str | None, limit: int
) -> None:
    """One line per record: time, request_id, run_id, status, validation, reason, question."""
    sink = _open(_audit_path(audit_path, store_dir), database)
    records = _records(sink)
    report = _chain(sink)
    if limit > 0:
        records = records[-limit:]
    for r in records:
        cols = [
            r.timestamp_utc,
            r.request_id,
            r.run_id or "-",
            r.status.value,
            r.validation_status.value if r.validation_status else "-",
            r.failure_reason or "-",
            _one_line(r.question, QUESTION_COLUMN_CHARS),
        ]
        flag = report.flag(r) if report is not None else None
        click.echo("\t".join(cols) + (f"\t!! {flag}" if flag else ""))
    sink.close()
    _flag_problems(report)


# Characters of the question shown by `audit list` (`audit show` prints all of it).
QUESTION_COLUMN_CHARS = 80


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@audit_group.command("show")
@_audit_option
@store_option
@click.argument("request_id")
def show_command(
    audit_path: str | None, store_dir: Path | None, database: str | None, request_id: str
) -> None:
    """Print the latest record of REQUEST_ID as JSON; exit 2 if its hash does not verify."""
    sink = _open(_audit_path(audit_path, store_dir), database)
    record = _latest(sink, request_id)
    sink.close()
    click.echo(audit_json(record))  # the bytes the hash covers (audit/text.py)
    if not record.hash_ok():
        fail(f"record {request_id} does not match its record_hash: it was altered")


@audit_group.command("export")
@_audit_option
@store_option
@click.option("--format", "fmt", type=click.Choice(["jsonl", "parquet"]), default="jsonl")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None)
def export_command(
    audit_path: str | None,
    store_dir: Path | None,
    database: str | None,
    fmt: str,
    out: Path | None,
) -> None:
    """Export every record (jsonl to stdout or --out; parquet needs --out)."""
    sink = _open(_audit_path(audit_path, store_dir), database)
    records = _records(sink)
    report = _chain(sink)
    sink.close()
    _export(records, fmt, out)
    _flag_problems(report)


def _export(records: list[AuditRecord], fmt: str, out: Path | None) -> None:
    if fmt == "jsonl":
        # audit_json, not model_dump_json: pydantic's JSON writes NaN and infinities as null,
        # and a record exported so no longer verifies its hash (the sinks keep them, docs/audit.md)
        lines = "".join(audit_json(r) + "\n" for r in records)
        if out is None:
            sys.stdout.write(lines)
        else:
            out.write_text(lines, encoding="utf-8")
        return
    if out is None:
        fail("--format parquet needs --out FILE")
    try:
        import pyarrow.parquet as pq

        from citebound.audit.delta import records_to_arrow
    except ImportError:
        fail("parquet export needs `pip install citebound[audit-delta]`")
    pq.write_table(records_to_arrow(records), str(out))
    click.echo(f"wrote {len(records)} records to {out}", err=True)


@audit_group.command("verify")
@_audit_option
@store_option
@click.option(
    "--anchor",
    default=None,
    help="N:HEAD printed by an earlier verify (kept elsewhere): proves the first N records "
    "unchanged and none of them deleted.",
)
def verify_command(
    audit_path: str | None, store_dir: Path | None, database: str | None, anchor: str | None
) -> None:
    """Verify the whole store: every record's hash and the chain linking them (an edit, a
    deletion, a reorder, a forged append or a truncated tail names its record); prints the
    head anchor to keep elsewhere. Exit 2 on any problem."""
    sink = _open(_audit_path(audit_path, store_dir), database)
    report = _chain(sink, anchor)
    sink.close()
    if report is None:
        fail("this audit sink has no chain: verify a SQLite, PostgreSQL or Delta audit store")
    for p in report.problems:
        click.echo(f"{p.kind}\tseq {p.seq}\t{p.request_id}\t{p.message}")
    click.echo(f"anchor {report.anchor}  ({report.count} records; keep it elsewhere)", err=True)
    if not report.ok:
        fail(f"{len(report.problems)} audit chain problem(s) in {report.count} records")
    click.echo(f"ok: {report.count} records, chain intact, head {report.anchor}")


def _policy_for(record: AuditRecord, name: str | None) -> Policy:
    try:
        if name:
            return load_policy(name)
        for preset in PRESETS:
            if load_policy(preset).fingerprint == record.policy_fingerprint:
                return load_policy(preset)
    except ConfigError as err:
        fail(str(err))
    fail(
        f"the recorded policy {record.policy_version} ({record.policy_fingerprint[:19]}…) is "
        "not a shipped preset; pass --policy PRESET_OR_FILE"
    )


def _store_inputs(
    store_dir: Path, database: str, record: AuditRecord, texts_needed: bool
) -> tuple[dict[str, str] | None, dict[str, str] | None]:
    """`audit.replay.store_inputs` from the store at `store_dir` / `database` (opened only
    when the record needs something from it)."""
    from citebound.store.open import open_store

    def chunks(chunk_ids: list[str]) -> list[Chunk]:
        try:
            store = open_store(store_dir, database=database)
        except CiteboundError as err:
            fail(str(err))
        try:
            return store.get_chunks(chunk_ids)
        finally:
            store.close()

    return store_inputs(record, chunks, texts_needed=texts_needed)


@audit_group.command("replay")
@_audit_option
@click.argument("request_id")
@click.option("--policy", "policy_name", default=None, help="Default: the recorded policy.")
@click.option(
    "--evidence",
    "evidence_file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="JSON object chunk_id -> sanitized text, for records stored without evidence texts.",
)
@store_option
def replay_command(
    audit_path: str | None,
    database: str | None,
    request_id: str,
    policy_name: str | None,
    evidence_file: Path | None,
    store_dir: Path | None,
) -> None:
    """Re-validate the stored raw model text with the current validator; report changes.

    Evidence comes from the record (when stored), else --evidence, else the document store
    (--store's); every text is checked against the sha256 recorded at answer time.
    """
    url = resolve_database(database)
    sink = _open(_audit_path(audit_path, store_dir), url)
    record = _latest(sink, request_id)
    sink.close()
    store_dir = resolve_store(store_dir)
    chunk_texts: dict[str, str] | None = None
    chunk_sources: dict[str, str] | None = None
    if url or (store_dir / "store.sqlite").is_file():
        chunk_texts, chunk_sources = _store_inputs(
            store_dir, url, record, texts_needed=evidence_file is None
        )
    if evidence_file is not None:
        try:
            data = json.loads(evidence_file.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            fail(f"cannot read {evidence_file}: {err}")
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            fail(f"{evidence_file} must be a JSON object of chunk_id -> text")
        chunk_texts = data
    report = replay(
        record,
        _policy_for(record, policy_name),
        chunk_texts=chunk_texts,
        chunk_sources=chunk_sources,
    )
    click.echo(report.model_dump_json(indent=2))
    if not report.replayable:
        fail(f"cannot replay {request_id}: {report.reason}", EXIT_FAILED)
    if report.verdict_changed:
        new = report.new_result
        assert new is not None
        click.echo(
            f"citebound: verdict changed: {record.validation_status} {record.failure_reason} -> "
            f"{new.validation_status.value} {new.failure_reason}",
            err=True,
        )
        sys.exit(EXIT_VERDICT_CHANGED)
    if report.display_changed:
        click.echo(
            f"citebound: the anchors shown now ({report.display_anchors}) differ from the "
            f"record's display_anchors ({record.display_anchors})",
            err=True,
        )
    click.echo("citebound: same verdict", err=True)


COMMANDS = [audit_group]
