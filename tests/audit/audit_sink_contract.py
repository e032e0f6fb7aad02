"""The contract every AuditSink passes (house rule 9). Subclass and provide `sink`."""

from __future__ import annotations

import math

import pytest
from audit_samples import PATHS, record_for, with_conversation

from citebound.audit import AuditSink
from citebound.contracts.base import canonical_json
from citebound.errors import AuditError


class AuditSinkContract:
    """Shared tests; a subclass defines the `sink` fixture."""

    def test_is_an_audit_sink_without_mutation_api(self, sink: AuditSink) -> None:
        assert isinstance(sink, AuditSink)
        for name in ("update", "delete", "remove", "upsert", "replace", "truncate"):
            assert not hasattr(sink, name), name

    def test_every_path_round_trips_exactly(self, sink: AuditSink) -> None:
        written = [
            record_for(p, request_id=f"req-{i}", store_evidence_text=(p == "ok"))
            for i, p in enumerate(PATHS)
        ]
        for r in written:
            sink.append(r)
        for r in written:
            (back,) = sink.find(r.request_id)
            assert back == r
            assert back.hash_ok()

    def test_non_finite_numbers_are_kept_exactly(self, sink: AuditSink) -> None:
        """NaN and infinities (a support score gone wrong) never lose the record: every sink
        stores them and reads back the same record, with the same hash."""
        base = record_for("ok", request_id="non-finite")
        evidence = [
            e.model_copy(update={"similarity_score": v})
            for e, v in zip(base.evidence, (math.nan, -math.inf), strict=True)
        ]
        record = base.model_copy(
            update={
                "min_support": math.nan,
                "attribution_coverage": math.inf,
                "llm_latency_ms": -math.inf,
                "latency_ms": math.nan,
                "evidence": evidence,
            }
        )
        record = record.model_copy(update={"record_hash": record.compute_hash()})
        sink.append(record)
        (back,) = sink.find("non-finite")
        assert back.hash_ok() and back.record_hash == record.record_hash
        # NaN != NaN, so compare the canonical bytes (what the hash covers) and the values
        assert canonical_json(back) == canonical_json(record)
        assert math.isnan(back.min_support or 0.0) and math.isnan(back.latency_ms)
        assert (back.attribution_coverage, back.llm_latency_ms) == (math.inf, -math.inf)
        scores = [e.similarity_score for e in back.evidence]
        assert math.isnan(scores[0]) and scores[1] == -math.inf
        assert [r.request_id for r in sink.records()] == ["non-finite"]

    def test_a_follow_up_keeps_its_conversation(self, sink: AuditSink) -> None:
        follow = with_conversation(record_for("ok", request_id="follow-up"))
        sink.append(follow)
        (back,) = sink.find("follow-up")
        assert back == follow and back.hash_ok()
        assert back.conversation is not None and back.conversation.turns_received == 2

    def test_one_record_per_request_per_run(self, sink: AuditSink) -> None:
        sink.append(record_for("ok", run_id="run-1"))
        with pytest.raises(AuditError, match="already exists"):
            sink.append(record_for("rejected", run_id="run-1"))
        sink.append(record_for("ok", run_id="run-2", timestamp="2026-01-02T03:04:06.000000Z"))
        assert [r.run_id for r in sink.find("req-1")] == ["run-1", "run-2"]

    def test_null_run_id_is_still_unique(self, sink: AuditSink) -> None:
        sink.append(record_for("ok", run_id=None))
        with pytest.raises(AuditError):
            sink.append(record_for("ok", run_id=None))
        assert len(sink.find("req-1")) == 1

    def test_refuses_a_record_with_a_wrong_hash(self, sink: AuditSink) -> None:
        r = record_for("ok")
        with pytest.raises(AuditError, match="record_hash"):
            sink.append(r.model_copy(update={"latency_ms": 1.0}))
        assert sink.find("req-1") == []

    def test_records_are_ordered_by_time_then_request(self, sink: AuditSink) -> None:
        sink.append(record_for("ok", request_id="b", timestamp="2026-01-01T00:00:02.000000Z"))
        sink.append(record_for("ok", request_id="c", timestamp="2026-01-01T00:00:01.000000Z"))
        sink.append(record_for("gate", request_id="a", timestamp="2026-01-01T00:00:02.000000Z"))
        assert [r.request_id for r in sink.records()] == ["c", "a", "b"]

    def test_threads_share_one_sink(self, sink: AuditSink) -> None:
        # A pipeline built on one thread and run from a web framework's worker threads.
        from concurrent.futures import ThreadPoolExecutor

        def work(t: int) -> list[str]:
            outcomes = []
            for i in range(5):
                sink.append(record_for("ok", request_id=f"t{t}-{i}"))
                sink.find(f"t{t}-{i}")
                try:  # every thread races for the same id: exactly one may win
                    sink.append(record_for("ok", request_id="contested"))
                    outcomes.append("stored")
                except AuditError:
                    outcomes.append("refused")
            return outcomes

        with ThreadPoolExecutor(4) as pool:
            outcomes = [o for per in pool.map(work, range(4)) for o in per]
        assert outcomes.count("stored") == 1
        stored = sorted(r.request_id for r in sink.records())
        assert stored == sorted(["contested", *(f"t{t}-{i}" for t in range(4) for i in range(5))])
        assert all(r.hash_ok() for r in sink.records())

    def test_unknown_request_is_empty(self, sink: AuditSink) -> None:
        assert sink.find("nope") == []
