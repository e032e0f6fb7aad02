"""The session setup for ONNX models the package loads, and their file hashes.

A model citebound ships will be a folder beside this file (`model.onnx`, `tokenizer.json`,
`config.json`, `MODEL_CARD.md`; `make models`, training/README.md); none ships yet.

`session` is the one onnxruntime session set-up every model of the package uses (the embedder,
the int8 pre-scan, the reranker, the NLI verifier): CPU provider, the caller's thread count
(results do not depend on it), no spinning threads, which on a 2-core host would steal the cores
the rest of the request needs, and a ConfigError naming a missing or unreadable model file
(`models/onnx_session.py`).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from citebound.models.onnx_session import SessionSettings, session


@lru_cache(maxsize=8)
def file_sha256(path: Path) -> str:
    """sha256 of a model file, read once per process (what the audit records)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


__all__ = ["SessionSettings", "file_sha256", "session"]
