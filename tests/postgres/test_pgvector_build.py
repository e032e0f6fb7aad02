"""The test PostgreSQL runs the vendored pgvector, built portably (third_party/pgvector)."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest

from citebound.errors import StoreError
from citebound.testing.pgvector_build import build_pgvector

# Functions pgvector compiles for wider instruction sets and calls only after a runtime CPU
# check: target_clones variants (`VectorL2SquaredDistance.fma`) and `target(...)` functions
# named after their instruction set (`HalfvecL2SquaredDistanceF16c`, `...Avx512Popcount`).
DISPATCHED = re.compile(r"\.(fma|avx\w*|popcnt)$|F16c$|Avx512")


def test_the_server_runs_the_portable_build(pg_server: Any, pg_url: str) -> None:
    build = pg_server.pgvector
    assert build is not None and build.library.is_file()
    with psycopg.connect(pg_url) as conn:
        version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert version.fetchone() == (build.version,)
        modules = conn.execute(
            "SELECT DISTINCT probin FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid "
            "JOIN pg_extension e ON e.oid = d.refobjid WHERE e.extname = 'vector' "
            "AND probin IS NOT NULL"
        ).fetchall()
        assert modules == [(str(build.library.with_suffix("")),)]
        # 384-d cosine distance: where the wheel's AVX-512 build dies on other CPUs
        one = conn.execute(
            "SELECT array_fill(1, ARRAY[384])::vector <=> array_fill(3, ARRAY[384])::vector"
        ).fetchone()
        assert one is not None and abs(one[0]) < 1e-6


def test_a_parallel_hnsw_build_loads_the_same_library(pg_url: str) -> None:
    """Parallel index builds load pgvector by its bare name in each worker: that must be the
    portable build too, not the wheel's (whose GUCs would collide with the leader's)."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id int PRIMARY KEY, v vector(384))")
        conn.execute(
            "INSERT INTO t SELECT i, (SELECT array_agg(sin(i * 7 + j)) FROM generate_series"
            "(1, 384) j)::vector FROM generate_series(1, 2000) i"
        )
        conn.execute("SET min_parallel_table_scan_size = 0")
        conn.execute("SET max_parallel_maintenance_workers = 2")
        conn.execute("SET maintenance_work_mem = '64MB'")
        conn.execute("ALTER TABLE t SET (parallel_workers = 2)")
        conn.execute("CREATE INDEX ON t USING hnsw (v vector_cosine_ops)")
        conn.execute("SET enable_seqscan = off")
        rows = conn.execute(
            "SELECT id FROM t ORDER BY v <=> (SELECT v FROM t WHERE id = 5) LIMIT 3"
        ).fetchall()
    assert rows[0] == (5,)


def test_wide_vector_instructions_only_behind_runtime_cpu_checks(pg_server: Any) -> None:
    """No -march=native: AVX/AVX-512 registers appear only in the dispatched functions, so
    the build runs on any x86-64 CPU whatever machine compiled it."""
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip(f"checks x86-64 instructions; this is {platform.machine()}")
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) is not installed")
    text = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", str(pg_server.pgvector.library)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    wide: set[str] = set()
    function = ""
    for line in text.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if header:
            function = header.group(1)
        elif re.search(r"%[yz]mm\d", line):
            wide.add(function)
    assert wide, "expected pgvector's dispatched AVX/F16C/AVX-512 variants"
    assert {f for f in wide if not DISPATCHED.search(f)} == set()


def test_a_missing_source_fails_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="pgvector source not found"):
        build_pgvector(tmp_path / "nowhere", tmp_path / "pg_config")
