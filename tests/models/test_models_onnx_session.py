"""One onnxruntime session set-up for every model (models/onnx_session.py): every session in
src/ is made there, its settings are pinned, and a missing or damaged model file is a
ConfigError that says what to do."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import citebound
from citebound.errors import ConfigError
from citebound.models import SessionSettings, session
from citebound.testing.tiny_cross_encoder import write_tiny_cross_encoder

SRC = Path(citebound.__file__).parent
HELPER = SRC / "models" / "onnx_session.py"
# What only the helper may write: a session, its options, and the settings it owns.
OWNED = re.compile(
    r"InferenceSession\(|SessionOptions\(|add_session_config_entry\(|providers\s*="
    r"|\.(intra_op_num_threads|inter_op_num_threads|graph_optimization_level"
    r"|optimized_model_filepath|log_severity_level|execution_mode)\s*="
)


def _hits() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        lines = path.read_text("utf-8").splitlines()
        hits = [line.strip() for line in lines if OWNED.search(line)]
        if hits:
            found[path.relative_to(SRC).as_posix()] = hits
    return found


def test_every_session_in_src_is_made_by_the_helper() -> None:
    found = _hits()
    assert set(found) == {"models/onnx_session.py"}, found
    constructions = [h for h in found["models/onnx_session.py"] if "InferenceSession(" in h]
    assert len(constructions) == 1  # open_session, which session() and the cache call


@pytest.mark.parametrize(
    "loader",
    [
        "index/embedder.py",
        "index/quantized.py",
        "rerank/onnx_cross_encoder.py",
        "validate/nli.py",
    ],
)
def test_each_loader_calls_the_helper(loader: str) -> None:
    text = (SRC / loader).read_text("utf-8")
    assert "from citebound.models import" in text and re.search(r"\bsession\(", text)


def test_settings_are_the_ones_every_loader_had() -> None:
    ort = pytest.importorskip("onnxruntime")
    opts = SessionSettings(threads=2, inter_op_threads=0).options()
    assert (opts.intra_op_num_threads, opts.inter_op_num_threads) == (2, 0)
    assert opts.log_severity_level == 3
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert opts.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert opts.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL  # no inter-op threads
    assert not opts.optimized_model_filepath
    off = SessionSettings().options(optimize=False)
    assert off.graph_optimization_level == ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert (off.intra_op_num_threads, off.inter_op_num_threads) == (1, 1)


def test_the_embedders_cache_key_is_unchanged() -> None:
    # The settings part of the key of entries written before the helper: they stay valid.
    embedder = SessionSettings(threads=1, inter_op_threads=0)
    assert embedder.cache_identity() == {"intra_op_num_threads": "1", "spinning": "0"}
    assert SessionSettings(threads=1, inter_op_threads=1).cache_identity() != (
        embedder.cache_identity()
    )


def test_a_missing_model_file_names_the_file_and_the_setting(tmp_path: Path) -> None:
    missing = tmp_path / "nli" / "model.onnx"
    with pytest.raises(ConfigError) as err:
        session(missing, field="validation.nli_model_path")
    message = str(err.value)
    assert message.startswith(f"ONNX model file not found: {missing}")
    assert "`validation.nli_model_path`" in message and "export the model again" in message
    assert err.value.field == "validation.nli_model_path"
    assert err.value.source == str(missing)


@pytest.mark.parametrize("cached", [False, True])
@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_damaged_model_file_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str, cached: bool
) -> None:
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("CITEBOUND_CACHE_DIR", str(tmp_path / "cache"))
    model = write_tiny_cross_encoder(tmp_path / "ce") / "model.onnx"
    good = model.read_bytes()
    model.write_bytes({"garbage": b"not a protobuf", "truncated": good[:200], "empty": b""}[damage])
    with pytest.raises(ConfigError) as err:
        session(model, optimized_cache=cached, source="the export")
    message = str(err.value)
    assert message.startswith(f"cannot load ONNX model {model}: ")
    assert "export it again" in message
    assert err.value.source == "the export" and err.value.field is None
    assert not (tmp_path / "cache" / "onnx").exists() or not any(
        p.name[0] != "." for p in (tmp_path / "cache" / "onnx").iterdir()
    )  # nothing cached from a file that does not load


def test_importing_the_helper_does_not_import_onnxruntime() -> None:
    code = (
        "import sys, json; import citebound.models, citebound.models.onnx_session; "
        "print(json.dumps('onnxruntime' in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert json.loads(out.stdout) is False, out.stderr
