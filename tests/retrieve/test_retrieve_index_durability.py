"""Index files reach the disk before they are renamed into place, and a killed build's
temporaries are cleared by the next build (index/build.py writes through cache_dir)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from citebound.index import index_dir, update_indexes
from citebound.index.embedder import OnnxEmbedder
from citebound.store.memory import MemoryStore

Build = Callable[..., MemoryStore]
FILES = ("vectors.npy", "rows.json", "manifest.json")


def test_every_index_file_is_fsynced_before_its_rename(
    build_store: Build, embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rename of an unflushed file can survive a power cut while its data does not: the
    manifest would then name a version whose vectors or rows are empty on disk."""
    store = build_store()
    synced: set[str] = set()
    renamed: dict[str, str] = {}  # final name -> the temporary renamed onto it
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        synced.add(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        renamed[Path(dst).name] = str(Path(src).resolve())
        assert str(Path(src).resolve()) in synced, f"{dst} renamed before its data was flushed"
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    update_indexes(store, "default", embedder=embedder)
    assert set(FILES) <= set(renamed)
    directory = index_dir(store.root, "default").resolve()
    assert str(directory) in synced  # the folder's entries (the renames) are flushed too


def test_a_killed_builds_temporaries_are_removed_by_the_next_build(
    build_store: Build, embedder: OnnxEmbedder
) -> None:
    store = build_store()
    directory = index_dir(store.root, "default")
    directory.mkdir(parents=True)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = directory / f".tmp-{int(gone.stdout)}-killed01"
    dead.write_bytes(b"half a matrix")
    update_indexes(store, "default", embedder=embedder)
    assert not dead.exists()
    assert {p.name for p in directory.iterdir() if p.name.startswith(".tmp")} == set()
