"""Run leases taken and renewed by compare-and-swap, on real SQLite and real PostgreSQL
(batch/lease_sql.py): of racing contenders exactly one wins, an expired lease is taken over,
and a stale holder's renewal fails with BATCH_RUN_LOCKED and the reason."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from citebound.audit.location import table_location
from citebound.batch.lease_sql import LeaseLost, LeaseStore, PostgresLeases, SQLiteLeases
from citebound.batch.run_lock import SQLITE_LEASE_NAME, RunLocked, _identity, lease_key, run_lock
from citebound.batch.staging import Staging
from citebound.contracts.enums import ReasonCode
from citebound.errors import ConfigError

CONTENDERS = 8
ROUNDS = 6


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """(kind, where): a lease file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return "sqlite", str(tmp_path / "leases.sqlite")
    return "postgres", str(request.getfixturevalue("pg_url"))


def _opener(backend: tuple[str, str]) -> Callable[[], LeaseStore]:
    kind, where = backend
    if kind == "sqlite":
        return lambda: SQLiteLeases(Path(where))
    return lambda: PostgresLeases(where)


def _race(stores: list[LeaseStore], name: str) -> tuple[list[Any], list[dict[str, Any]]]:
    """Every store tries to acquire `name` at once (a barrier releases them together): what
    each acquire returned, and each contender's identity."""
    gate = threading.Barrier(len(stores))
    who = [_identity() for _ in stores]
    results: list[Any] = ["not run"] * len(stores)
    errors: list[BaseException] = []

    def contend(i: int) -> None:
        try:
            gate.wait()
            results[i] = stores[i].acquire(name, who[i]["token"], who[i], 60.0)
        except BaseException as err:  # surfaced below, not lost in the thread
            errors.append(err)

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return results, who


def test_of_racing_contenders_exactly_one_wins(backend: tuple[str, str]) -> None:
    """Each contender on its own connection, released together, round after round: one
    acquire writes, every other one is refused and told who holds the lease."""
    open_store = _opener(backend)
    stores = [open_store() for _ in range(CONTENDERS)]
    try:
        for round_ in range(ROUNDS):
            name = f"batch-run:race-{round_}"
            results, who = _race(stores, name)
            winners = [i for i, r in enumerate(results) if r is None]
            assert len(winners) == 1, results
            (won,) = winners
            assert all(r == who[won] for i, r in enumerate(results) if i != won)
            for i, store in enumerate(stores):  # only the winner may renew
                if i == won:
                    store.renew(name, who[i]["token"], 60.0)
                else:
                    with pytest.raises(LeaseLost, match="took it over"):
                        store.renew(name, who[i]["token"], 60.0)
    finally:
        for s in stores:
            s.close()


def test_an_expired_lease_is_taken_over_and_its_stale_holder_cannot_renew(
    backend: tuple[str, str],
) -> None:
    open_store = _opener(backend)
    a, b, c = open_store(), open_store(), open_store()
    me, other, third = _identity(), _identity(), _identity()
    name = "batch-run:expiring"
    try:
        assert a.acquire(name, me["token"], me, 0.05) is None
        time.sleep(0.3)  # a driver that stalled past its lease
        assert b.acquire(name, other["token"], other, 60.0) is None  # taken over
        with pytest.raises(LeaseLost) as lost:
            a.renew(name, me["token"], 60.0)
        assert lost.value.reason_code is ReasonCode.BATCH_RUN_LOCKED
        message = str(lost.value)
        assert message.startswith("BATCH_RUN_LOCKED: lease 'batch-run:expiring'")
        assert f"pid {other['pid']} on {other['host']} took it over" in message
        assert "stopped before committing" in message
        a.release(name, me["token"])  # the stale holder's release leaves the new lease alone
        assert c.acquire(name, third["token"], third, 60.0) == other  # live: refused
        b.renew(name, other["token"], 60.0)
        b.release(name, other["token"])
        assert c.acquire(name, third["token"], third, 60.0) is None  # released: free
    finally:
        for s in (a, b, c):
            s.close()


def test_a_lease_that_expired_unrenewed_cannot_be_renewed(backend: tuple[str, str]) -> None:
    """Nobody took it over, but another driver may have been about to: an expired lease is
    lost, so a late renewal fails rather than resurrecting it."""
    store = _opener(backend)()
    me = _identity()
    try:
        assert store.acquire("batch-run:late", me["token"], me, 0.05) is None
        time.sleep(0.3)
        with pytest.raises(LeaseLost, match="it expired before this renewal"):
            store.renew("batch-run:late", me["token"], 60.0)
        with pytest.raises(LeaseLost, match="released or never taken"):
            store.renew("batch-run:never", me["token"], 60.0)
    finally:
        store.close()


def _steal(backend: tuple[str, str], staging: Staging, thief: dict[str, Any]) -> None:
    """Rewrite the run's lease as another driver's (as one whose takeover this driver missed
    while it stalled), bypassing the lease API."""
    import json

    kind, where = backend
    name = lease_key(staging)
    if kind == "sqlite":
        with sqlite3.connect(where) as conn:
            conn.execute(
                "UPDATE leases SET holder = ?, identity = ?, expires_at = ? WHERE name = ?",
                (thief["token"], json.dumps(thief), time.time() + 60, name),
            )
        return
    import psycopg

    with psycopg.connect(where, autocommit=True) as conn:
        conn.execute(
            "UPDATE citebound_leases SET holder = %s, identity = %s::jsonb, "
            "expires_at = clock_timestamp() + interval '60 seconds' WHERE name = %s",
            (thief["token"], json.dumps(thief), name),
        )


def _until(condition: Callable[[], bool], limit_s: float = 60.0) -> None:
    """Poll `condition` until it holds; fail after `limit_s` (a hung heartbeat)."""
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, "the heartbeat never got there"
        time.sleep(0.02)


def test_run_lock_holds_the_table_lease_and_stops_once_it_is_lost(
    backend: tuple[str, str], tmp_path: Path
) -> None:
    kind, where = backend
    staging = Staging(table_location(tmp_path / "out"), "leased")
    options: dict[str, Any] = (
        {"kind": "sqlite"} if kind == "sqlite" else {"kind": "database", "database": where}
    )
    if kind == "sqlite":  # the lease file run_lock uses is the staging folder's
        backend = (kind, str(staging.location.local_path / SQLITE_LEASE_NAME))
    with run_lock(staging, lease_seconds=1.0, **options) as lock:
        with (
            pytest.raises(RunLocked, match=rf"BATCH_RUN_LOCKED: .*pid {os.getpid()} on "),
            run_lock(staging, **options),
        ):
            pass  # a second driver fails closed at once
        first = lock.valid_until
        assert first is not None
        # Past the first expiry, held by a renewal: waited for, not slept for (a renewal
        # delayed on a loaded host must not fail the test, only make it wait).
        _until(lambda: first < time.monotonic() < (lock.valid_until or 0.0))
        lock.check()
        _steal(backend, staging, {**_identity(), "pid": 1, "host": "elsewhere"})
        _until(lambda: lock.lost)  # the next renewal finds the lease another driver's
        with pytest.raises(RunLocked, match="pid 1 on elsewhere took it over"):
            lock.check()
    # Not ours to release: still the other driver's.
    with pytest.raises(RunLocked, match="pid 1 on elsewhere"), run_lock(staging, **options):
        pass


def test_run_lock_releases_the_table_lease(backend: tuple[str, str], tmp_path: Path) -> None:
    kind, where = backend
    staging = Staging(table_location(tmp_path / "out"), "released")
    options: dict[str, Any] = (
        {"kind": "sqlite"} if kind == "sqlite" else {"kind": "database", "database": where}
    )
    with run_lock(staging, **options):
        pass
    with run_lock(staging, **options):  # free again at once, no expiry to wait for
        pass


def test_a_database_lease_needs_a_database(tmp_path: Path) -> None:
    staging = Staging(table_location(tmp_path), "r")
    with pytest.raises(ConfigError, match="PostgreSQL URL"), run_lock(staging, kind="database"):
        pass


def test_which_lock_a_run_takes(tmp_path: Path) -> None:
    """Local output: the OS lock (a dead driver's is free at once). Output in an object store:
    the database's compare-and-swap lease when the run is on a PostgreSQL store, else the
    lease object (no compare-and-swap there, docs/batch.md)."""
    from citebound.batch.run_lock import _pick

    local = Staging(table_location(tmp_path), "r")
    remote = Staging(table_location("s3://bucket/out"), "r")
    url = "postgresql://u@db/x"
    assert (_pick(local, None), _pick(local, url)) == ("os", "os")
    assert (_pick(remote, url), _pick(remote, None)) == ("database", "object")


def test_two_spellings_of_one_output_share_one_database_lease(pg_url: str) -> None:
    """`s3a://b/out`, `s3://b/out/` and `s3://b//out` name the same objects (delta-rs, Spark):
    two drivers of one run on those spellings must contend for ONE lease row, or both win
    and both commit the run."""
    spellings = ("s3://bucket/out", "s3a://bucket/out", "s3://bucket/out/", "s3://bucket//out")
    options: dict[str, Any] = {"kind": "database", "database": pg_url}
    first = Staging(table_location(spellings[0]), "spelled")
    with run_lock(first, **options):
        for other in spellings[1:]:
            staging = Staging(table_location(other), "spelled")
            with pytest.raises(RunLocked, match="BATCH_RUN_LOCKED"), run_lock(staging, **options):
                pass  # pragma: no cover - a second holder of the same run
    # A different run, bucket or account is a different lease.
    for free in ("s3://bucket/out2", "s3://other/out", "gs://bucket/out"):
        with run_lock(Staging(table_location(free), "spelled"), **options):
            pass


def test_a_lease_whose_store_became_unreachable_fails_closed_naming_it(
    backend: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database (or lease file) goes away mid-run: renewals fail, the lease runs out, and
    the next commit is refused with a message naming where the lease is (not an object-store
    `driver.lease` this run never had)."""
    kind, where = backend
    staging = Staging(table_location(tmp_path / "out"), "unreachable")
    options: dict[str, Any] = (
        {"kind": "sqlite"} if kind == "sqlite" else {"kind": "database", "database": where}
    )
    with run_lock(staging, lease_seconds=0.5, **options) as lock:
        lock.check()

        def down(*args: Any, **kwargs: Any) -> Any:
            raise sqlite3.OperationalError("disk I/O error")

        if kind == "sqlite":
            monkeypatch.setattr(SQLiteLeases, "_write", down)
        else:
            import psycopg

            def refused(*args: Any, **kwargs: Any) -> Any:
                raise psycopg.OperationalError("connection refused")

            monkeypatch.setattr(psycopg, "connect", refused)
        _until(lambda: time.monotonic() > (lock.valid_until or 0.0))  # ran out unrenewed
        with pytest.raises(RunLocked, match="expired without renewal") as refused_:
            lock.check()
        message = str(refused_.value)
        assert "driver.lease)" not in message
        expected = SQLITE_LEASE_NAME if kind == "sqlite" else "citebound_leases"
        assert expected in message
        monkeypatch.undo()


def test_a_lease_file_held_busy_fails_with_a_reason_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process keeps the SQLite lease file write-locked past the busy timeout: the
    driver fails closed with a CiteboundError naming the file (one line from the CLI), not a
    raw sqlite3 error (a traceback)."""
    from citebound.batch import lease_sql
    from citebound.errors import CiteboundError

    monkeypatch.setattr(lease_sql, "SQLITE_BUSY_TIMEOUT_S", 0.2, raising=False)
    path = tmp_path / "leases.sqlite"
    store = SQLiteLeases(path)
    me = _identity()
    blocker = sqlite3.connect(path, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")  # a writer that does not let go
        with pytest.raises(CiteboundError, match=r"run lease file .*leases\.sqlite.*locked"):
            store.acquire("batch-run:busy", me["token"], me, 60.0)
        blocker.execute("ROLLBACK")
        assert store.acquire("batch-run:busy", me["token"], me, 60.0) is None  # usable after
    finally:
        blocker.close()
        store.close()


def test_without_flock_local_output_takes_the_sqlite_lease(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The non-POSIX path (no `fcntl`, e.g. Windows), exercised here by hiding the module:
    local output takes the SQLite lease in the staging folder (the database's lease when the
    store is PostgreSQL), a second driver is refused naming that file, and the lease is free
    again after the block."""
    from citebound.batch.run_lock import _pick

    monkeypatch.setitem(sys.modules, "fcntl", None)  # `import fcntl` raises ImportError
    staging = Staging(table_location(tmp_path / "out"), "windows")
    assert (_pick(staging, None), _pick(staging, "postgresql://u@db/x")) == ("sqlite", "database")
    with run_lock(staging):
        assert (staging.location.local_path / SQLITE_LEASE_NAME).is_file()
        with pytest.raises(RunLocked, match=rf"{SQLITE_LEASE_NAME}"), run_lock(staging):
            pass
    with run_lock(staging):  # released at the end of the block
        pass


def test_a_refused_driver_is_told_when_a_dead_holders_lease_frees(
    backend: tuple[str, str], tmp_path: Path
) -> None:
    """A lease, unlike the OS lock, outlives a killed driver until it expires: the refusal
    says so and how long, instead of "a driver that died releases the lock" (a rerun right
    after a crash would otherwise look like a live second driver)."""
    kind, where = backend
    staging = Staging(table_location(tmp_path / "out"), "dead")
    options: dict[str, Any] = (
        {"kind": "sqlite"} if kind == "sqlite" else {"kind": "database", "database": where}
    )
    with (
        run_lock(staging, lease_seconds=90.0, **options),
        pytest.raises(RunLocked) as refused,
        run_lock(staging, **options),
    ):
        pass
    message = str(refused.value)
    assert "releases the lock" not in message
    assert "expires" in message and "90 s" in message


@pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
def test_racing_contenders_on_a_stricter_default_isolation(pg_url: str, isolation: str) -> None:
    """A database whose default isolation is stricter than READ COMMITTED (set by its owner)
    must not turn a lost race into a serialization error: the loser is refused, naming the
    winner, as on a default database."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        dbname = conn.info.dbname
        conn.execute(
            f"ALTER DATABASE \"{dbname}\" SET default_transaction_isolation = '{isolation}'"
        )
    stores: list[LeaseStore] = [PostgresLeases(pg_url) for _ in range(CONTENDERS)]
    for round_ in range(ROUNDS):
        name = f"batch-run:strict-{round_}"
        expired = _identity()
        assert stores[0].acquire(name, expired["token"], expired, 0.01) is None
        time.sleep(0.05)  # an expired lease: every contender tries to take it over
        results, who = _race(stores, name)
        winners = [i for i, r in enumerate(results) if r is None]
        assert len(winners) == 1, results
        (won,) = winners
        assert all(r == who[won] for i, r in enumerate(results) if i != won)  # refused


def test_two_spellings_of_one_local_output_share_one_database_lease(
    pg_url: str, tmp_path: Path
) -> None:
    """Local output without `flock` on a PostgreSQL store: a symlink or a `..` spelling of
    the same folder contends for the same lease row."""
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "link").symlink_to(out)
    options: dict[str, Any] = {"kind": "database", "database": pg_url}
    with run_lock(Staging(table_location(out), "local"), **options):
        for other in (tmp_path / "link", tmp_path / "link" / ".." / "out"):
            staging = Staging(table_location(other), "local")
            with pytest.raises(RunLocked, match="BATCH_RUN_LOCKED"), run_lock(staging, **options):
                pass  # pragma: no cover - a second holder of the same run
