"""Real Spark for the batch tests: one local[2] session per test session, over the shared demo
store (`demo_store_dir`, tests/conftest.py).

Skips (with the reason) only when PySpark or a Java runtime is missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from citebound.batch.session import java_missing_reason

pytest.importorskip("pyspark", reason="the Spark suite needs pip install 'citebound[spark]'")
pytest.importorskip("deltalake", reason="the Spark suite needs citebound[audit-delta]")
_why = java_missing_reason()
if _why is not None:
    pytest.skip(_why, allow_module_level=True)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from citebound.batch.session import spark_session

    session = spark_session("local[2]", app_name="citebound-tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def questions_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo questions (answerable, unanswerable, injection) plus paraphrases: 3x as many
    rows, so 4 partitions each hold several questions."""
    from citebound.sample_corpus.questions import DEMO_QUESTIONS

    path = tmp_path_factory.mktemp("questions") / "questions.jsonl"
    rows = []
    for q in DEMO_QUESTIONS:
        rows.append({"_id": q.id, "text": q.text})
        rows.append({"_id": f"{q.id}-b", "text": q.text.rstrip("?") + " please?"})
        rows.append({"_id": f"{q.id}-c", "text": "In the manuals: " + q.text})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def two_runs(
    spark: Any, demo_store_dir: Path, questions_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Any, Any, list[tuple[str, str]]]:
    """The demo questions answered twice (extractive provider, run id `r`): 1 and 4 partitions."""
    from batch_helpers import batch_config

    from citebound.audit.location import table_location
    from citebound.batch.answer import answer_batch
    from citebound.batch.tables import read_questions

    out = tmp_path_factory.mktemp("answer")
    questions = read_questions(questions_file)
    config = batch_config(demo_store_dir)
    one = answer_batch(
        spark, questions, config, table_location(out / "p1"), run_id="r", partitions=1
    )
    four = answer_batch(
        spark, questions, config, table_location(out / "p4"), run_id="r", partitions=4
    )
    return one, four, questions
