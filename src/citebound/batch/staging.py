"""The staging area of a `batch answer` run: audit records made durable while the job runs.

Every request that reached a model is audited exactly once, even when the job dies. So the
executors do not hand their records to the driver alone: each task writes its finished rows
(request id, PublicResponse JSON, AuditRecord JSON) as small Parquet files under
`OUT/_staging/<run_id>/` while it runs, and the driver commits the staged rows to the Delta
tables at the end. A re-run of the same run id commits what an earlier attempt staged first and
sends only the rest to the executors, so no model is asked twice for an audited row and no
record is written twice.

Layout (any location delta-rs can write: a directory, `s3://`, `abfss://`, `gs://`; files are
written through delta-rs' object store, with the table's storage options):

    OUT/_staging/<run_id>/run.json                  what the run is (questions, config, policy)
    OUT/_staging/<run_id>/parts/<slice>-<hash>.parquet   staged rows
    OUT/_staging/<run_id>/calls/<hash>.json         a model call about to be sent (intents)
    OUT/_staging/<run_id>/driver.lock | driver.lease | driver.lease.sqlite
                                                    the driver's lock (batch/run_lock.py;
                                                    a PostgreSQL store's lease is a row)

`<slice>` names the task's slice of the question set (a hash of its first request id),
`<hash>` the request ids in the file: a retried task finds its slice's files and skips their
rows, and a file re-written with the same rows replaces itself. Files are written whole
(an object-store PUT; locally `cache_dir.write_atomic`: a temporary file flushed and renamed,
its folder flushed); a file that cannot be read (a crash inside the write) is left out and
counted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from typing import Any

from citebound.audit.location import TableLocation
from citebound.cache_dir import make_dirs, write_atomic
from citebound.errors import ConfigError

STAGING_DIR = "_staging"
# One path segment: the run's folder under OUT/_staging (default ids are hex digests).
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
PARTS = "parts"
MANIFEST = "run.json"
STAGED_COLUMNS = ("request_id", "response_json", "audit_json")
CALLS = "calls"


def _hash(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8") + b"\n")
    return h.hexdigest()


def slice_key(run_id: str, first_id: str) -> str:
    """The name prefix of one task's files, from the first request id of its partition: a
    retried task gets the same key, two tasks of one job never share it."""
    return "s" + _hash(run_id, first_id)[:16]


def call_file(request_id: str) -> str:
    """The file name of `request_id`'s intent in the run's `calls/` folder."""
    return f"{_hash(request_id)[:32]}.json"


def _call_name(request_id: str) -> str:
    return f"{CALLS}/{call_file(request_id)}"


def part_name(key: str, request_ids: list[str]) -> str:
    return f"{key}-{_hash(*request_ids)[:16]}.parquet"


def questions_digest(questions: list[tuple[str, str]]) -> str:
    """sha256 over the sorted (request_id, text) rows: what a run answers."""
    h = hashlib.sha256()
    for rid, text in sorted(questions):
        h.update(json.dumps([rid, text]).encode("utf-8") + b"\n")
    return h.hexdigest()


class Staging:
    """The staging area of one run under `out` (picklable: executors get a copy)."""

    def __init__(self, out: TableLocation, run_id: str) -> None:
        if not RUN_ID.fullmatch(run_id) or ".." in run_id:
            # `--run-id a/../b` would point this run's staging, lock and journal at another
            # run's folder (or outside OUT): a run id is one path segment.
            raise ConfigError(
                f"run id {run_id!r} is not valid: use 1-128 letters, digits, '.', '_' or '-', "
                "starting with a letter or digit"
            )
        self.location = out.child(f"{STAGING_DIR}/{run_id}")
        self.run_id = run_id
        self._store: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_store": None}  # the store handle is rebuilt, not pickled

    def _handler(self) -> Any:
        """delta-rs' object store for the staging folder, with the table's storage options."""
        if self._store is None:
            from deltalake.fs import DeltaStorageHandler

            uri = self.location.uri
            if self.location.is_local:
                make_dirs(self.location.local_path)
                uri = self.location.local_path.as_uri()
            self._store = DeltaStorageHandler(uri, self.location.storage_options or None)
        return self._store

    def _put(self, name: str, data: bytes) -> None:
        if self.location.is_local:
            # delta-rs' local store renames a temporary into place but flushes nothing: a
            # power cut could take back a journaled intent (its call then sent unaudited) or
            # a staged row whose intent was cleared. Here the file, and each folder made for
            # it, reach the disk before the write returns.
            path = self.location.local_path / name
            make_dirs(path.parent)
            write_atomic(path, data)
            return
        # An object-store PUT is durable when it returns. The raw delta-rs stream: its pyarrow
        # wrapper (PythonFile) hands it pyarrow Buffers, which deltalake 1.x refuses
        # ("'Buffer' object is not an instance of 'bytes'").
        stream = self._handler()._handler.open_output_stream(name, None)
        try:
            stream.write(data)
        finally:
            stream.close()

    def _get(self, name: str) -> bytes:
        data: bytes = self._handler()._handler.open_input_file(name).read()
        return data

    # -- small JSON objects: the run manifest, the driver lease, call intents ---------------
    def read_object(self, name: str) -> dict[str, Any] | None:
        """The JSON object stored as `name`, or None when there is none."""
        import pyarrow.fs as pafs

        (info,) = self._handler().get_file_info([name])
        if info.type == pafs.FileType.NotFound:
            return None
        data = json.loads(self._get(name).decode("utf-8"))
        if not isinstance(data, dict):
            raise ConfigError(f"{self.location.uri}/{name} is not a JSON object")
        return data

    def write_object(self, name: str, data: dict[str, Any]) -> None:
        self._put(name, json.dumps(data, indent=2, sort_keys=True).encode("utf-8"))

    def delete_object(self, name: str) -> None:
        self._handler().delete_file(name)

    def read_manifest(self) -> dict[str, Any] | None:
        return self.read_object(MANIFEST)

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        self.write_object(MANIFEST, manifest)

    # -- model calls journaled before they are sent (batch/intents.py) -----------------------
    def write_call(self, request_id: str, intent: dict[str, Any]) -> None:
        """Record that a model call for `request_id` is about to be sent (durable on return:
        the object store has the whole file, or the local file and its folder are flushed)."""
        self.write_object(_call_name(request_id), {**intent, "request_id": request_id})

    def call_files(self) -> set[str]:
        """The file names (`call_file`) of the journaled calls not yet cleared: one listing,
        no file read (a file names its request, so this is what most callers need)."""
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(CALLS, allow_not_found=True)
        return {
            info.path.rsplit("/", 1)[-1]
            for info in self._handler().get_file_info_selector(selector)
            if info.type == pafs.FileType.File and info.path.endswith(".json")
        }

    def read_call(self, request_id: str) -> dict[str, Any] | None:
        """The intent journaled for `request_id`, or None when there is none or it cannot be
        read (a write cut short by a crash, whose call was never sent)."""
        try:
            data = json.loads(self._get(_call_name(request_id)).decode("utf-8"))
        except Exception:
            return None
        if isinstance(data, dict) and data.get("request_id") == request_id:
            return data
        return None

    def clear_calls(self, request_ids: list[str]) -> None:
        """Remove the intents of calls whose rows are staged or committed (absent: ignored)."""
        handler = self._handler()
        for rid in request_ids:
            with contextlib.suppress(FileNotFoundError, OSError):
                handler.delete_file(_call_name(rid))

    # -- staged rows ---------------------------------------------------------------------------
    def part_files(self, key: str = "") -> list[str]:
        """Staged files (relative paths), sorted; only those of slice `key` when given."""
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(PARTS, allow_not_found=True)
        names = [
            i.path
            for i in self._handler().get_file_info_selector(selector)
            if i.type == pafs.FileType.File
            and i.path.endswith(".parquet")
            and i.path.rsplit("/", 1)[-1].startswith(key)
        ]
        return sorted(names)

    def write_part(self, key: str, rows: list[tuple[str, str, str]]) -> str:
        """Write staged rows (request_id, response_json, audit_json) as one file; its path."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        name = f"{PARTS}/{part_name(key, [r[0] for r in rows])}"
        table = pa.table({c: [r[i] for r in rows] for i, c in enumerate(STAGED_COLUMNS)})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        self._put(name, sink.getvalue().to_pybytes())
        return name

    def read_parts(self, names: list[str]) -> tuple[list[tuple[str, str, str]], int]:
        """(rows of the readable files in file order, number of unreadable files)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows: list[tuple[str, str, str]] = []
        bad = 0
        for name in names:
            try:
                data = pa.BufferReader(self._get(name))
                table = pq.read_table(data, columns=list(STAGED_COLUMNS))
            except Exception:  # a file cut short by a crash: its rows were never acknowledged
                bad += 1
                continue
            cols = [table.column(c).to_pylist() for c in STAGED_COLUMNS]
            rows.extend(zip(*cols, strict=True))
        return rows, bad

    def delete_parts(self, names: list[str]) -> None:
        handler = self._handler()
        for name in names:
            handler.delete_file(name)
