"""The query embedder helper process of a cold `citebound ask` (cli/_embedder_process.py).

Each test runs in a fresh interpreter: forking the pytest process (which has threads) is what
the CLI itself refuses to do.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

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
