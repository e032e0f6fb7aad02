"""Embedding passes per process follow $OMP_NUM_THREADS (set by Spark in its Python workers to
the task's cores), so executor workers do not fight over the same cores."""

from __future__ import annotations

import os

import pytest

from citebound.index.embedder import default_workers


def test_default_workers_respect_omp_num_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    cores = max(1, min(4, os.cpu_count() or 1))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert default_workers() == cores
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert default_workers() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "64")
    assert default_workers() == cores
    monkeypatch.setenv("OMP_NUM_THREADS", "junk")
    assert default_workers() == cores
