"""Parsing where it can be stopped: one worker process with a time and a memory limit.

`isolated_preparer(limits)` is the default `Preparer` of `ingest_paths`. Files that can run
away (PDFs, Office files, any file over `INLINE_MAX_BYTES` = 32 KiB) are loaded and chunked in a
worker process started once per ingest (`python -m citebound.ingest._worker_main`) with
`RLIMIT_AS` = `[ingest] max_worker_memory_mb`; the parent waits at most
`max_seconds_per_file` for each file, then kills the worker, refuses that file as
`OVER_LIMIT` and starts a fresh worker for the next one. Small text files (Markdown, text,
HTML, JSONL up to 32 KiB) are parsed in-process, so an ingest of such files starts no
process at all. The threshold is small because text alone can be slow: counting the tokens of
one 40,000-character word (no space to cut at) takes about 24 s on 2 busy cores, growing with
the square of its length, so a 1 MiB file could run for hours; 32 KiB stays well inside the
default time limit (`worker = "always"` sends them too;
`worker = "never"` parses everything in-process, without a time or memory bound).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING

from citebound.contracts.ingest import ChunkerConfig, IngestLimits, SkippedFile, SkipReason
from citebound.ingest.limits import limit_message

if TYPE_CHECKING:
    from citebound.ingest.discover import Candidate
    from citebound.ingest.pipeline import Candidates, Prepared, Preparer, _Outcome

INLINE_MAX_BYTES = 32_768
_RUNAWAY_SUFFIXES = frozenset({".pdf", ".docx", ".xlsx", ".pptx"})
_STARTUP_SECONDS = 120.0  # importing the loaders on a loaded machine; never a file's time


def needs_worker(cand: Candidate, limits: IngestLimits) -> bool:
    """Whether `cand` is parsed in the worker process (see the module docstring)."""
    if limits.worker != "auto":
        return limits.worker == "always"
    if cand.path.suffix.lower() in _RUNAWAY_SUFFIXES:
        return True
    try:
        return cand.path.stat().st_size > INLINE_MAX_BYTES
    except OSError:
        return False  # prepare_file reports the unreadable file


def serve(channel_in: Connection, channel_out: Connection, memory_mb: int) -> None:
    """The worker's loop (`python -m citebound.ingest._worker_main`): set the memory limit,
    say ready, then answer each job with `prepare_file`'s result until None or EOF."""
    if memory_mb:
        try:
            import resource

            cap = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        except (ImportError, ValueError, OSError):
            pass  # no RLIMIT_AS here: the time limit still holds
    # Lazy: ingest.pipeline imports this module.
    from citebound.ingest.pipeline import prepare_file

    channel_out.send("ready")
    while True:
        try:
            job = channel_in.recv()
        except EOFError:
            return
        if job is None:
            return
        cand, collection, config, previous, limits = job
        try:
            result: object = prepare_file(cand, collection, config, previous, limits)
        except MemoryError:
            result = ("memory", "")
        except Exception as err:  # a loader or chunker bug costs one file, not the run
            result = ("error", f"{type(err).__name__}: {err}")
        channel_out.send(result)


class _Worker:
    """One running worker process and its two pipes. A plain subprocess (`-m`), not
    multiprocessing: nothing of the caller's `__main__` is run again, and no thread forked."""

    def __init__(self, limits: IngestLimits) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "citebound.ingest._worker_main",
             str(limits.max_worker_memory_mb)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
        )  # fmt: skip
        assert self.process.stdin is not None and self.process.stdout is not None
        self.send_end = Connection(os.dup(self.process.stdin.fileno()), readable=False)
        self.recv_end = Connection(os.dup(self.process.stdout.fileno()), writable=False)
        self.process.stdin.close()
        self.process.stdout.close()
        try:
            if not self.recv_end.poll(_STARTUP_SECONDS):
                raise OSError("the parsing worker did not start")
            self.recv_end.recv()
        except (EOFError, OSError) as err:
            self.stop()
            raise OSError(f"the parsing worker did not start: {err or 'it exited'}") from None

    def send(self, job: object) -> None:
        self.send_end.send(job)

    def stop(self) -> None:
        """Kill the process now and release the pipes."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.send_end.close()
        self.recv_end.close()

    def close(self) -> None:
        """Ask the process to exit (killed after 5 s) and release the pipes."""
        with contextlib.suppress(OSError):
            self.send_end.send(None)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        self.stop()


def isolated_preparer(limits: IngestLimits) -> Preparer:
    """A `Preparer` that parses runaway-prone files in a stoppable worker (module docstring)."""

    def prepare(
        pairs: Candidates, collection: str, config: ChunkerConfig
    ) -> Iterator[Prepared | _Outcome]:
        from citebound.ingest.pipeline import _Outcome, prepare_file

        worker: _Worker | None = None

        def refuse(cand: Candidate, reason: SkipReason, message: str) -> _Outcome:
            entry = SkippedFile(source_path=cand.source_path, reason=reason, message=message)
            return _Outcome("skipped", skipped=(entry,), source_path=cand.source_path)

        try:
            for cand, previous in pairs:
                if not needs_worker(cand, limits):
                    yield prepare_file(cand, collection, config, previous, limits)
                    continue
                if worker is None:
                    try:
                        worker = _Worker(limits)
                    except OSError as err:
                        yield refuse(cand, SkipReason.UNREADABLE, f"not parsed: {err}")
                        continue
                worker.send((cand, collection, config, previous, limits))
                seconds = limits.max_seconds_per_file
                if not worker.recv_end.poll(seconds):
                    worker.stop()
                    worker = None
                    why = limit_message(
                        "max_seconds_per_file", f"parsing ran past {seconds:g} s and was stopped",
                        seconds,
                    )  # fmt: skip
                    yield refuse(cand, SkipReason.OVER_LIMIT, why)
                    continue
                try:
                    result = worker.recv_end.recv()
                except (EOFError, OSError):
                    worker.process.wait()
                    code = worker.process.returncode
                    worker.stop()
                    worker = None
                    why = limit_message(
                        "max_worker_memory_mb",
                        f"the parsing worker died (exit code {code}), most likely out of memory",
                        limits.max_worker_memory_mb,
                    )
                    yield refuse(cand, SkipReason.OVER_LIMIT, why)
                    continue
                if isinstance(result, tuple):
                    kind, detail = result
                    if kind == "memory":
                        why = limit_message(
                            "max_worker_memory_mb", "parsing ran out of memory",
                            limits.max_worker_memory_mb,
                        )  # fmt: skip
                        yield refuse(cand, SkipReason.OVER_LIMIT, why)
                    else:
                        yield refuse(cand, SkipReason.CORRUPT, str(detail))
                    continue
                yield result
        finally:
            if worker is not None:
                worker.close()

    return prepare
