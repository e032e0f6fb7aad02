"""Ranking metrics with BEIR/trec_eval conventions: nDCG@k (graded gains, log2 discount) and
Recall@k (relevant = relevance > 0). Duplicate doc ids in a ranking count once (first position).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def _dedupe(ranking: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ranking))


def ndcg_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """nDCG@k: Σ rel_i / log2(i + 2) over the top k, divided by the ideal ordering's value."""
    gains = [qrels.get(d, 0) for d in _dedupe(ranking)[:k]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g > 0)
    ideal = sorted((g for g in qrels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Share of the relevant documents found in the top k."""
    relevant = {d for d, g in qrels.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant & set(_dedupe(ranking)[:k])) / len(relevant)


def mean_metric(
    runs: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, int]],
    metric: str,
    k: int,
) -> float:
    """Mean of `ndcg` or `recall` @k over the queries in `qrels` (a missing run scores 0)."""
    fn = ndcg_at_k if metric == "ndcg" else recall_at_k
    if metric not in ("ndcg", "recall"):
        raise ValueError(f"unknown metric '{metric}'")
    if not qrels:
        return 0.0
    return sum(fn(runs.get(q, []), rel, k) for q, rel in qrels.items()) / len(qrels)
