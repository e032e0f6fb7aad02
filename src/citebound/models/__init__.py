"""Models citebound ships inside the package, the one way a model file becomes a session, and
their file hashes.

Each shipped model is a folder beside this file holding `model.onnx` (int8), `tokenizer.json`,
`config.json` and the `MODEL_CARD.md` that says how `make models` rebuilt it:

- `verifier/`: the support verifier (validate/verifier.py), P(the cited evidence supports
  the sentence).

`$CITEBOUND_VERIFIER_DIR`, when set, names another folder of that layout to use as the
built-in verifier (`verifier_dir`): a model a training run exported (training/README.md) can
be measured and tested before it ships. The audit names whichever model judged
(`name@sha256:<hex>`), so a record says which one it was.

`session` is the one onnxruntime session set-up every model of the package uses (the embedder,
the int8 pre-scan, the reranker, the NLI verifier): CPU provider, the caller's thread count
(results do not depend on it), no spinning threads, which on a 2-core host would steal the cores
the rest of the request needs, and a ConfigError naming a missing or unreadable model file
(`models/onnx_session.py`).
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

from citebound.models.onnx_session import SessionSettings, session

MODELS_DIR = Path(__file__).resolve().parent
VERIFIER_DIR = MODELS_DIR / "verifier"
VERIFIER_DIR_ENV = "CITEBOUND_VERIFIER_DIR"


def verifier_dir() -> Path:
    """The built-in verifier's folder: `$CITEBOUND_VERIFIER_DIR` when set, else the one the
    package ships (`VERIFIER_DIR`). Read on every call, so a process may switch it."""
    override = os.environ.get(VERIFIER_DIR_ENV, "").strip()
    return Path(override).expanduser().resolve() if override else VERIFIER_DIR


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
    "SessionSettings",
    "file_sha256",
    "session",
    "verifier_dir",
]
