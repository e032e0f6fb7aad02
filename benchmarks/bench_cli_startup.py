"""What a CLI user waits for: cold `citebound` processes, next to the warm in-process figure.

    PYTHONPATH=src python benchmarks/bench_cli_startup.py [--runs 15] [--store DIR]

Every cold figure is a new process, as a user starts it from a shell: `python -c pass` (the
baseline, measured in the same run), `citebound --version`, and `citebound ask` on the demo
store (extractive provider, default preset, one question per process, audit written). The warm
figure is `Pipeline.run` repeated in one process (what the README's in-process latency means).
Byte-code caches are allowed (a user's second run has them): the child processes run without
PYTHONDONTWRITEBYTECODE, after one untimed warm-up run.

Each cold row gives the median wall time and the median CPU time (user + sys of the child,
from `getrusage(RUSAGE_CHILDREN)`): on a shared machine the wall time grows with the load, the
CPU time much less, so the CPU column says what the process itself costs.

The start-up caches (`citebound/cache_dir.py`: the optimised ONNX graph, the cl100k rank table)
live in a temporary `CITEBOUND_CACHE_DIR` that the warm-up run fills, as a user's first command
does. `first ask` repeats the cold ask with an empty cache each time (what the very first ask
on a machine costs, entries written included), and `cache off` with `CITEBOUND_CACHE_DIR=off`.

The breakdown times, each alone in fresh processes, the parts a cold `ask` pays. `ask` loads
and runs the query embedder (numpy, onnxruntime and tokenizers imports, the ONNX session) in a
helper process forked before its own imports (`citebound/cli/_embedder_process.py`), so on two
cores that row runs beside the others; everything else holds the main process's GIL, so a cold
ask is about the sum of the rest. Two rows show what `ask` no longer pays
(`citebound/cli/_exit.py`): the cyclic collector during the imports (paused) and the
interpreter's teardown after the answer (skipped).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

QUESTION = "What is the CX-9 safety valve set pressure?"


def child_env(cache: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    env["CITEBOUND_CACHE_DIR"] = cache
    return env


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cold(
    argv: list[str], runs: int, cache: str, *, fresh: Callable[[], str] | None = None
) -> tuple[float, float]:
    """Median (wall ms, CPU ms) of `argv` as new processes (one untimed warm-up run first).

    `fresh` gives a new cache directory for every run (the first-ask figure)."""
    subprocess.run(argv, env=child_env(cache), capture_output=True, check=False)
    walls, cpus = [], []
    for _ in range(runs):
        env = child_env(fresh() if fresh else cache)
        c0, t0 = _child_cpu(), time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=False)
        walls.append((time.perf_counter() - t0) * 1000)
        cpus.append((_child_cpu() - c0) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def part(
    code: str, runs: int, cache: str, setup: str = "", *, gc_paused: bool = False
) -> tuple[float, float]:
    """Median (wall ms, CPU ms of the whole process, threads included) of `code` in fresh
    processes, after `setup` (not timed); `gc_paused` disables the cyclic collector first, as
    a cold `ask` does."""
    prog = (
        "import time\n"
        + ("import gc\ngc.disable()\n" if gc_paused else "")
        + setup
        + "\nt0, c0 = time.perf_counter(), time.process_time()\n"
        + code
        + "\nprint((time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000)\n"
    )
    env = child_env(cache)
    walls, cpus = [], []
    for _ in range(runs):
        r = subprocess.run(
            [sys.executable, "-c", prog], env=env, capture_output=True, text=True, check=True
        )
        wall, cpu = r.stdout.strip().splitlines()[-1].split()
        walls.append(float(wall))
        cpus.append(float(cpu))
    return statistics.median(walls), statistics.median(cpus)


def warm_in_process(store: Path, runs: int) -> float:
    from citebound.config import load_config
    from citebound.pipeline import Pipeline, PipelineContext

    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(
            env={},
            overrides={
                "store": str(store),
                "collection": "demo",
                "audit.sqlite_path": str(Path(tmp) / "audit.sqlite"),
            },
        )
        ctx = PipelineContext(config)
        pipe = Pipeline(ctx)
        for _ in range(5):
            pipe.run(QUESTION)
        samples = []
        for _ in range(runs):
            t0 = time.perf_counter()
            pipe.run(QUESTION)
            samples.append((time.perf_counter() - t0) * 1000)
        ctx.close()
    return statistics.median(samples)


IMPORTS = "import citebound.cli.ask, citebound.pipeline, citebound.respond"
FIRST_REQUEST_SETUP = f"""
{IMPORTS}
import tempfile
from citebound.config import load_config
from citebound.index.embedder import default_embedder
from citebound.text.tokens import get_tokenizer
from citebound.pipeline import Pipeline, PipelineContext
default_embedder(); get_tokenizer("cl100k_base")
tmp = tempfile.mkdtemp()
config = load_config(env={{}}, overrides={{"store": STORE, "collection": "demo",
                                          "audit.sqlite_path": tmp + "/audit.sqlite"}})
pipe = Pipeline(PipelineContext(config))
"""


def teardown(store: Path, runs: int, cache: str) -> tuple[float, float]:
    """Median (wall ms, CPU ms) the interpreter's exit adds after the imports and one request:
    the same program ending normally minus ending with `os._exit` (what `ask` does)."""
    prog = (
        f"STORE = {str(store)!r}\nQUESTION = {QUESTION!r}\n"
        + FIRST_REQUEST_SETUP
        + "pipe.run(QUESTION)\n"
    )
    normal = cold([sys.executable, "-c", prog], runs, cache)
    fast = cold([sys.executable, "-c", prog + "import os; os._exit(0)\n"], runs, cache)
    return normal[0] - fast[0], normal[1] - fast[1]


def breakdown(store: Path, runs: int, cache: str) -> list[tuple[str, tuple[float, float], str]]:
    embed = "import citebound.index.embedder as e\n"
    tok = "import citebound.text.tokens as t\n"
    return [
        ("import click + citebound.cli", part("import citebound.cli", runs, cache), "GIL"),
        ("import numpy", part("import numpy", runs, cache), "GIL; main and helper each"),
        (
            "import the ask command, pipeline and renderer (numpy, pydantic included)",
            part(IMPORTS, runs, cache, gc_paused=True),
            "GIL; collector paused, as in `ask`",
        ),
        (
            "the same imports with the cyclic collector running",
            part(IMPORTS, runs, cache),
            "what the pause saves",
        ),
        (
            "ONNX query embedder from the cache (onnxruntime imported before)",
            part("e.default_embedder()", runs, cache, embed + "import onnxruntime"),
            "helper process, beside the main one",
        ),
        (
            "ONNX query embedder without the cache (graph optimised at start)",
            part("e.default_embedder()", runs, "off", embed + "import onnxruntime"),
            "what the cache saves",
        ),
        (
            "cl100k counter: Python rank table + pattern (cached)",
            part("t.get_tokenizer('cl100k_base')", runs, cache, tok),
            "GIL",
        ),
        (
            "cl100k counter: quicktok table (cache off)",
            part("t.get_tokenizer('cl100k_base')", runs, "off", tok),
            "GIL (quicktok does not release it)",
        ),
        (
            "first `Pipeline.run` of a process (audit record written)",
            part(
                "pipe.run(QUESTION)",
                runs,
                cache,
                f"STORE = {str(store)!r}\nQUESTION = {QUESTION!r}\n" + FIRST_REQUEST_SETUP,
                gc_paused=True,
            ),
            "GIL, plus the audit's fsync",
        ),
        (
            "interpreter teardown after that request (normal exit minus `os._exit`)",
            teardown(store, max(3, runs // 2), cache),
            "skipped by `ask`",
        ),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--store", type=Path, default=None, help="A demo store (else one is built).")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="citebound-bench-cli-"))
    cache = str(work / "cache")
    fresh_n = iter(range(10**6))

    def fresh() -> str:
        return str(work / f"fresh-cache-{next(fresh_n)}")

    store = args.store
    try:
        if store is None:
            subprocess.run(
                [sys.executable, "-m", "citebound", "demo", "--keep", str(work / "demo")],
                env=child_env(cache),
                capture_output=True,
                check=True,
            )
            store = work / "demo" / "store"
        cli = [sys.executable, "-m", "citebound"]
        ask = [*cli, "ask", QUESTION, "--store", str(store), "--collection", "demo"]
        base = cold([sys.executable, "-c", "pass"], args.runs, cache)
        version = cold([*cli, "--version"], args.runs, cache)
        ask_ms = cold(ask, args.runs, cache)
        first = cold(ask, max(3, args.runs // 3), cache, fresh=fresh)
        off = cold(ask, max(3, args.runs // 3), "off")
        os.environ["CITEBOUND_CACHE_DIR"] = cache
        warm = warm_in_process(store, max(args.runs, 30))
        parts = breakdown(store, args.runs, cache)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}, runs: {args.runs}")
    print("| what | median wall ms | median CPU ms (user+sys) | wall / `python -c pass` |")
    print("|---|---:|---:|---:|")
    rows = [
        ("`python -c pass` (baseline)", base),
        ("`citebound --version` (cold)", version),
        ("`citebound ask` on the demo store (cold)", ask_ms),
        ("`citebound ask`, first on the machine (empty start-up cache)", first),
        ("`citebound ask` with `CITEBOUND_CACHE_DIR=off`", off),
    ]
    for name, (wall, cpu) in rows:
        print(f"| {name} | {wall:.0f} | {cpu:.0f} | {wall / base[0]:.1f}x |")
    print(f"| `Pipeline.run` in one process (warm) | {warm:.1f} | - | - |")
    print("\nwhere a cold ask goes (each part alone in fresh processes; CPU is the process's):")
    print("| part | median wall ms | median CPU ms | note |")
    print("|---|---:|---:|---|")
    print(f"| interpreter start (`python -c pass`) | {base[0]:.0f} | {base[1]:.0f} | GIL |")
    for name, (wall, cpu), note in parts:
        print(f"| {name} | {wall:.0f} | {cpu:.0f} | {note} |")


if __name__ == "__main__":
    main()
