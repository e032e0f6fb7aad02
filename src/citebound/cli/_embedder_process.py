"""The query embedder of a cold `citebound ask`, loaded and run in a forked helper process.

A cold ask is bound by work that holds the GIL: imports (pydantic, numpy, the pipeline), model
classes, the first request. A background thread overlaps only native work (the onnxruntime
session itself); importing onnxruntime and tokenizers and loading the MiniLM tokenizer (~60 ms
of GIL-bound CPU) still competed with the main thread. On two cores a second *process* does all
of it beside the main one: `ask` forks, before it imports anything heavy, a helper that loads
the default query embedder and then answers `embed(texts)` requests over a pipe; the main
process never imports onnxruntime or tokenizers.

Same results: the helper runs the same `OnnxEmbedder` (same session options, same start-up
cache) on the same texts and sends the float32 bytes back unchanged. Anything that goes wrong
(no fork on this platform, fork refused, the helper cannot load the model or dies) falls back to
the in-process embedder, which the caller gets from `citebound.index.embedder` as usual.

Lifetime: the helper ignores Ctrl-C, reads requests until its pipe closes (the main process
ended, however it ended) and never returns into the CLI: it leaves with `os._exit`. `close()`
(called by `cli/_exit.py` before the fast exit) ends it and waits for it, so its CPU time is
accounted to the command like a thread's would be; but at most CLOSE_TIMEOUT_SECONDS: a helper
still inside onnxruntime's start-up then (stuck, or on a machine far slower than expected) is
killed rather than hanging the exit (and a killed helper that does not end within
KILL_WAIT_SECONDS, asleep in the kernel, is left to init). The helper is waited on and killed
through a pidfd opened right after the fork, so a reused pid is never signalled. Likewise the
first embedding waits at most READY_TIMEOUT_SECONDS for the helper to load, then kills it and
loads in-process. Killing it is safe: its only write, the start-up cache entry, is renamed into
place once complete (`citebound.cache_dir.commit_dir`).

Only the CLI's own process starts one (never a test or an embedding program: forking a process
with threads is unsafe), on Linux.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import select
import signal
import struct
import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from citebound.index.embedder import Matrix

_HEADER = struct.Struct("<BI")  # status (0 ok, 1 error), payload length
_SHAPE = struct.Struct("<II")  # rows, dim
# How long `close()` waits for the helper to end by itself before killing it. A helper ends as
# soon as it sees its pipe close, unless it is still loading the model: ~0.2 s from the
# start-up cache, ~0.8 s on a cache miss that writes the 90 MB entry (2-core build machine,
# load 2). 5 s is several times the slowest normal load; a helper still loading then is stuck
# (e.g. in onnxruntime's start-up) and would otherwise hang the end of `citebound ask`.
CLOSE_TIMEOUT_SECONDS = 5.0
# How long the first embedding waits for the helper to say it loaded the model before giving
# up on it (it is killed, and the embedder loads in this process: same vectors). Only there to
# end a hang: a slow but working helper (a machine under heavy load) should still be used, as
# loading again in this process costs another full load, so 30 s, far above any normal load.
READY_TIMEOUT_SECONDS = 30.0
# How long `reap` waits, after SIGKILL, for the helper to be gone. A killed process ends within
# milliseconds unless it sleeps uninterruptibly in the kernel (D state, e.g. on a hung network
# file system); then it is left unreaped rather than hanging the exit: the CLI is ending, and
# init reaps it once it ends.
KILL_WAIT_SECONDS = 1.0
# Poll interval of the fallback wait, for kernels without pidfd_open (Linux < 5.3).
_POLL_SECONDS = 0.01


def _read_exactly(fd: int, n: int) -> bytes:
    chunks: list[bytes] = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("the embedder process closed its pipe")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _send(fd: int, status: int, payload: bytes) -> None:
    _write_all(fd, _HEADER.pack(status, len(payload)) + payload)


def _receive(fd: int) -> tuple[int, bytes]:
    status, size = _HEADER.unpack(_read_exactly(fd, _HEADER.size))
    return status, _read_exactly(fd, size)


def _serve(requests: int, replies: int) -> None:
    """The helper: load the embedder, say so (its dim, or why not), answer until EOF."""
    try:
        # Lazy: the embedder (numpy, onnxruntime, tokenizers: ~110 ms, python -X importtime) is
        # imported in the forked helper only, never in the parent before the fork.
        from citebound.index.embedder import default_embedder

        embedder = default_embedder()
    except Exception as err:  # the main process loads it itself and reports the error
        _send(replies, 1, f"{type(err).__name__}: {err}".encode())
        return
    _send(replies, 0, _SHAPE.pack(0, embedder.dim))
    import numpy as np

    while True:
        try:
            texts = marshal.loads(_receive(requests)[1])
        except EOFError:
            return
        try:
            out = np.ascontiguousarray(embedder.embed(texts), dtype=np.float32)
        except Exception as err:
            _send(replies, 1, f"{type(err).__name__}: {err}".encode())
            continue
        _send(replies, 0, _SHAPE.pack(*out.shape) + out.tobytes())


class EmbedderProcess:
    """`Embedder` for the default model, computed by the helper process (see module doc)."""

    def __init__(
        self, name: str, pid: int, requests: int, replies: int, pidfd: int | None = None
    ) -> None:
        self.name = name
        self._pid = pid
        # A pidfd names this very process: waiting on and signalling it cannot reach another
        # process that reused the pid. `start` opens it right after the fork.
        self._pidfd = open_pidfd(pid) if pidfd is None else pidfd
        self._requests = requests
        self._replies = replies
        self._dim: int | None = None
        self._broken = False
        # One request at a time on the pipe (a caller with threads would interleave them).
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        with self._lock:
            if self._dim is None:
                try:
                    self._dim = self._ready()
                except (OSError, EOFError, RuntimeError, struct.error):
                    self._give_up()
                    from citebound.index.embedder import default_embedder

                    self._dim = default_embedder().dim
            return self._dim

    @dim.setter
    def dim(self, value: int) -> None:  # `Embedder.dim` is a plain attribute in the protocol
        self._dim = value

    def _ready(self) -> int:
        """The helper's first message: its dim once loaded (blocks until then, at most
        READY_TIMEOUT_SECONDS), or its error."""
        if not _readable(self._replies, READY_TIMEOUT_SECONDS):
            raise TimeoutError(f"the embedder process did not load in {READY_TIMEOUT_SECONDS} s")
        status, payload = _receive(self._replies)
        if status != 0:
            raise RuntimeError(payload.decode(errors="replace"))
        return int(_SHAPE.unpack(payload)[1])

    def _give_up(self) -> None:
        """Embed in this process from now on (the helper failed, died or hangs): end it now."""
        self._broken = True
        self.close(timeout=0.0)

    def embed(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        dim = self.dim
        with self._lock:
            if not self._broken:
                try:
                    _send(self._requests, 0, marshal.dumps(list(texts)))
                    status, payload = _receive(self._replies)
                    if status == 0:
                        rows, width = _SHAPE.unpack_from(payload)
                        if width == dim and rows == len(texts):
                            flat = np.frombuffer(payload, dtype=np.float32, offset=_SHAPE.size)
                            return flat.reshape(rows, width).copy()
                except (OSError, EOFError, struct.error, ValueError):
                    pass
                self._give_up()
        from citebound.index.embedder import default_embedder

        return default_embedder().embed(texts)

    def close(self, timeout: float | None = None) -> None:
        """End the helper (it sees its pipe close) and wait for it, at most `timeout` seconds
        (CLOSE_TIMEOUT_SECONDS, read now, when None) before killing it; idempotent."""
        if self._requests < 0:
            return
        for fd in (self._requests, self._replies):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._requests = self._replies = -1
        limit = CLOSE_TIMEOUT_SECONDS if timeout is None else timeout
        try:
            reap(self._pid, limit, self._pidfd)
        finally:
            if self._pidfd >= 0:
                with contextlib.suppress(OSError):
                    os.close(self._pidfd)
                self._pidfd = -1


def _readable(fd: int, timeout: float) -> bool:
    """Whether `fd` has data (or EOF) within `timeout` seconds (poll(), not select(), which
    cannot watch descriptors above 1023)."""
    waiter = select.poll()
    waiter.register(fd, select.POLLIN)
    return bool(waiter.poll(max(timeout, 0.0) * 1000))


def open_pidfd(pid: int) -> int:
    """A pidfd of child `pid`, or -1 (Linux < 5.3, or no such process)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


def _wait_exited(pid: int, timeout: float, pidfd: int = -1) -> bool:
    """Block until child `pid` has exited (not reaped) or `timeout` passed; True if it exited.

    A pidfd becomes readable when the process exits; without one (old kernel), poll."""
    if pidfd >= 0:
        return _readable(pidfd, timeout)
    deadline = time.monotonic() + timeout
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True  # already reaped
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_SECONDS)


def _kill(pid: int, pidfd: int) -> None:
    with contextlib.suppress(ProcessLookupError, OSError):
        if pidfd >= 0 and hasattr(signal, "pidfd_send_signal"):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)


def reap(pid: int, timeout: float, pidfd: int = -1) -> bool:
    """Wait up to `timeout` seconds for child `pid` to exit, SIGKILL it if it has not, and
    reap it (waiting at most KILL_WAIT_SECONDS after the kill; a process that does not end
    then is left to init). True when it ended by itself. `pidfd`: `open_pidfd(pid)` if any."""
    ended = _wait_exited(pid, timeout, pidfd)
    if not ended:
        _kill(pid, pidfd)
        if not _wait_exited(pid, KILL_WAIT_SECONDS, pidfd):
            return False  # unkillable for now (D state): never block the exit on it
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)  # it has exited: returns at once
    return ended


def start() -> EmbedderProcess | None:
    """Fork the helper; None when this platform or process cannot (the caller then loads the
    embedder in-process).

    Forked first, from a process that has imported click and little else: the helper imports
    numpy itself (in parallel with the main process), and no library with threads of its own
    (OpenBLAS, onnxruntime) is loaded in the process that forks."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return None
    try:
        req_read, req_write = os.pipe()
    except OSError:
        return None
    try:
        rep_read, rep_write = os.pipe()
    except OSError:
        os.close(req_read)
        os.close(req_write)
        return None
    try:
        pid = os.fork()
    except OSError:
        for fd in (req_read, req_write, rep_read, rep_write):
            os.close(fd)
        return None
    if pid == 0:  # the helper: never returns into the CLI
        code = 0
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C
            os.close(req_write)
            os.close(rep_read)
            _serve(req_read, rep_write)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    pidfd = open_pidfd(pid)  # at once: the helper cannot have been reaped yet
    os.close(req_read)
    os.close(rep_write)
    from citebound.index.embedder import DEFAULT_MODEL_NAME  # imports numpy: after the fork

    return EmbedderProcess(DEFAULT_MODEL_NAME, pid, req_write, rep_read, pidfd)
