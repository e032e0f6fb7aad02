"""Retrieval quality on a SciFact subset (train qrels): the real models on real data."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from retrieve_helpers import policy_with

from citebound.eval.beir import iter_corpus, load_qrels, load_queries
from citebound.eval.metrics import mean_metric
from citebound.index import update_indexes
from citebound.index.embedder import OnnxEmbedder
from citebound.retrieve import Retriever
from citebound.store.memory import MemoryStore


@pytest.mark.data
@pytest.mark.slow
def test_scifact_subset_quality(
    shared_dataset: Callable[[str], Path], embedder: OnnxEmbedder, tmp_path: Path
) -> None:
    data = shared_dataset("scifact")
    qrels = dict(itertools.islice(load_qrels(data, "train").items(), 30))
    queries = load_queries(data)
    relevant = {d for rel in qrels.values() for d in rel}
    store = MemoryStore(tmp_path)
    distractors = 0
    for doc, chunk in iter_corpus(data / "corpus.jsonl"):
        if doc.knowledge_id in relevant or distractors < 150:
            distractors += doc.knowledge_id not in relevant
            store.upsert_document(doc, [chunk])
    update_indexes(store, "default", embedder=embedder)
    retriever = Retriever(store, embedder=embedder)
    scores = {}
    for mode in ("lexical", "dense", "hybrid"):
        pol = policy_with(mode=mode, top_k=100, per_hit_neighbors=0)
        runs = {
            q: [r.knowledge_id for r in retriever.retrieve(queries[q], policy=pol).results]
            for q in qrels
        }
        scores[mode] = mean_metric(runs, qrels, "ndcg", 10)
    assert scores["lexical"] > 0.6 and scores["dense"] > 0.6
    assert scores["hybrid"] >= max(scores["lexical"], scores["dense"]) - 0.03, scores
