"""Where citebound keeps per-machine caches that only make start-up faster.

Two caches live here: the optimised ONNX graph of the query embedder (`index/onnx_cache.py`)
and the cl100k rank table as a marshal file (`text/bpe_py.py`). Both are derived from installed
packages, checked when read, and never change a result: deleting the folder only makes the next
cold start slower.

`$CITEBOUND_CACHE_DIR`, else `$XDG_CACHE_HOME/citebound`, else `~/.cache/citebound`;
`CITEBOUND_CACHE_DIR=off` disables both caches (so does a process without a home directory).

Writes are atomic (`write_atomic`, `commit_dir`): the data goes to a temporary name in the
entry's own folder, is flushed to disk, then renamed into place, so a writer killed at any point
(the embedder helper process is killed when it does not end, `cli/_embedder_process.py`) leaves
the entry either whole or absent, never partial. A writer then prunes its cache folder (`prune`):
entries of models, libraries or CPUs no longer used and temporaries left by killed writers.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

CACHE_ENV = "CITEBOUND_CACHE_DIR"
# Entries kept per cache folder, the most recently used first: a new entry is written only when
# the model file, onnxruntime, quicktok, the CPU or the session settings change, so older
# entries mostly belong to installs that no longer exist. A machine uses a few configurations
# at once (the CLI's and a server's embedder thread counts each have an ONNX entry of ~90 MB),
# so 3 keeps those without piling up one entry per upgrade.
KEEP_ENTRIES = 3
# A temporary (`.tmp-*`) older than this was left by a writer killed mid-write: a live write
# takes about a second (the 90 MB ONNX entry, ~0.8 s on the 2-core build machine), so an hour
# is never a write in progress in another process.
STALE_TEMP_SECONDS = 3600.0
TEMP_PREFIX = ".tmp-"


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


def write_atomic(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all: a temporary file in the same folder, fsync, rename
    (`os.replace`), fsync of the folder. Raises OSError; the temporary is removed then."""
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
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


def prune(folder: Path, keep: Path, *, entries: int = KEEP_ENTRIES) -> list[Path]:
    """Remove from `folder` all but the `entries` most recently used entries (`keep`, just
    written, always stays) and temporaries older than STALE_TEMP_SECONDS; returns what was
    removed. Best effort: an entry another process removes or uses meanwhile is skipped."""
    import shutil  # only a writer prunes; a cold start that reads its cache never does

    now = time.time()
    dated: list[tuple[float, str, Path]] = []
    removed: list[Path] = []
    for child in folder.iterdir():
        try:
            mtime = child.lstat().st_mtime
        except OSError:
            continue
        if child.name.startswith(TEMP_PREFIX):
            if now - mtime > STALE_TEMP_SECONDS:
                removed.append(child)
        elif child != keep:
            dated.append((mtime, child.name, child))
    # Newest first; the name breaks ties so two equal mtimes prune the same way every time.
    dated.sort(key=lambda d: (-d[0], d[1]))
    removed += [path for _, _, path in dated[max(entries - 1, 0) :]]
    for path in removed:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
    return removed
