"""Prometheus metrics in the text exposition format (version 0.0.4), written by hand.

    citebound_http_requests_total{method,route,code}      every HTTP request
    citebound_answers_total{status}                         OK / NO_EVIDENCE / FAILED
    citebound_refusals_total                                exact refusals (NO_EVIDENCE)
    citebound_validation_failures_total{reason}             validator verdicts FAILED, by reason
    citebound_failures_total{reason}                        every FAILED answer, by reason code
    citebound_stage_latency_seconds{stage}                  histogram per pipeline stage
    citebound_answer_latency_seconds                        histogram, end to end

Labels come from closed sets (route templates, stage names, reason codes), so the number of
series stays bounded whatever callers send.
"""

from __future__ import annotations

import threading
from collections import Counter

from citebound.contracts.enums import ValidationStatus
from citebound.pipeline.state import RequestState

BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**labels: str) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items())) + "}"


class Histogram:
    """Cumulative-bucket histogram of seconds."""

    def __init__(self) -> None:
        self.counts = [0] * len(BUCKETS)
        self.total = 0
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.total += 1
        self.sum += seconds
        for i, bound in enumerate(BUCKETS):
            if seconds <= bound:
                self.counts[i] += 1

    def lines(self, name: str, **labels: str) -> list[str]:
        out = [
            f"{name}_bucket{_labels(**labels, le=repr(bound))} {count}"
            for bound, count in zip(BUCKETS, self.counts, strict=True)
        ]
        out.append(f"{name}_bucket{_labels(**labels, le='+Inf')} {self.total}")
        out.append(f"{name}_sum{_labels(**labels)} {self.sum:.6f}")
        out.append(f"{name}_count{_labels(**labels)} {self.total}")
        return out


class Metrics:
    """Process-wide counters; every method is thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.http: Counter[tuple[str, str, str]] = Counter()
        self.answers: Counter[str] = Counter()
        self.refusals = 0
        self.validation_failures: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.stages: dict[str, Histogram] = {}
        self.answer_latency = Histogram()

    def observe_http(self, method: str, route: str, code: int) -> None:
        with self._lock:
            self.http[(method, route, str(code))] += 1

    def observe_request(self, state: RequestState, *, stages: bool = True) -> None:
        """Count a finished request (auto or step mode). `stages=False` when its stage
        latencies were already observed one step at a time."""
        response = state.response
        with self._lock:
            if stages:
                self._observe_stages_locked(state)
            if response is None:
                return
            self.answers[response.status.value] += 1
            if response.status.value == "NO_EVIDENCE":
                self.refusals += 1
            if response.status.value == "FAILED":
                self.failures[response.failure_reason or "UNKNOWN"] += 1
            v = state.validation
            if v is not None and v.validation_status is ValidationStatus.FAILED:
                self.validation_failures[v.failure_reason or "UNKNOWN"] += 1
            self.answer_latency.observe(response.latency_ms / 1000)

    def observe_stages(self, state: RequestState, count: int) -> None:
        """Observe the last `count` stage records (step mode)."""
        with self._lock:
            for rec in state.stage_log[-count:] if count else []:
                self.stages.setdefault(rec.stage, Histogram()).observe(rec.latency_ms / 1000)

    def _observe_stages_locked(self, state: RequestState) -> None:
        for rec in state.stage_log:
            self.stages.setdefault(rec.stage, Histogram()).observe(rec.latency_ms / 1000)

    def render(self) -> str:
        """The exposition text."""
        with self._lock:
            out = [
                "# HELP citebound_http_requests_total HTTP requests by method, route and code.",
                "# TYPE citebound_http_requests_total counter",
            ]
            for (method, route, code), n in sorted(self.http.items()):
                labels = _labels(method=method, route=route, code=code)
                out.append(f"citebound_http_requests_total{labels} {n}")
            out += [
                "# HELP citebound_answers_total Answered requests by public status.",
                "# TYPE citebound_answers_total counter",
            ]
            for status in ("OK", "NO_EVIDENCE", "FAILED"):
                out.append(
                    f"citebound_answers_total{_labels(status=status)} {self.answers[status]}"
                )
            out += [
                "# HELP citebound_refusals_total Requests answered with the exact refusal.",
                "# TYPE citebound_refusals_total counter",
                f"citebound_refusals_total {self.refusals}",
                "# HELP citebound_validation_failures_total Validator FAILED verdicts by reason.",
                "# TYPE citebound_validation_failures_total counter",
            ]
            for reason, n in sorted(self.validation_failures.items()):
                out.append(f"citebound_validation_failures_total{_labels(reason=reason)} {n}")
            out += [
                "# HELP citebound_failures_total FAILED answers by reason code.",
                "# TYPE citebound_failures_total counter",
            ]
            for reason, n in sorted(self.failures.items()):
                out.append(f"citebound_failures_total{_labels(reason=reason)} {n}")
            out += [
                "# HELP citebound_stage_latency_seconds Wall time of each pipeline stage.",
                "# TYPE citebound_stage_latency_seconds histogram",
            ]
            for stage, hist in sorted(self.stages.items()):
                out += hist.lines("citebound_stage_latency_seconds", stage=stage)
            out += [
                "# HELP citebound_answer_latency_seconds End-to-end latency of answered requests.",
                "# TYPE citebound_answer_latency_seconds histogram",
                *self.answer_latency.lines("citebound_answer_latency_seconds"),
            ]
        return "\n".join(out) + "\n"
