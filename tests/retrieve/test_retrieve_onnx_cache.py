"""The per-machine cache of the optimised ONNX graph (models/onnx_cache.py) never changes a
vector: a cached session embeds bit for bit like the original model, and a bad entry is
dropped and rebuilt rather than used."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import citebound.models.onnx_cache as onnx_cache
from citebound.index.embedder import OnnxEmbedder, minilm_paths

SAMPLE = Path(onnx_cache.__file__).parents[1] / "sample_corpus"


def _texts() -> list[str]:
    docs = [p.read_text("utf-8") for p in sorted(SAMPLE.rglob("*.md"))]
    paragraphs = [p for d in docs for p in d.split("\n\n") if p.strip()]
    return [*paragraphs[:48], "What is the CX-9 safety valve set pressure?", "", "pump"]


def _embedder() -> OnnxEmbedder:
    model, tokenizer = minilm_paths()
    return OnnxEmbedder(model, tokenizer, name="cache-test")


def _entries(root: Path) -> list[Path]:
    return sorted(p for p in (root / "onnx").glob("*") if not p.name.startswith("."))


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    with pytest.MonkeyPatch.context() as m:
        m.setenv("CITEBOUND_CACHE_DIR", "off")
        return _embedder().embed(_texts())


def test_cached_graph_embeds_bit_for_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: np.ndarray
) -> None:
    monkeypatch.setenv("CITEBOUND_CACHE_DIR", str(tmp_path))
    first = _embedder()  # miss: optimises the model and writes the entry
    (entry,) = _entries(tmp_path)
    assert {p.name for p in entry.iterdir()} == {"model.onnx", "weights.bin", "probe.json"}
    second = _embedder()  # hit: the saved graph, optimisation off
    assert Path(second._session._model_path) == entry / "model.onnx"
    assert np.array_equal(first.embed(_texts()), reference)
    assert np.array_equal(second.embed(_texts()), reference)


def test_a_bad_entry_is_dropped_and_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: np.ndarray
) -> None:
    monkeypatch.setenv("CITEBOUND_CACHE_DIR", str(tmp_path))
    _embedder()
    (entry,) = _entries(tmp_path)
    good = json.loads((entry / "probe.json").read_text("utf-8"))
    # a graph whose probe output differs (another CPU, a damaged file) is never used
    (entry / "probe.json").write_text(json.dumps({"probe_sha256": "0" * 64}), "utf-8")
    fallback = _embedder()
    assert Path(fallback._session._model_path) != entry / "model.onnx"
    assert np.array_equal(fallback.embed(_texts()), reference)
    assert json.loads((entry / "probe.json").read_text("utf-8")) == good  # rewritten
    # a truncated weights file: the session cannot load it, same fallback
    (entry / "weights.bin").write_bytes(b"\0" * 16)
    assert np.array_equal(_embedder().embed(_texts()), reference)


def test_cache_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEBOUND_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert onnx_cache.cache_root() is None
    _embedder()
    # (onnxruntime itself may leave a Microsoft/ folder there on its first session)
    assert not (tmp_path / "citebound").exists()


def test_no_home_directory_means_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CITEBOUND_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert onnx_cache.cache_root() is None
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
    assert onnx_cache.cache_root() == Path("/somewhere/citebound")


def test_writing_an_entry_prunes_entries_of_older_installs_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citebound.cache_dir import KEEP_ENTRIES

    monkeypatch.setenv("CITEBOUND_CACHE_DIR", str(tmp_path))
    old = [tmp_path / "onnx" / f"{i:024x}" for i in range(KEEP_ENTRIES + 1)]
    for age, entry in enumerate(old, start=1):  # another model file or onnxruntime version
        entry.mkdir(parents=True)
        (entry / "weights.bin").write_bytes(b"\0" * 16)
        (entry / "probe.json").write_text("{}", "utf-8")
        os.utime(entry, (1e9 - age, 1e9 - age))
    # CITEBOUND_CACHE_DIR=~/.cache makes the folder ~/.cache/onnx, the ONNX hub's: its files,
    # older than every entry, are not ours and stay.
    foreign = [tmp_path / "onnx" / n for n in ("hub", f"{9:024x}", "notes.txt")]
    foreign[0].mkdir()
    (foreign[0] / "model.onnx").write_bytes(b"m")
    foreign[1].mkdir()  # an entry's name but no probe.json: not written by citebound
    foreign[2].write_text("x", "utf-8")
    for path in foreign:
        os.utime(path, (1e8, 1e8))
    _embedder()  # a miss: writes this install's entry, keeps the newest others
    names = {p.name for p in _entries(tmp_path)}
    kept_old = {old[i].name for i in range(KEEP_ENTRIES - 1)}  # the most recently used ones
    kept_foreign = {p.name for p in foreign}
    (new,) = names - kept_old - kept_foreign
    assert kept_old | kept_foreign < names and new not in {p.name for p in old}
    assert (tmp_path / "onnx" / new / "probe.json").is_file()
    assert (foreign[0] / "model.onnx").read_bytes() == b"m"


def test_a_killed_writers_temporary_is_removed_by_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A helper killed while writing the ~90 MB entry leaves its temporary; later starts hit
    the cache (and write nothing), so the hit removes it once its writer is gone."""
    import subprocess
    import sys

    monkeypatch.setenv("CITEBOUND_CACHE_DIR", str(tmp_path))
    _embedder()  # writes the entry
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = tmp_path / "onnx" / f".tmp-{int(gone.stdout)}-killed01"
    dead.mkdir()
    (dead / "weights.bin").write_bytes(b"\0" * 1024)
    live = tmp_path / "onnx" / f".tmp-{os.getpid()}-writing1"  # a write in progress
    live.mkdir()
    hit = _embedder()  # a hit: nothing written
    assert Path(hit._session._model_path).parent.name in {p.name for p in _entries(tmp_path)}
    assert not dead.exists() and live.exists()
