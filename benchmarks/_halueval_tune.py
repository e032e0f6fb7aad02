"""Index one half of HaluEval QA dev for `tune_answerer.py capture --halueval`.

The tune set's rules (the halves, `paragraphs`, `in_corpus_answer`) live in
`citebound.eval.halueval_tune`, where the tests check them.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from _e2e_squad import Item

from citebound.eval.halueval_tune import COLLECTION, FILE, in_corpus_answer, load, paragraphs
from citebound.ingest import ingest_paths
from citebound.store.sqlite import SqliteStore
from citebound.text.terms import terms

__all__ = ["COLLECTION", "FILE", "build"]


def build(folder: Path, work: Path, swap: bool = False) -> tuple[SqliteStore, list[Item]]:
    """Index one half's knowledge under `work`; return the store and the questions to ask
    (kind "in": indexed half, "out": the other half, "dup": other half but answered)."""
    items = load(folder)
    indexed = [i for i in range(len(items)) if i % 2 == (1 if swap else 0)]
    outside = [i for i in range(len(items)) if i % 2 == (0 if swap else 1)]
    docs = work / "docs" / f"halueval_qa_{'odd' if swap else 'even'}.jsonl"
    docs.parent.mkdir(parents=True, exist_ok=True)
    with docs.open("w", encoding="utf-8") as fh:
        for i in indexed:
            rec = {"id": f"halueval-qa-{i}", "text": paragraphs(items[i]["knowledge"])}
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    store = SqliteStore(work / "store")
    t0 = time.perf_counter()
    report = ingest_paths(store, [docs], collection=COLLECTION, progress=False)
    print(
        f"HaluEval QA: {len(indexed)} knowledge passages -> {report.chunks_total} chunks "
        f"({report.chunks_written} written now) in {time.perf_counter() - t0:.1f}s"
    )
    raw = [items[i]["knowledge"] for i in indexed]
    said = [terms(t) for t in raw]
    out: list[Item] = []
    for i in indexed:
        out.append(_item(i, items[i], "in"))
    for i in outside:
        dup = in_corpus_answer(items[i], said, raw)
        out.append(_item(i, items[i], "dup" if dup else "out"))
    counts = {k: sum(x.kind == k for x in out) for k in ("in", "out", "dup")}
    print(
        f"questions: {counts['in']} answerable, {counts['out']} out of corpus, "
        f"{counts['dup']} of the other half left out (an indexed passage holds the answer)"
    )
    return store, out


def _item(i: int, item: dict[str, str], kind: str) -> Item:
    # `article` 0: not a SQuAD article; the capture's split is decided by its file name.
    return Item(f"hq{i}", 0, item["question"], (item["right_answer"],), kind)
