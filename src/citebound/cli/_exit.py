"""Leave a finished CLI process without tearing the interpreter down.

After a cold `citebound ask` has printed its answer and closed its store and audit sink, the
interpreter's own shutdown still frees every module, pydantic schema, numpy and onnxruntime
object one by one: ~60 ms of CPU (a sixth of the whole ask's) that nobody waits for but the
shell. A command whose work is complete calls `release_at_exit()`; when the process runs the
CLI from its own command line (`citebound ...`, `python -m citebound ...`), `exit_now` then
does what shutdown does that anyone can observe, in the same order as the interpreter
(non-daemon threads joined, `atexit` functions run, stdout and stderr flushed), and ends the
process with `os._exit`, skipping the teardown.

Anything unusual takes the normal exit instead: a flush that fails (a closed pipe keeps its
usual exit code and message), an exit code that is not an int, a command that did not opt in,
or the CLI called with explicit arguments (`main([...])`, click's test runner, which would
otherwise end the calling test process).

The same kind of process may also pause the cyclic garbage collector while it starts
(`pause_gc`): importing pydantic, numpy and the pipeline and answering the first question
allocate hundreds of thousands of objects that the collector walks again and again (~50 ms of
CPU, a tenth of a cold ask) and finds almost nothing to free. Reference counting still frees
everything else at once; only reference cycles wait, until `resume_gc` or the end of the
process. Called in-process (tests, an embedding program) it changes nothing.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading

_released = False
_own_process = False
_gc_paused = False


def own_process() -> None:
    """The CLI runs from this process's command line (set by `citebound.cli.main`)."""
    global _own_process
    _own_process = True


def owns_process() -> bool:
    return _own_process


def pause_gc() -> None:
    """Pause the cyclic collector when the CLI owns the process (see the module docstring)."""
    global _gc_paused
    if _own_process and gc.isenabled():
        gc.disable()
        _gc_paused = True


def resume_gc() -> None:
    """Undo `pause_gc` (a long `--questions` batch collects as usual after its start)."""
    global _gc_paused
    if _gc_paused:
        gc.enable()
        _gc_paused = False


def release_at_exit() -> None:
    """The running command's output is written and its files are closed: its process may end
    without the interpreter's teardown (see the module docstring)."""
    global _released
    _released = True


def released() -> bool:
    return _released


def exit_now(code: int) -> None:
    """End the process with `code`, as the interpreter would but without its teardown.

    Returns only when the fast way is not safe (a stream cannot be flushed); the caller then
    exits normally.
    """
    # The interpreter's own order: threading's shutdown (its registered hooks, such as
    # concurrent.futures stopping idle workers, then joining non-daemon threads), then atexit.
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # e.g. a closed pipe: the normal exit reports it as usual
    os._exit(code)
