"""What a CLI user waits for: cold `citebound` processes, next to the warm in-process figure.

    PYTHONPATH=src python benchmarks/bench_cli_startup.py [--runs 15] [--store DIR]

Every cold figure is a new process, as a user starts it from a shell: `python -c pass` (the
baseline, measured in the same run), `citebound --version`, and `citebound ask` on the demo
store (extractive provider, default preset, one question per process, audit written). The warm
figure is `Pipeline.run` repeated in one process (what the README's in-process latency means).
Byte-code caches are allowed (a user's second run has them): the child processes run without
PYTHONDONTWRITEBYTECODE, after one untimed warm-up run.

The breakdown times, in one fresh process each and one after the other, the parts a cold `ask`
has to pay: importing the pipeline, creating the ONNX query embedder, loading the BPE table of
the token counter. `ask` overlaps the last two with the imports on two threads
(`citebound/cli/_warm.py`), so the cold `ask` is less than their sum.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUESTION = "What is the CX-9 safety valve set pressure?"


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env


def cold(argv: list[str], runs: int) -> float:
    """Median wall ms of `argv` as new processes (one untimed warm-up run first)."""
    env = child_env()
    subprocess.run(argv, env=env, capture_output=True, check=False)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=False)
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def part(code: str, runs: int) -> float:
    """Median ms of the statement `code` timed inside fresh processes."""
    prog = (
        "import time\nt0 = time.perf_counter()\n"
        + code
        + "\nprint((time.perf_counter() - t0) * 1000)\n"
    )
    env = child_env()
    out = []
    for _ in range(runs):
        r = subprocess.run(
            [sys.executable, "-c", prog], env=env, capture_output=True, text=True, check=True
        )
        out.append(float(r.stdout.strip().splitlines()[-1]))
    return statistics.median(out)


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--store", type=Path, default=None, help="A demo store (else one is built).")
    args = ap.parse_args()
    root = None
    store = args.store
    if store is None:
        root = Path(tempfile.mkdtemp(prefix="citebound-bench-cli-"))
        subprocess.run(
            [sys.executable, "-m", "citebound", "demo", "--keep", str(root)],
            env=child_env(),
            capture_output=True,
            check=True,
        )
        store = root / "store"
    try:
        cli = [sys.executable, "-m", "citebound"]
        ask = [*cli, "ask", QUESTION, "--store", str(store), "--collection", "demo"]
        base = cold([sys.executable, "-c", "pass"], args.runs)
        version = cold([*cli, "--version"], args.runs)
        ask_ms = cold(ask, args.runs)
        warm = warm_in_process(store, max(args.runs, 30))
        imports = part("import citebound.cli.ask, citebound.pipeline", args.runs)
        embedder = part(
            "import citebound.index.embedder as e\nt0 = time.perf_counter()\ne.default_embedder()",
            args.runs,
        )
        bpe = part(
            "import citebound.text.tokens as t\nt0 = time.perf_counter()\n"
            "t.get_tokenizer('cl100k_base')",
            args.runs,
        )
    finally:
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}, runs: {args.runs}")
    print("| what | median ms | ratio |")
    print("|---|---:|---:|")
    print(f"| `python -c pass` (baseline) | {base:.0f} | 1.0x |")
    print(f"| `citebound --version` (cold) | {version:.0f} | {version / base:.1f}x |")
    print(f"| `citebound ask` on the demo store (cold) | {ask_ms:.0f} | {ask_ms / base:.1f}x |")
    print(f"| `Pipeline.run` in one process (warm) | {warm:.1f} | - |")
    print("\nwhere a cold ask goes (each part alone in a fresh process):")
    print(f"  import CLI + pipeline      {imports:.0f} ms")
    print(f"  ONNX query embedder        {embedder:.0f} ms (on a thread, overlapped)")
    print(f"  cl100k BPE table           {bpe:.0f} ms (on a thread, overlapped)")
    print(f"  interpreter start          {base:.0f} ms")


if __name__ == "__main__":
    main()
