"""`batch eval` on real Spark: the benchmarks' metric definitions, independent of partitioning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from batch_helpers import batch_config

from citebound.audit.delta import DeltaAuditSink
from citebound.audit.location import table_location
from citebound.batch.evaluate import eval_batch, read_in_corpus, read_qrels
from citebound.batch.tables import read_delta_arrow, read_questions
from citebound.errors import ConfigError
from citebound.eval.metrics import mean_metric
from citebound.sample_corpus.questions import DEMO_QUESTIONS

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_eval_metrics_match_the_definitions(
    spark: Any, demo_store_dir: Path, tmp_path: Path
) -> None:
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        "".join(
            json.dumps({"_id": q.id, "text": q.text, "in_corpus": q.kind == "answerable"}) + "\n"
            for q in DEMO_QUESTIONS
        )
    )
    # Judgments: the document each answerable question's answer comes from (its source file).
    from citebound.store.sqlite import SqliteStore

    with SqliteStore(demo_store_dir) as store:
        by_source = {Path(d.source_path).name: d.knowledge_id for d in store.list_documents("demo")}
    qrels_path = tmp_path / "qrels.tsv"
    lines = ["query-id\tcorpus-id\tscore"] + [
        f"{q.id}\t{by_source[q.source]}\t1" for q in DEMO_QUESTIONS if q.source in by_source
    ]
    qrels_path.write_text("\n".join(lines) + "\n")
    qrels = read_qrels(qrels_path)
    assert len(qrels) >= 5
    questions = read_questions(qfile)
    config = batch_config(demo_store_dir)
    a = eval_batch(
        spark,
        questions,
        config,
        table_location(tmp_path / "a"),
        qrels=qrels,
        in_corpus=read_in_corpus(qfile),
        partitions=1,
    )
    b = eval_batch(
        spark,
        questions,
        config,
        table_location(tmp_path / "b"),
        qrels=qrels,
        in_corpus=read_in_corpus(qfile),
        partitions=3,
    )
    strip = {"seconds", "out_uri", "audit_uri"}
    assert a.model_dump(exclude=strip) == b.model_dump(exclude=strip)
    # Every pipeline run is audited once, like a batch answer row.
    records = DeltaAuditSink(a.audit_uri).records()
    assert a.audit_records == len(questions)
    assert sorted(r.request_id for r in records) == [rid for rid, _ in questions]
    with pytest.raises(ConfigError, match="already holds"):
        eval_batch(spark, questions, config, table_location(tmp_path / "a"), qrels=qrels)
    rows = read_delta_arrow(table_location(a.out_uri)).to_pylist()
    runs = {r["request_id"]: r["ranking"] for r in rows}
    assert a.ndcg_at_10 == pytest.approx(mean_metric(runs, qrels, "ndcg", 10))
    assert a.recall_at_100 == pytest.approx(mean_metric(runs, qrels, "recall", 100))
    assert a.ndcg_at_10 is not None and a.ndcg_at_10 > 0.5  # the demo corpus is easy
    n_out = sum(q.kind != "answerable" for q in DEMO_QUESTIONS)
    assert (a.n_out, a.n_in) == (n_out, len(DEMO_QUESTIONS) - n_out)
    refused_out = sum(
        r["refused_before_llm"]
        for r in rows
        if r["request_id"] in {q.id for q in DEMO_QUESTIONS if q.kind != "answerable"}
    )
    assert a.refusal_rate == refused_out / n_out
    assert a.answered_rate is not None and a.answered_rate > 0.5
