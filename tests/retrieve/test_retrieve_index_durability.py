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


KILL_BUILD = """
import os, signal, sys
from pathlib import Path
import citebound.index.build as build
from citebound.ingest import ingest_paths
from citebound.store import SqliteStore

where = sys.argv[3]
real_write, real_lexical = build.write_atomic, build.build_lexical

def write_atomic(path, data):
    if where == "manifest" and path.name == "manifest.json":
        os.kill(os.getpid(), signal.SIGKILL)  # new files written, the swap not made
    real_write(path, data)

def build_lexical(path, docs, analyzer):
    real_lexical(path, docs[: len(docs) // 2], analyzer)
    if where == "lexical":
        os.kill(os.getpid(), signal.SIGKILL)  # half a lexical index on disk
    real_lexical(path, docs, analyzer)

build.write_atomic, build.build_lexical = write_atomic, build_lexical
with SqliteStore(Path(sys.argv[1])) as store:
    ingest_paths(store, [Path(sys.argv[2])], progress=False)
"""


@pytest.mark.parametrize("where", ["manifest", "lexical"])
def test_a_build_killed_before_the_swap_leaves_the_last_complete_index_whole(
    tmp_path: Path, where: str
) -> None:
    """#34: the new version's files are written beside the one in force and swapped in by
    the manifest's rename, so a kill -9 at any point leaves the previous index whole (before,
    rows, vectors and lexical were overwritten in place ahead of the manifest)."""
    from citebound.contracts.enums import RetrievalStatus
    from citebound.index.build import read_manifest
    from citebound.ingest import ingest_paths
    from citebound.retrieve import Retriever
    from citebound.retrieve.loader import open_index
    from citebound.store import SqliteStore

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Pump\n\nThe ZQ-7 pump runs at 50 Hz.\n", encoding="utf-8")
    with SqliteStore(tmp_path / "store") as store:
        ingest_paths(store, [docs], progress=False)
        directory = index_dir(store.root, "default")
        before = read_manifest(directory)
        assert before is not None
    (docs / "b.md").write_text(
        "\n\n".join(f"# Valve {i}\n\nValve {i} opens at {i} bar." for i in range(30)),
        encoding="utf-8",
    )
    killed = subprocess.run(
        [sys.executable, "-c", KILL_BUILD, str(tmp_path / "store"), str(docs), where],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )
    assert killed.returncode == -9, killed.stderr
    with SqliteStore(tmp_path / "store") as store:
        assert read_manifest(directory) == before  # the old version is still in force
        loaded = open_index(
            store, "default", before.store_version, embedder=None, row_cache_size=16
        )
        assert len(loaded.chunk_ids) == before.num_chunks == loaded.lexical.num_docs
        assert len(loaded.vectors) == before.num_chunks
        # The store holds the new chunks, the index does not: the collection serves its last
        # complete index (it was FAILED "stale" until a full re-ingest), never none.
        assert store.index_version("default") != before.store_version
        served = Retriever(store).retrieve("How fast does the ZQ-7 pump run?")
        assert served.retrieval_status is RetrievalStatus.SUCCESS, served.error
        assert served.index_version == before.index_version
        assert any("50 Hz" in r.chunk_text for r in served.results)
        # The next ingest finishes the job and clears the killed build's temporaries.
        ingest_paths(store, [docs], progress=False)
        after = read_manifest(directory)
        assert after is not None and after.num_chunks > before.num_chunks
    assert not [p for p in directory.iterdir() if p.name.startswith(".tmp")]
