"""Latency of a follow-up turn against a single-shot question (issue #16: within 1.3x).

    PYTHONPATH=src python benchmarks/bench_conversation.py [--rounds N] [--json FILE]

Demo corpus (the bundled sample documents), default preset and extractive provider, audit to
SQLite as `ask` does. Each round asks, interleaved, every first question single-shot and then
its follow-up with the first turn as history (the follow-up's rewrite, the conversation template
and its longer prompt are the extra work). The ratio is median(follow-up) / median(single-shot)
over the same rounds in the same process. Cold start: `citebound ask Q` against `citebound chat`
fed Q and the follow-up on stdin, each in a fresh process, as a CLI user runs them. It also
runs the sample-corpus conversations of `data/conversation_checks.jsonl` once and reports how
many turns pass their checks (the F' ones: tests/pipeline/test_pipeline_conversation_checks.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from citebound.cli.demo import build_demo_store
from citebound.config import load_config
from citebound.contracts.conversation import ConversationTurn
from citebound.eval.conversations import load_checks, run_check
from citebound.pipeline import Pipeline, PipelineContext

CHECKS = Path(__file__).resolve().parent / "data" / "conversation_checks.jsonl"

# (first question, follow-up that needs it); every follow-up is answered with citations.
PAIRS = [
    ("What oil grade does the GB-7 gearbox use?", "How many litres of it does it hold?"),
    (
        "What torque should the HP-220 impeller bolts be tightened to?",
        "How often must its mechanical seal be inspected?",
    ),
    ("What is the VT-40 blade pitch procedure?", "What torque do its clamp bolts need?"),
    ("What does the ESD-3 proof test check?", "Which trip functions does it cover?"),
]


def _cold(args: list[str], stdin: str, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "citebound", *args], input=stdin, capture_output=True, text=True,
        env=env, check=False,
    )  # fmt: skip
    return (time.perf_counter() - t0) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=30, help="rounds over the pairs")
    ap.add_argument("--cold", type=int, default=5, help="cold-start runs per command")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    a = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="citebound-bench-conv-"))
    store, _ = build_demo_store(work)
    config = load_config(
        env={},
        overrides={
            "store": str(store.root),
            "collection": "demo",
            "audit.sqlite_path": str(work / "audit.sqlite"),
        },
    )
    ctx = PipelineContext(config, store_override=store)
    pipe = Pipeline(ctx)
    answers = {q: pipe.run(q).response.answer for q, _ in PAIRS}  # type: ignore[union-attr]
    for q, f in PAIRS:  # warm-up
        pipe.run(f, history=[ConversationTurn(question=q, answer=answers[q])])
    single: list[float] = []
    follow: list[float] = []
    statuses: dict[str, str] = {}
    for _ in range(a.rounds):
        for q, f in PAIRS:
            t0 = time.perf_counter_ns()
            pipe.run(q)
            single.append((time.perf_counter_ns() - t0) / 1e6)
            hist = [ConversationTurn(question=q, answer=answers[q])]
            t0 = time.perf_counter_ns()
            state = pipe.run(f, history=hist)
            follow.append((time.perf_counter_ns() - t0) / 1e6)
            statuses[f] = state.response.status.value  # type: ignore[union-attr]
    # Quality, not timing: the sample-corpus conversations of the hand-written check set.
    checks = [c for c in load_checks(CHECKS) if c.corpus == "sample"]
    outcomes = [o for c in checks for o in run_check(pipe, c)]
    failed = [f"{o.id}: {'; '.join(o.problems)}" for o in outcomes if o.problems]
    ctx.close()
    env = {
        **os.environ,
        "CITEBOUND_STORE": str(store.root),
        "CITEBOUND_COLLECTION": "demo",
        "CITEBOUND_AUDIT_SQLITE_PATH": str(work / "cold-audit.sqlite"),
    }
    q, f = PAIRS[0]
    cold_ask = [_cold(["ask", q], "", env) for _ in range(a.cold)]
    cold_chat = [_cold(["chat"], f"{q}\n{f}\n", env) for _ in range(a.cold)]
    result = {
        "rounds": a.rounds,
        "pairs": len(PAIRS),
        "single_shot_median_ms": round(statistics.median(single), 2),
        "follow_up_median_ms": round(statistics.median(follow), 2),
        "ratio": round(statistics.median(follow) / statistics.median(single), 3),
        "follow_up_statuses": statuses,
        "checks": f"{len(outcomes) - len(failed)}/{len(outcomes)} turns of {len(checks)} "
        "sample-corpus conversations pass",
        "checks_failed": failed,
        "cold_ask_one_question_median_ms": round(statistics.median(cold_ask), 1),
        "cold_chat_two_turns_median_ms": round(statistics.median(cold_chat), 1),
    }
    print(json.dumps(result, indent=2))
    if a.json:
        a.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
