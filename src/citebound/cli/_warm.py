"""Start loading the two slow resources of a query while the CLI imports the rest.

The query embedder loads here only when `ask` cannot use its helper process
(`cli/_embedder_process.py`: other platforms, or the CLI called in-process as `main([...])`);
the token counter always loads here.

A cold `citebound ask` pays for importing the pipeline (Python, holds the GIL), creating the
onnxruntime session of the query embedder (native code that releases the GIL: it overlaps with
the imports on two cores) and loading the token counter (quicktok's table load holds the GIL;
the Python cl100k counter that a cold process uses instead, text/bpe_py.py, loads in ~40 ms).
The threads only fill the same process-wide caches the request uses (`default_embedder`,
`get_tokenizer`, both behind a lock), so results are identical; an error there is ignored, and
the request meets it again on the main thread and reports it as usual.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


def _quietly(load: Callable[[], object]) -> None:
    try:
        load()
    except Exception:  # reported by the request itself, on the main thread
        return


def _embedder() -> None:
    # Lazy: the embedder (numpy, onnxruntime: ~120 ms, python -X importtime) and the tokenizer (~20
    # ms) are imported on the warm-up thread, beside the command's own imports.
    from citebound.index.embedder import default_embedder

    default_embedder()


def _start(name: str, job: Callable[[], None]) -> threading.Thread:
    # Not a daemon: the interpreter joins it at exit. A daemon thread still inside
    # onnxruntime's session set-up when an early error exits the process aborts it
    # ("terminate called without an active exception", exit 134).
    thread = threading.Thread(target=_quietly, args=(job,), name=name)
    thread.start()
    return thread


def prewarm_embedder() -> threading.Thread:
    """Start loading the default query embedder (the caller joins the thread only in tests)."""
    return _start("citebound-warm-embedder", _embedder)


def prewarm_tokenizer(name: str) -> threading.Thread:
    """Start loading the token counter `name`."""

    def _tokenizer() -> None:
        from citebound.text.tokens import get_tokenizer

        get_tokenizer(name)

    return _start("citebound-warm-tokenizer", _tokenizer)
