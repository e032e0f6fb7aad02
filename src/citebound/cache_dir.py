"""Where citebound keeps per-machine caches that only make start-up faster.

Two caches live here: the optimised ONNX graph of the query embedder (`models/onnx_cache.py`)
and the cl100k rank table as a marshal file (`text/bpe_py.py`). Both are derived from installed
packages, checked when read, and never change a result: deleting the folder only makes the next
cold start slower.

`$CITEBOUND_CACHE_DIR`, else `$XDG_CACHE_HOME/citebound`, else `~/.cache/citebound`;
`CITEBOUND_CACHE_DIR=off` disables both caches (so does a process without a home directory).

Writes are atomic (`write_atomic`, `commit_dir`): the data goes to a temporary name in the
entry's own folder, is flushed to disk, then renamed into place, so a writer killed at any point
(the embedder helper process is killed when it does not end, `cli/_embedder_process.py`) leaves
the entry either whole or absent, never partial. Every start that reads or writes a cache prunes
its folder (`prune`): entries of models, libraries or CPUs no longer used, and temporaries left
by killed writers (the writer's pid is in the temporary's name: one whose writer is gone is
removed at once, not an hour later). Prune removes only names citebound makes (`owned`), never
anything else in the folder: `CITEBOUND_CACHE_DIR=~/.cache` makes the ONNX folder `~/.cache/onnx`,
which other programs (the ONNX hub) use too.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

CACHE_ENV = "CITEBOUND_CACHE_DIR"
# Entries kept per cache folder, the most recently used first: a new entry is written only when
# the model file, onnxruntime, quicktok, the CPU or the session settings change, so older
# entries mostly belong to installs that no longer exist. One configuration is in use at a time
# (every process uses the same embedder settings, threads=1), but two installs may share the
# folder (a virtualenv and a system install, or an upgrade being tried): 3 keeps those without
# piling up one ~90 MB ONNX entry per upgrade.
KEEP_ENTRIES = 3
# A temporary whose writer still runs is kept, unless it is older than this: then its pid was
# reused by another process (a live write takes about a second: the 90 MB ONNX entry, ~0.8 s on
# the 2-core build machine), so an hour is never a write in progress.
STALE_TEMP_SECONDS = 3600.0
TEMP_PREFIX = ".tmp-"
# Temporaries are named TEMP_PREFIX + "<writer pid>-" + tempfile's random suffix; the legacy
# form (before the pid was in the name) is TEMP_PREFIX + the 8-character suffix only.
_TEMP_NAME = re.compile(r"^\.tmp-(?:(\d+)-[a-z0-9_]+|[a-z0-9_]{8})$")


# An entry's key (`entry_key`): the first 24 hex digits of a sha256, enough to tell apart the
# few configurations a machine ever has. `KEY_PATTERN` matches one, for the `owned` tests.
KEY_PATTERN = r"[0-9a-f]{24}"


def entry_key(identity: str) -> str:
    """The key naming the entry of `identity` (what the cached data was derived from)."""
    return hashlib.sha256(identity.encode()).hexdigest()[:24]


def temp_prefix() -> str:
    """The prefix of this process's temporaries: `prune` reads the writer's pid from it."""
    return f"{TEMP_PREFIX}{os.getpid()}-"


def _writer_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, as another user
        return True
    return True


def cache_root() -> Path | None:
    """The cache directory, or None when disabled (`CITEBOUND_CACHE_DIR=off`)."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        off = configured.strip().lower() in ("", "off", "0", "none")
        return None if off else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError):  # no home directory (some containers): no cache
            return None
    return Path(base) / "citebound"


def fsync_path(path: Path) -> None:
    """Flush a file, or a folder's list of entries, to disk."""
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if path.is_dir() else 0)
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(folder: Path) -> None:
    """`folder.mkdir(parents=True, exist_ok=True)`, durable: each folder missing here is
    created and its parent flushed, so a file written into it (`write_atomic`) is not lost
    with a folder entry a power cut took back. A folder made meanwhile by another process is
    flushed as well (its maker may not have flushed it yet)."""
    missing = [p for p in (folder, *folder.parents) if not p.is_dir()]
    for path in reversed(missing):
        path.mkdir(exist_ok=True)
        fsync_path(path.parent)


def write_atomic(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all: a temporary file in the same folder, fsync, rename
    (`os.replace`), fsync of the folder. Raises OSError; the temporary is removed then."""
    write_atomic_with(path, lambda fh: fh.write(data))


def write_atomic_with(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """`write_atomic` for data written by `write(file)` (`np.save` of a large matrix streams
    to the temporary instead of being copied into one bytes object first)."""
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(), dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_path(path.parent)


def commit_dir(tmp: Path, entry: Path) -> bool:
    """Rename the finished temporary folder `tmp` to `entry` after flushing its files: the
    folder-sized `write_atomic`. False when `entry` exists already (another process won the
    race; `tmp` is left to the caller)."""
    for child in tmp.iterdir():
        fsync_path(child)
    fsync_path(tmp)
    try:
        os.rename(tmp, entry)  # atomic; fails when another process made `entry` first
    except OSError:
        return False
    fsync_path(entry.parent)
    return True


def touch(entry: Path) -> None:
    """Mark `entry` as just used (its mtime orders `prune`); ignored on a read-only cache."""
    with contextlib.suppress(OSError):
        os.utime(entry)


def prune(
    folder: Path, keep: Path, owned: Callable[[Path], bool], *, entries: int = KEEP_ENTRIES
) -> list[Path]:
    """Remove from `folder` all but the `entries` most recently used entries (`keep`, just
    written or read, always stays) and the temporaries of writers that are gone; returns what
    was removed. Only entries for which `owned(path)` holds and temporaries named by
    `temp_prefix` are candidates: anything else in the folder is another program's and stays.
    Best effort: an entry another process removes or uses meanwhile is skipped."""
    now = time.time()
    dated: list[tuple[float, str, Path]] = []
    removed: list[Path] = []
    try:
        children = list(folder.iterdir())
    except OSError:
        return []
    for child in children:
        try:
            mtime = child.lstat().st_mtime
        except OSError:
            continue
        temp = _TEMP_NAME.match(child.name)
        if temp is not None:
            pid = temp.group(1)  # None in a legacy name: only its age tells a killed writer's
            gone = pid is not None and not _writer_alive(int(pid))
            if gone or now - mtime > STALE_TEMP_SECONDS:
                removed.append(child)
        elif child != keep and not child.is_symlink() and owned(child):
            dated.append((mtime, child.name, child))
    # Newest first; the name breaks ties so two equal mtimes prune the same way every time.
    dated.sort(key=lambda d: (-d[0], d[1]))
    removed += [path for _, _, path in dated[max(entries - 1, 0) :]]
    for path in removed:
        if path.is_dir() and not path.is_symlink():
            import shutil  # rarely needed: most starts find nothing to remove

            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
    return removed
