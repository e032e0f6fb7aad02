"""One driver per batch run id: an exclusive, crash-safe lock on the run's staging area.

Two drivers on one run id (a job resubmitted while the first still runs, two operators) would
both commit the same staged files and answer the same questions: the model would be asked
twice and only the audit table's duplicate check would stand between them and a second
record. So `answer_batch` and `eval_batch` hold the run's lock from before they read or write
anything of the run until they return, and a second driver fails closed at once with
`RunLocked` (reason code BATCH_RUN_LOCKED, naming the holder's pid, host and start time).

* **Local output** (a directory): an OS lock (`flock`) on `OUT/_staging/<run>/driver.lock`.
  The kernel releases it when the holder exits or is killed, so a dead driver's lock is free
  the moment it dies and the next driver takes it over; nothing needs to expire. The file
  keeps the holder's identity for the message.
* **A PostgreSQL store with output in an object store**: a lease row in the database,
  taken, renewed and released by compare-and-swap statements on the database's clock
  (`batch/lease_sql.py`): exactly one of two racing drivers wins, an expired lease is taken
  over, and a stale holder's renewal fails (`LeaseLost`, BATCH_RUN_LOCKED). The same heartbeat
  and `check` as below. Local output without `flock` (not POSIX) uses the same table in a
  SQLite file in the staging folder (`driver.lease.sqlite`).
* **Object stores without a database** (`s3://`, `abfss://`, `gs://`): a lease object,
  `driver.lease`, with the holder's identity and an expiry `LEASE_SECONDS` ahead, renewed by a
  heartbeat thread every third of that. A lease whose expiry has passed belonged to a dead
  driver (or one stalled for longer than the lease) and is taken over. Object stores offer no
  compare-and-swap through delta-rs' store, so the writer reads its lease back after writing it;
  two drivers starting within the same moment could still both pass, which is why the local
  lock is the OS lock and a run on a PostgreSQL store takes the database's lease instead. The
  heartbeat also reads the lease back: a driver whose lease was taken over stops before its
  next commit (`RunLock.check`, also run before each group of a large commit), and so does
  one whose renewals failed until its lease expired (another driver may have taken it over
  unseen).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from citebound.contracts.enums import ReasonCode
from citebound.errors import ConfigError

if TYPE_CHECKING:
    from citebound.batch.lease_sql import LeaseStore
    from citebound.batch.staging import Staging

# How a run is locked: the OS lock, the lease object, or a lease row (SQLite file, database).
LockKind = Literal["os", "object", "sqlite", "database"]
SQLITE_LEASE_NAME = "driver.lease.sqlite"

LOCK_NAME = "driver.lock"
LEASE_NAME = "driver.lease"
# An object-store lease lives this long without renewal: long enough that a driver busy in a
# large Delta commit (the heartbeat is a thread, so only a stalled process misses it) keeps
# it, short enough that a resubmitted job after a crash waits at most this long.
LEASE_SECONDS = 120.0


class RunLocked(ConfigError):
    """Another live driver holds this run id."""

    reason_code = ReasonCode.BATCH_RUN_LOCKED


def _identity() -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "token": uuid.uuid4().hex,
    }


def _locked(
    run_id: str, holder: dict[str, Any] | None, where: str, *, lease: bool = False
) -> RunLocked:
    who = (
        f"pid {holder.get('pid')} on {holder.get('host')} since {holder.get('started_utc')}"
        if holder
        else "another process"
    )
    if lease:
        # A lease outlives a killed driver until it expires: without saying so, a rerun right
        # after a crash reads as a live second driver.
        seconds = (holder or {}).get("lease_seconds")
        span = f" (at most {float(seconds):g} s after its last renewal)" if seconds else ""
        freed = (
            f"A driver that died keeps its lease until it expires{span}; then the next run of "
            "the same run id takes it over and resumes its work"
        )
    else:
        freed = "A driver that died releases the lock, and the next run of the same run id "
        freed += "resumes its work"
    return RunLocked(
        f"{ReasonCode.BATCH_RUN_LOCKED.value}: run {run_id!r} is being written by another "
        f"driver ({who}; lock {where}); wait for it to finish, or stop it. {freed}"
    )


class RunLock:
    """The held lock of one run (see the module docstring); `check` before a commit."""

    def __init__(self, staging: Staging, where: str) -> None:
        self.staging = staging
        # Where the lock or lease is (a file, the lease object, a database table): messages
        # name it, so an operator looks in the right place.
        self.where = where
        self.lost = False
        # Why, when a renewal said so (lease_sql.LeaseLost); None: the generic message.
        self.lost_reason: str | None = None
        # A lease's end (time.monotonic), pushed on by each renewal that reached the store;
        # None for the OS lock, which cannot expire.
        self.valid_until: float | None = None

    def check(self) -> None:
        """Raise RunLocked when the lock was taken over since it was acquired, or when a
        lease went unrenewed (store errors) until its expiry: another driver may hold it now
        without this one having seen its lease."""
        if self.lost:
            if self.lost_reason is not None:
                raise RunLocked(self.lost_reason)
            lease = self.valid_until is not None  # a lease outlives its dead holder
            raise _locked(self.staging.run_id, None, self.where, lease=lease)
        if self.valid_until is not None and time.monotonic() >= self.valid_until:
            raise RunLocked(
                f"{ReasonCode.BATCH_RUN_LOCKED.value}: run {self.staging.run_id!r}: this "
                f"driver's lease ({self.where}) expired without renewal (the store did not "
                "take it), so another driver may hold the run now; "
                "stopped before committing. Run the same run id again to resume"
            )


@contextlib.contextmanager
def run_lock(
    staging: Staging,
    *,
    kind: LockKind | None = None,
    lease_seconds: float = LEASE_SECONDS,
    database: str | None = None,
) -> Iterator[RunLock]:
    """Hold the run's lock for the block; RunLocked at once when another driver holds it.
    `kind` None picks (module docstring): the OS lock for local output where `fcntl` exists,
    else the database's lease when `database` (a PostgreSQL URL) is given, else a SQLite lease
    for local output, else the lease object."""
    kind = kind or _pick(staging, database)
    if kind == "os":
        with _file_lock(staging) as held:
            yield held
    elif kind == "object":
        with _lease(staging, lease_seconds) as held:
            yield held
    else:
        with _table_lease(staging, _lease_store(staging, kind, database), lease_seconds) as held:
            yield held


def _pick(staging: Staging, database: str | None) -> LockKind:
    if _flock_possible(staging):
        return "os"
    if database:
        return "database"
    return "sqlite" if staging.location.is_local else "object"


def _lease_store(staging: Staging, kind: LockKind, database: str | None) -> LeaseStore:
    # Lazy: batch.lease_sql imports this module (RunLocked).
    from citebound.batch.lease_sql import PostgresLeases, SQLiteLeases

    if kind == "sqlite":
        return SQLiteLeases(staging.location.local_path / SQLITE_LEASE_NAME)
    if not database:
        raise ConfigError("a database run lease needs the store's PostgreSQL URL")
    return PostgresLeases(database)


def _flock_possible(staging: Staging) -> bool:
    try:
        import fcntl  # noqa: F401
    except ImportError:  # not POSIX
        return False
    return staging.location.is_local


@contextlib.contextmanager
def _file_lock(staging: Staging) -> Iterator[RunLock]:
    import fcntl

    folder = staging.location.local_path
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _locked(staging.run_id, _read_holder(fd), str(path)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(_identity()).encode("utf-8"), 0)
        yield RunLock(staging, str(path))
        os.ftruncate(fd, 0)  # released: no stale identity for the next reader
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def _read_holder(fd: int) -> dict[str, Any] | None:
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode("utf-8") or "null")
    except (OSError, ValueError):
        return None  # the holder is between taking the lock and writing its name
    return data if isinstance(data, dict) else None


@contextlib.contextmanager
def _lease(staging: Staging, seconds: float) -> Iterator[RunLock]:
    me = {**_identity(), "lease_seconds": seconds}
    held = staging.read_object(LEASE_NAME)
    # A lease whose expiry passed is a dead (or stalled) driver's: taken over.
    if held is not None and float(held.get("expires", 0.0)) > time.time():
        raise _locked(staging.run_id, held, f"{staging.location.uri}/{LEASE_NAME}", lease=True)
    lock = RunLock(staging, f"{staging.location.uri}/{LEASE_NAME}")
    # Counted from before the write: the lease cannot end later than this for any reader.
    sent = time.monotonic()
    staging.write_object(LEASE_NAME, {**me, "expires": time.time() + seconds})
    lock.valid_until = sent + seconds
    back = staging.read_object(LEASE_NAME)
    if back is None or back.get("token") != me["token"]:
        raise _locked(staging.run_id, back, f"{staging.location.uri}/{LEASE_NAME}", lease=True)

    def renew() -> str | None:
        now = staging.read_object(LEASE_NAME)
        if now is None or now.get("token") != me["token"]:
            return ""  # taken over: `check` says so in the lease's words
        staging.write_object(LEASE_NAME, {**me, "expires": time.time() + seconds})
        return None

    def release() -> None:
        now = staging.read_object(LEASE_NAME)
        if now is not None and now.get("token") == me["token"]:
            staging.delete_object(LEASE_NAME)  # only ours: a successor's lease stays

    with _renewed(lock, seconds, renew, release):
        yield lock


def lease_key(staging: Staging) -> str:
    """The lease row's name: the staging folder as storage sees it, not as it was spelled.
    `s3a://b/out`, `s3://b/out/` and `s3://b//out` are the same objects; keyed by the typed
    URI, two drivers of one run on two spellings each took their own row and both ran.
    (`az://container/...` names no account, so it stays apart from `abfss://` spellings.)"""
    where = staging.location
    if where.is_local:
        # normcase: Windows (where a local run takes a lease, no flock) ignores case.
        return f"batch-run:local:{os.path.normcase(os.path.realpath(where.local_path))}"
    return f"batch-run:{where.provider}://{where.account}@{where.bucket}/{where.prefix}"


@contextlib.contextmanager
def _table_lease(staging: Staging, store: LeaseStore, seconds: float) -> Iterator[RunLock]:
    """The lease as a row taken and renewed by compare-and-swap (batch/lease_sql.py)."""
    from citebound.batch.lease_sql import LeaseLost

    me = {**_identity(), "lease_seconds": seconds}
    name = lease_key(staging)
    try:
        sent = time.monotonic()  # before the statement: the lease cannot end later than this
        holder = store.acquire(name, me["token"], me, seconds)
        if holder is not None:
            raise _locked(staging.run_id, holder or None, store.where, lease=True)
    except BaseException:
        store.close()
        raise
    lock = RunLock(staging, store.where)
    lock.valid_until = sent + seconds

    def renew() -> str | None:
        try:
            store.renew(name, me["token"], seconds)
        except LeaseLost as err:  # expired or taken over: this driver must stop
            return str(err)
        return None

    try:
        # Released only if still ours (the statement checks).
        with _renewed(lock, seconds, renew, lambda: store.release(name, me["token"])):
            yield lock
    finally:
        store.close()


@contextlib.contextmanager
def _renewed(
    lock: RunLock,
    seconds: float,
    renew: Callable[[], str | None],
    release: Callable[[], None],
) -> Iterator[RunLock]:
    """Hold a taken lease while a heartbeat renews it every third of `seconds`, then release
    it. `renew` returns None when renewed, else why the lease is lost ("": taken over, said
    by `check`); any error it raises is transient: the next beat tries again, and `check`
    refuses to commit once the lease ran out unrenewed."""
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(seconds / 3):
            sent = time.monotonic()  # before the store call: the lease cannot end later
            try:
                lost = renew()
            except Exception:
                continue
            if lost is not None:
                lock.lost_reason = lost or None
                lock.lost = True
                return
            lock.valid_until = sent + seconds

    beat = threading.Thread(target=heartbeat, name="citebound-run-lease", daemon=True)
    beat.start()
    try:
        yield lock
    finally:
        stop.set()
        beat.join()
        with contextlib.suppress(Exception):
            release()
