"""`batch revalidate` on real Spark: 0 changed verdicts with the same validator and policy;
after a policy change, exactly the changes single-process `audit replay` finds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from batch_helpers import batch_config, support_policy

from citebound.audit.delta import DeltaAuditSink
from citebound.audit.location import table_location
from citebound.audit.replay import replay
from citebound.batch.answer import answer_batch
from citebound.batch.revalidate import revalidate_batch
from citebound.batch.tables import read_delta_arrow, read_questions
from citebound.store.sqlite import SqliteStore
from citebound.testing import ScriptedLLMServer
from citebound.text.sanitize import safe_normalize_v1

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# Cites C0 but shares few words with any evidence: passes strict-v1 without a support floor,
# fails it with a floor of 0.9 lexical support per sentence.
LOOSE_ANSWER = "This is covered in the maintenance documentation [C0]."


def test_same_validator_changes_nothing(
    spark: Any, two_runs: tuple[Any, Any, Any], demo_store_dir: Path, tmp_path: Path
) -> None:
    one, _, questions = two_runs
    summary = revalidate_batch(
        spark,
        table_location(one.audit_uri),
        batch_config(demo_store_dir),
        table_location(tmp_path / "verdicts"),
        partitions=3,
    )
    assert summary.records == len(questions)
    assert summary.changed == 0 and summary.changes == {}
    assert summary.replayable == one.statuses["OK"] + _model_refusals(one.audit_uri)
    rows = read_delta_arrow(table_location(tmp_path / "verdicts")).to_pylist()
    assert len(rows) == len(questions) and all(r["policy_fingerprint_matches"] for r in rows)


def _model_refusals(audit_uri: str) -> int:
    return sum(
        1
        for r in DeltaAuditSink(audit_uri).records()
        if r.status.value == "NO_EVIDENCE" and r.raw_model_text is not None
    )


@pytest.fixture(scope="module")
def scripted_run(
    spark: Any, demo_store_dir: Path, questions_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    """The demo questions answered through a real OpenAI-compatible HTTP server on loopback
    that gives every request the same loosely supported answer."""
    out = tmp_path_factory.mktemp("scripted")
    lenient = support_policy(out.parent, 0.0)
    with ScriptedLLMServer(default_text=LOOSE_ANSWER) as server:
        config = batch_config(
            demo_store_dir,
            policy=str(lenient),
            **{
                "provider.name": "openai",
                "provider.base_url": server.base_url,
                "provider.model": "scripted",
            },
        )
        summary = answer_batch(
            spark, read_questions(questions_file), config, table_location(out), partitions=2
        )
    assert summary.statuses.get("OK", 0) > 0
    return summary, lenient


def test_policy_change_gives_the_expected_changes(
    spark: Any, scripted_run: Any, demo_store_dir: Path, tmp_path: Path
) -> None:
    summary, lenient = scripted_run
    audit = table_location(summary.audit_uri)
    same = revalidate_batch(
        spark,
        audit,
        batch_config(demo_store_dir, policy=str(lenient)),
        table_location(tmp_path / "same"),
    )
    assert same.changed == 0

    stricter = batch_config(demo_store_dir, policy=str(support_policy(tmp_path, 0.9)))
    changed = revalidate_batch(
        spark, audit, stricter, table_location(tmp_path / "changed"), partitions=4
    )

    # Expected: single-process replay of every record with the new policy.
    policy = stricter.load_policy()
    assert policy.validation.min_sentence_support == 0.9
    expected: dict[str, tuple[bool, str | None]] = {}
    with SqliteStore(demo_store_dir) as store:
        for record in DeltaAuditSink(audit).records():
            chunks = store.get_chunks([e.chunk_id for e in record.evidence])
            texts = {c.chunk_id: safe_normalize_v1(c.text) for c in chunks}
            rep = replay(record, policy, chunk_texts=texts)
            expected[record.request_id] = (
                rep.verdict_changed,
                rep.new_result.failure_reason if rep.new_result else None,
            )
    want = sum(1 for c, _ in expected.values() if c)
    assert want > 0 and changed.changed == want
    rows = read_delta_arrow(table_location(tmp_path / "changed")).to_pylist()
    got = {r["request_id"]: (r["verdict_changed"], r["new_failure_reason"]) for r in rows}
    assert got == expected
    assert all(not r["policy_fingerprint_matches"] for r in rows)
    assert all(k.startswith("PASSED/- -> FAILED/") for k in changed.changes)
