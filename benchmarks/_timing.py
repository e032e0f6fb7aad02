"""Shared timing helpers for benchmarks: medians and p99 from repeated runs."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    median_ms: float
    p99_ms: float
    runs: int


def measure(fn: Callable[[], object], *, runs: int = 300, warmup: int = 20) -> Timing:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - t0) / 1e6)
    samples.sort()
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    return Timing(statistics.median(samples), p99, runs)
