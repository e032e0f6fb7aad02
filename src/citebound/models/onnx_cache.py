"""A per-machine cache of the optimised ONNX graph, so a cold process skips graph optimisation.

Creating the onnxruntime session of the int8 MiniLM costs 0.3-0.5 s of CPU on every start: at
ORT_ENABLE_ALL onnxruntime constant-folds the int8 weights into float32 and fuses nodes. It can
save the graph it ends up with (`optimized_model_filepath`), its weights as external data that a
later session memory-maps; that graph, loaded with optimisation off, starts in ~50 ms of CPU and
computes the same outputs bit for bit (the kernels, weight pre-packing included, are the same).

The saved graph can be specific to the CPU that optimised it (onnxruntime says so), so:

- the cache key covers the model file, the onnxruntime version, the session settings, the
  machine type and the CPU's feature flags;
- the first process to miss writes the entry, then loads it back and keeps it only when its
  output on a fixed probe input equals the original session's bit for bit; the probe's digest is
  stored, and every later load runs the probe again (a few ms) and falls back to the original
  model when it differs. Results never depend on whether the cache was used.

Where: `citebound.cache_dir.cache_root()` (one ~90 MB entry per model and onnxruntime
version); `CITEBOUND_CACHE_DIR=off` disables it. An entry is written in a temporary folder
beside it, flushed and renamed into place (`cache_dir.commit_dir`): a process killed while
writing (the CLI kills an embedder helper that does not end) leaves no partial entry. The
writer, and every start that reads an entry, then keeps only the most recently used
`cache_dir.KEEP_ENTRIES` entries and removes temporaries of writers that are gone; it touches
only folders named like an entry that hold `probe.json` (`owned_entry`).
Any error (read-only home, full disk, a corrupt entry) silently means "no cache".

Every session here is made by `citebound.models.onnx_session` with the caller's
`SessionSettings`; this module only chooses optimisation on (the original model, and writing
the entry) or off (loading an entry back). `citebound.models.session(..., optimized_cache=True)`
is the way in.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import platform
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from citebound.cache_dir import (
    KEY_PATTERN,
    cache_root,
    commit_dir,
    entry_key,
    prune,
    temp_prefix,
    touch,
)
from citebound.models.onnx_session import SAVED_WEIGHTS, SessionSettings, open_session

if TYPE_CHECKING:
    import onnxruntime as ort

MODEL_FILE = "model.onnx"
WEIGHTS_FILE = SAVED_WEIGHTS  # the entry's weights, memory-mapped on load
CHECK_FILE = "probe.json"
# An entry's name: `cache_key`. `prune` removes only folders so named that hold CHECK_FILE.
_ENTRY_NAME = re.compile(KEY_PATTERN)
# The probe: a short fixed token sequence (BERT ids [CLS] ... [SEP]); its output pins the graph.
PROBE_IDS = (101, 2054, 2003, 1996, 3647, 10460, 2275, 3778, 1029, 102)


def _cpu_flags() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def cache_key(model_path: Path, settings: dict[str, str]) -> str:
    import onnxruntime as ort

    st = model_path.stat()
    parts = {
        "model": str(model_path.resolve()),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "onnxruntime": ort.__version__,
        "settings": settings,
        "machine": platform.machine(),
        "cpu": _cpu_flags(),
    }
    return entry_key(json.dumps(parts, sort_keys=True))


def owned_entry(path: Path) -> bool:
    """Whether `path` is an entry this module wrote (what `prune` may remove)."""
    return _ENTRY_NAME.fullmatch(path.name) is not None and (path / CHECK_FILE).is_file()


def probe_digest(session: ort.InferenceSession) -> str:
    """sha256 of the session's first output on `PROBE_IDS` (bit-exact fingerprint)."""
    ids = np.array([PROBE_IDS], dtype=np.int64)
    feeds: dict[str, Any] = {}
    for inp in session.get_inputs():
        if inp.name == "input_ids":
            feeds[inp.name] = ids
        elif inp.name == "attention_mask":
            feeds[inp.name] = np.ones_like(ids)
        else:  # token_type_ids
            feeds[inp.name] = np.zeros_like(ids)
    out = np.ascontiguousarray(session.run(None, feeds)[0])
    return hashlib.sha256(out.tobytes()).hexdigest()


def load_session(model_path: Path, settings: SessionSettings) -> ort.InferenceSession:
    """An onnxruntime session of `model_path`, from the cache when a checked entry exists.

    `settings` (thread counts) apply to every session made here and are part of the cache key.
    On a miss the original model is optimised as usual and the entry is written for the next
    process. onnxruntime's errors on the original model propagate (`models.session` maps them).
    """
    root = cache_root()
    if root is None:
        return open_session(model_path, settings.options())
    try:
        entry = root / "onnx" / cache_key(model_path, settings.cache_identity())
    except OSError:
        return open_session(model_path, settings.options())
    cached = _load_cached(entry, settings)
    if cached is not None:
        return cached
    session = open_session(model_path, settings.options())
    # No cache this time on any error: disk full, read-only home, ...
    with contextlib.suppress(Exception):
        _write_entry(entry, model_path, settings, probe_digest(session))
    return session


def _load_cached(entry: Path, settings: SessionSettings) -> ort.InferenceSession | None:
    try:
        expected = json.loads((entry / CHECK_FILE).read_text("utf-8"))["probe_sha256"]
        # The saved graph is optimised already: optimising it again is the cost we skip.
        session = open_session(entry / MODEL_FILE, settings.options(optimize=False))
        if probe_digest(session) == expected:
            touch(entry)  # most recently used: the last entry `prune` removes
            # On a hit too: else the temporary of a writer killed mid-write (~90 MB) would stay
            # for good, as every later start hits the cache and never writes.
            prune(entry.parent, entry, owned_entry)
            return session
    except FileNotFoundError:
        return None
    except Exception:  # corrupt or foreign entry: fall through and drop it
        pass
    shutil.rmtree(entry, ignore_errors=True)
    return None


def _write_entry(entry: Path, model_path: Path, settings: SessionSettings, digest: str) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(), dir=entry.parent))
    try:
        # writes model.onnx + weights.bin
        open_session(model_path, settings.options(save_optimized=tmp / MODEL_FILE))
        check = open_session(tmp / MODEL_FILE, settings.options(optimize=False))
        if probe_digest(check) != digest:
            return  # this build of onnxruntime does not round-trip exactly: no cache
        (tmp / CHECK_FILE).write_text(json.dumps({"probe_sha256": digest}), "utf-8")
        if commit_dir(tmp, entry):  # else another process won the race
            prune(entry.parent, entry, owned_entry)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
