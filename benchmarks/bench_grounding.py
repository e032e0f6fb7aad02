"""Grounding benchmark on HaluEval QA (../shared/data/halueval-dev).

For every item the knowledge is the single evidence chunk C0; the right and the hallucinated
answer are each validated as `<answer> [C0].` by the real R5 validator with a support floor
`tau`. Flagging the hallucinated answer is the positive class. The trivial baseline (flag when
some answer word is absent from the knowledge) is measured in the same run.

`tau` is chosen on the first half of the items (dev) and reported on the second half (test),
so the headline number is not tuned on the data it reports.

    PYTHONPATH=src python benchmarks/bench_grounding.py [--limit N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

from citebound.eval.data import dataset_dir
from citebound.eval.grounding import (
    HaluItem,
    Scores,
    baseline_flags,
    load_halueval,
    score,
    support_policy,
    validator_flags,
)

TAUS = (0.5, 0.75, 0.9, 1.0)


def _row(name: str, s: Scores) -> str:
    n = 2 * (s.tp + s.fn)
    return f"{name:<28} {s.accuracy:>8.3f} {s.precision:>9.3f} {s.recall:>7.3f}   n={n}"


def _median_us(items: list[HaluItem], flag: Callable[[HaluItem, str], bool]) -> float:
    times = []
    for item in items:
        t0 = time.perf_counter()
        flag(item, item.hallucinated)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="Use the first N items only.")
    args = parser.parse_args()
    folder = dataset_dir("halueval-dev")
    if folder is None:
        print("skipped: ../shared/data/halueval-dev is absent (set CITEBOUND_SHARED_DATA)")
        return 0
    items = load_halueval(folder, args.limit)
    half = len(items) // 2
    dev, test = items[:half], items[half:]

    def checker(tau: float) -> Callable[[HaluItem, str], bool]:
        policy = support_policy(tau)
        return lambda item, answer: validator_flags(item, answer, policy)

    print(f"HaluEval QA: {len(items)} items, dev={len(dev)} test={len(test)}")
    print(f"{'dev sweep':<28} {'accuracy':>8} {'precision':>9} {'recall':>7}")
    dev_scores = {tau: score(dev, checker(tau)) for tau in TAUS}
    for tau, s in dev_scores.items():
        print(_row(f"validator tau={tau}", s))
    best = max(TAUS, key=lambda t: (dev_scores[t].accuracy, -t))
    print(f"\nchosen on dev: tau={best}")
    print(f"{'test':<28} {'accuracy':>8} {'precision':>9} {'recall':>7}")
    print(_row(f"validator tau={best}", score(test, checker(best))))
    print(_row("baseline all-words-present", score(test, baseline_flags)))
    half_n = len(test) // 2  # a coin flip: half of each class flagged
    coin = Scores(tp=half_n, fp=half_n, tn=len(test) - half_n, fn=len(test) - half_n)
    print(_row("chance (coin flip)", coin))
    sample = test[:200]
    v_us = _median_us(sample, checker(best))
    b_us = _median_us(sample, baseline_flags)
    print(
        f"\nmedian time per answer: validator {v_us:.0f} µs, baseline {b_us:.0f} µs "
        f"(ratio {v_us / b_us:.1f}x, same run, {len(sample)} answers)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
