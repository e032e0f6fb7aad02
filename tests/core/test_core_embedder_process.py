"""The query embedder helper process of a cold `citebound ask` (cli/_embedder_process.py).

Each test runs in a fresh interpreter: forking the pytest process (which has threads) is what
the CLI itself refuses to do.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from citebound.cli import _embedder_process as ep

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the helper process is forked on Linux only"
)


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_helper_vectors_equal_the_in_process_embedder_bit_for_bit_even_after_it_dies() -> None:
    code = """
import os, signal
from citebound.cli import _embedder_process as ep
from citebound.index.embedder import DEFAULT_MODEL_NAME, default_embedder
texts = ["What torque for the HP-220 impeller bolts?", "pump", "ü " * 300, "x"]
helper = ep.start()
assert helper is not None and helper.name == DEFAULT_MODEL_NAME
remote = helper.embed(texts)
assert helper.embed([]).shape == (0, remote.shape[1]) and not helper._broken
os.kill(helper._pid, signal.SIGKILL)  # a helper that died: the next call embeds here
after = helper.embed(texts[:2])
local = default_embedder()
assert helper.dim == local.dim == remote.shape[1]
print(remote.dtype, remote.shape, remote.tobytes() == local.embed(texts).tobytes(),
      after.tobytes() == local.embed(texts[:2]).tobytes(), helper._broken)
"""
    assert _run(code).split() == ["float32", "(4,", "384)", "True", "True", "True"]


def test_a_cold_ask_imports_neither_onnxruntime_nor_tokenizers() -> None:
    # `python -m citebound ask` owns its process: the helper loads the embedder, so the main
    # process skips both libraries (their import holds the GIL). The answer still comes.
    code = """
import atexit, runpy, sys
atexit.register(lambda: print("LOADED", [m for m in ("onnxruntime", "tokenizers") if m in sys.modules]))
sys.argv = ["citebound", "ask", "pump?", "--store", sys.argv[1], "--collection", "none"]
runpy.run_module("citebound", run_name="__main__")
"""
    # No index: the ask fails after the helper started, which is enough to see the imports.
    import tempfile

    with tempfile.TemporaryDirectory() as store:
        out = subprocess.run(
            [sys.executable, "-c", code, store], capture_output=True, text=True, timeout=300
        )
    assert out.returncode == 2, out.stderr
    assert "LOADED []" in out.stdout


def _spawn(code: str, stdin: int | None = None) -> int:
    """A child Python process running `code` (posix_spawn: no fork of the pytest process)."""
    actions = [(os.POSIX_SPAWN_DUP2, stdin, 0)] if stdin is not None else []
    return os.posix_spawn(
        sys.executable, [sys.executable, "-c", code], os.environ, file_actions=actions
    )


def _close_in_thread(helper: ep.EmbedderProcess) -> None:
    # A close() that hangs would hang the test run: join with a generous guard instead.
    closer = threading.Thread(target=helper.close, daemon=True)
    closer.start()
    closer.join(120)
    assert not closer.is_alive(), "close() did not return"


# A helper stuck in start-up: it never reads its pipe, ignores SIGTERM, never exits.
STUCK = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(3600)"


def _recording_reap(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, bool]]:
    """Patch `ep.reap` to record (timeout given, ended by itself) of each call."""
    calls: list[tuple[float, bool]] = []
    reap = ep.reap

    def recorded(pid: int, timeout: float, pidfd: int = -1) -> bool:
        calls.append((timeout, reap(pid, timeout, pidfd)))
        return calls[-1][1]

    monkeypatch.setattr(ep, "reap", recorded)
    return calls


def test_close_kills_a_helper_that_never_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    pid = _spawn(STUCK)
    requests, theirs = os.pipe()
    replies, _ = os.pipe()
    calls = _recording_reap(monkeypatch)
    # close() reads the constant when called: the patched limit is the one used
    monkeypatch.setattr(ep, "CLOSE_TIMEOUT_SECONDS", 0.2)
    helper = ep.EmbedderProcess("stuck", pid, theirs, replies)
    assert helper._pidfd >= 0 or not hasattr(os, "pidfd_open")
    _close_in_thread(helper)
    assert calls == [(0.2, False)]  # killed, not ended by itself
    with pytest.raises(ChildProcessError):  # and reaped: no zombie left
        os.waitpid(pid, os.WNOHANG)
    assert helper._pidfd == -1  # closed with the helper
    helper.close()  # idempotent
    assert len(calls) == 1
    for fd in (requests, _):
        os.close(fd)


def test_an_explicit_close_timeout_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    pid = _spawn(STUCK)
    requests, theirs = os.pipe()
    replies, other = os.pipe()
    calls = _recording_reap(monkeypatch)
    helper = ep.EmbedderProcess("stuck", pid, theirs, replies)
    helper.close(timeout=0.0)
    assert calls == [(0.0, False)]
    for fd in (requests, other):
        os.close(fd)


def test_reap_does_not_block_on_a_helper_that_outlives_its_kill(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A helper in uninterruptible sleep ignores SIGKILL for a while: stand-in, a kill that
    # does not land. reap gives up after KILL_WAIT_SECONDS instead of waiting for ever.
    pid = _spawn(STUCK)
    fd = ep.open_pidfd(pid)
    monkeypatch.setattr(ep, "_kill", lambda pid, pidfd: None)
    monkeypatch.setattr(ep, "KILL_WAIT_SECONDS", 0.05)
    try:
        assert ep.reap(pid, 0.0, fd) is False
        assert os.waitpid(pid, os.WNOHANG) == (0, 0)  # still running, not reaped
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        if fd >= 0:
            os.close(fd)


def test_close_waits_for_a_helper_that_ends_when_its_pipe_closes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    requests, theirs = os.pipe()
    pid = _spawn("import sys\nsys.stdin.buffer.read()", stdin=requests)
    os.close(requests)
    replies, other = os.pipe()
    calls = _recording_reap(monkeypatch)
    _close_in_thread(ep.EmbedderProcess("quits", pid, theirs, replies))
    assert calls == [(ep.CLOSE_TIMEOUT_SECONDS, True)]
    os.close(other)


def test_a_helper_that_never_loads_is_killed_and_the_embedder_loads_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pid = _spawn(STUCK)
    requests, theirs = os.pipe()
    replies, silent = os.pipe()  # the helper never writes its ready message
    monkeypatch.setattr(ep, "READY_TIMEOUT_SECONDS", 0.2)
    helper = ep.EmbedderProcess("stuck", pid, theirs, replies)
    dims: list[int] = []
    asker = threading.Thread(target=lambda: dims.append(helper.dim), daemon=True)
    asker.start()
    asker.join(300)
    assert not asker.is_alive(), "dim waited for a helper that never loads"
    from citebound.index.embedder import default_embedder

    assert dims == [default_embedder().dim] and helper._broken
    with pytest.raises(ChildProcessError):  # killed and reaped
        os.waitpid(pid, os.WNOHANG)
    for fd in (requests, silent):
        os.close(fd)
