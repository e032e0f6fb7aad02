"""Models citebound ships inside the package, and the one way a model file becomes a session.

Each shipped model is a folder beside this file holding `model.onnx` (int8), `tokenizer.json`,
`config.json` and the `MODEL_CARD.md` that says how `make models` rebuilt it:

- `verifier/`: the support verifier (validate/verifier.py), P(the cited evidence supports
  the sentence).

`$CITEBOUND_VERIFIER_DIR`, when set, names another folder of that layout to use as the
built-in verifier (`verifier_dir`): a model a training run exported (training/README.md) can
be measured and tested before it ships. The audit names whichever model judged
(`name@sha256:<hex>`), so a record says which one it was.

`onnx_session` is the session setup every model of the package shares: CPU provider, a fixed
thread count (the result does not depend on it) and no spinning threads, which on a 2-core
host would steal the cores the rest of the request needs.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from citebound.errors import ConfigError

MODELS_DIR = Path(__file__).resolve().parent
VERIFIER_DIR = MODELS_DIR / "verifier"
VERIFIER_DIR_ENV = "CITEBOUND_VERIFIER_DIR"


def verifier_dir() -> Path:
    """The built-in verifier's folder: `$CITEBOUND_VERIFIER_DIR` when set, else the one the
    package ships (`VERIFIER_DIR`). Read on every call, so a process may switch it."""
    override = os.environ.get(VERIFIER_DIR_ENV, "").strip()
    return Path(override).expanduser().resolve() if override else VERIFIER_DIR


def onnx_session(model_file: Path, *, threads: int = 1, field: str | None = None) -> Any:
    """An onnxruntime InferenceSession on the CPU.

    Raises:
        ConfigError: the file is missing or not a loadable ONNX model.
    """
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return ort.InferenceSession(str(model_file), opts, providers=["CPUExecutionProvider"])
    except Exception as err:  # onnxruntime raises its own Fail/InvalidGraph/NoSuchFile types
        raise ConfigError(
            f"cannot load ONNX model {model_file}: {err}", field=field, source=str(model_file)
        ) from None


@lru_cache(maxsize=8)
def file_sha256(path: Path) -> str:
    """sha256 of a model file, read once per process (what the audit records)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


__all__ = [
    "MODELS_DIR",
    "VERIFIER_DIR",
    "VERIFIER_DIR_ENV",
    "file_sha256",
    "onnx_session",
    "verifier_dir",
]
