"""Where citebound keeps per-machine caches that only make start-up faster.

Two caches live here: the optimised ONNX graph of the query embedder (`index/onnx_cache.py`)
and the cl100k rank table as a marshal file (`text/bpe_py.py`). Both are derived from installed
packages, checked when read, and never change a result: deleting the folder only makes the next
cold start slower.

`$CITEBOUND_CACHE_DIR`, else `$XDG_CACHE_HOME/citebound`, else `~/.cache/citebound`;
`CITEBOUND_CACHE_DIR=off` disables both caches (so does a process without a home directory).
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "CITEBOUND_CACHE_DIR"


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
