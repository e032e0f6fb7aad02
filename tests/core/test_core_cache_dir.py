"""Start-up cache writes (citebound.cache_dir): whole or absent after a killed writer, pruned
to the most recently used entries, and nothing but citebound's own names removed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from citebound import cache_dir
from citebound.cache_dir import KEEP_ENTRIES, STALE_TEMP_SECONDS, TEMP_PREFIX, prune, write_atomic


def _ours(path: Path) -> bool:
    return path.name.startswith(("old-", "entry", "new", "a", "b"))


# A writer SIGKILLed at the last moment before its entry appears: when the data is written and
# flushed and only the rename is left (the worst place a kill can land).
KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from citebound import cache_dir
def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
os.replace = os.rename = killed
{call}
"""


def _killed(call: str, tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER.format(call=call), str(tmp_path)],
        capture_output=True,
        timeout=300,
    )
    assert out.returncode == -9, out.stderr


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_killed_file_write_leaves_no_partial_entry(tmp_path: Path) -> None:
    _killed("cache_dir.write_atomic(Path(sys.argv[1]) / 'entry', b'x' * 1_000_000)", tmp_path)
    assert not (tmp_path / "entry").exists()
    (left,) = tmp_path.iterdir()  # the killed writer's temporary, under its own name
    assert left.name.startswith(TEMP_PREFIX) and left.stat().st_size == 1_000_000
    # the next writer writes the entry whole and removes the temporary at once: its writer
    # (the pid in its name) is gone
    write_atomic(tmp_path / "entry", b"whole")
    assert [p.name for p in prune(tmp_path, tmp_path / "entry", _ours)] == [left.name]
    assert [p.name for p in tmp_path.iterdir()] == ["entry"]
    assert (tmp_path / "entry").read_bytes() == b"whole"


def test_a_killed_folder_commit_leaves_no_partial_entry(tmp_path: Path) -> None:
    call = """
tmp = Path(sys.argv[1]) / (cache_dir.temp_prefix() + "x")
tmp.mkdir()
(tmp / "weights.bin").write_bytes(b"w" * 100_000)
cache_dir.commit_dir(tmp, Path(sys.argv[1]) / "entry")
"""
    _killed(call, tmp_path)
    (left,) = tmp_path.iterdir()
    assert left.name.startswith(TEMP_PREFIX) and left.name.endswith("-x")
    (tmp_path / "entry").mkdir()  # the next start's entry: its prune removes the temporary
    assert prune(tmp_path, tmp_path / "entry", _ours) == [left]


def test_write_atomic_removes_its_temporary_when_it_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_atomic(tmp_path / "entry", b"data")
    assert list(tmp_path.iterdir()) == []


def test_prune_keeps_the_most_recently_used_entries(tmp_path: Path) -> None:
    names = [f"old-{i}" for i in range(KEEP_ENTRIES + 3)]
    for age, name in enumerate(names, start=1):  # old-0 is the most recently used
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.onnx").write_bytes(b"m")
        _age(tmp_path / name, age * 100)
    fresh_temp = tmp_path / (cache_dir.temp_prefix() + "live")  # this process: alive
    fresh_temp.write_bytes(b"a write in progress")
    foreign = [tmp_path / "hub", tmp_path / "other.txt"]  # not citebound's: never removed
    foreign[0].mkdir()
    foreign[1].write_bytes(b"x")
    for path in foreign:
        _age(path, 100_000)
    new = tmp_path / "new"
    write_atomic(new, b"n")
    _age(new, 10_000)  # the entry just written stays whatever its mtime
    removed = prune(tmp_path, new, _ours)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == sorted([fresh_temp.name, "new", "hub", "other.txt", *names[: KEEP_ENTRIES - 1]])
    assert sorted(p.name for p in removed) == sorted(names[KEEP_ENTRIES - 1 :])


def test_touch_marks_an_entry_as_used(tmp_path: Path) -> None:
    a, b, new = tmp_path / "a", tmp_path / "b", tmp_path / "new"
    for p in (a, b, new):
        p.write_bytes(b"x")
    _age(a, 200)
    _age(b, 100)
    cache_dir.touch(a)  # read by a cold start: now the most recent
    prune(tmp_path, new, _ours, entries=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "new"]


def test_the_rank_table_cache_drops_tables_of_older_installs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("quicktok")
    from citebound.text import bpe_py

    monkeypatch.setenv("CITEBOUND_CACHE_DIR", str(tmp_path))
    folder = tmp_path / "bpe"
    folder.mkdir()
    old = [f"cl100k-{i:024x}.marshal" for i in range(KEEP_ENTRIES + 2)]
    for i, name in enumerate(old):  # tables of quicktok or Python versions since replaced
        (folder / name).write_bytes(b"stale")
        _age(folder / name, 1000 + i)
    (folder / "cl100k-mine.marshal").write_bytes(b"not ours")  # not a name citebound writes
    _age(folder / "cl100k-mine.marshal", 100_000)
    ranks = bpe_py.load_ranks(bpe_py._data_dir())
    mine = {*old, "cl100k-mine.marshal"}
    (written,) = (p.name for p in folder.iterdir() if p.name not in mine)
    kept_old = old[: KEEP_ENTRIES - 1]  # the newest ones
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [written, "cl100k-mine.marshal", *kept_old]
    )
    assert bpe_py.load_ranks(bpe_py._data_dir()) == ranks  # read back from the new entry


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def test_temporaries_are_removed_by_writer_liveness_and_legacy_ones_by_age(
    tmp_path: Path,
) -> None:
    keep = tmp_path / "entry"
    keep.write_bytes(b"e")
    dead = tmp_path / f"{TEMP_PREFIX}{_dead_pid()}-abcd1234"
    live = tmp_path / f"{TEMP_PREFIX}{os.getpid()}-abcd1234"
    legacy_fresh = tmp_path / f"{TEMP_PREFIX}abcd1234"  # before the pid was in the name
    legacy_stale = tmp_path / f"{TEMP_PREFIX}wxyz5678"
    for path in (dead, live, legacy_fresh, legacy_stale):
        path.mkdir()
    _age(legacy_stale, STALE_TEMP_SECONDS + 60)
    assert sorted(p.name for p in prune(tmp_path, keep, _ours)) == sorted(
        [dead.name, legacy_stale.name]
    )
    assert live.exists() and legacy_fresh.exists()
    _age(live, STALE_TEMP_SECONDS + 60)  # its pid was reused: an hour is never a live write
    assert prune(tmp_path, keep, _ours) == [live]


def test_the_rank_table_cache_removes_a_killed_writers_temporary_on_a_hit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("quicktok")
    from citebound.text import bpe_py

    monkeypatch.setenv("CITEBOUND_CACHE_DIR", str(tmp_path))
    ranks = bpe_py.load_ranks(bpe_py._data_dir())  # writes the table
    dead = tmp_path / "bpe" / f"{TEMP_PREFIX}{_dead_pid()}-abcd1234"
    dead.write_bytes(b"half a table")
    assert bpe_py.load_ranks(bpe_py._data_dir()) == ranks  # a hit: nothing written
    assert not dead.exists()
