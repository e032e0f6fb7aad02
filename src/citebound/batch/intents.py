"""Model calls of a batch made durable before they are sent, and audited after a crash.

The standard: every request that reached a model is audited exactly once. A `batch answer` or
`batch eval` executor stages a request's row (answer + audit record) as soon as its model call
returns (`worker.RowStager`), but a job that dies while a call is in flight used to leave that
call without any record, and the resumed run asked the model again.

So the executors' provider is wrapped in a `CallJournal`: before each call of a request (its
first, a regeneration's new prompt bytes, and a transient retry of the same bytes, which the
model may receive twice) it writes an *intent* to the run's staging area
(`OUT/_staging/<run>/calls/<hash>.json`: request id, prompt sha256s and the calls sent with
each, provider, model, time), and only then sends. When the row is staged the intent is
cleared. An intent still there when a task (a resumed run, or Spark's retry of the task)
reaches its request means the call was sent, or about to be, and its answer was lost: the
request is not asked again; it is staged with an audit record of status FAILED,
`llm_failure_reason` LLM_INTERRUPTED and one `model_calls` entry per journaled prompt (stage
`interrupted`, its `attempts` the calls journaled with those bytes).
The intent is written before the call, so a crash between the write and the send records a
call that may never have left: the record says "sent or about to be", never less.

Exactly once: a request has a staged row or an intent, and a staged row wins (its intent is
only an uncleared leftover); the interrupted record is staged and committed like any row, and
the audit table's one-record-per-request-and-run check stands behind both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from citebound.audit import utc_now
from citebound.contracts.audit import AuditRecord
from citebound.contracts.enums import (
    GenerationStatus,
    PublicStatus,
    ReasonCode,
)
from citebound.contracts.execution import ModelCallRecord
from citebound.contracts.public import PublicResponse, TokenUsage
from citebound.errors import ProviderError

if TYPE_CHECKING:
    from citebound.batch.staging import Staging
    from citebound.contracts.audit import AuditRecord
    from citebound.contracts.provider import ProviderReply, ProviderRequest
    from citebound.contracts.public import PublicResponse
    from citebound.llm import Provider
    from citebound.policy import Policy

INTERRUPTED_STAGE = "interrupted"


class CallJournal:
    """A `Provider` that journals each request's call in the bound staging area before
    sending it to the wrapped provider (unbound: it only forwards)."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.staging: Staging | None = None
        self.run_id: str | None = None
        # request id -> prompt sha256 -> calls journaled with those bytes (in first-sent order)
        self._prompts: dict[str, dict[str, int]] = {}

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    def __getattr__(self, attr: str) -> Any:  # close(), answerer settings, ...
        if attr == "inner":  # not set yet (a copy being built): no recursion
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    def bind(self, staging: Staging | None, run_id: str | None) -> None:
        """Journal into `staging` from now on (None: stop journaling)."""
        self.staging, self.run_id = staging, run_id
        self._prompts.clear()

    def complete(self, request: ProviderRequest) -> ProviderReply:
        if self.staging is not None:
            # Every call, retries of the same bytes included (the model may have received the
            # attempt that timed out): counted only once the journal holds it.
            sent = dict(self._prompts.get(request.request_id, {}))
            sent[request.prompt_sha256] = sent.get(request.prompt_sha256, 0) + 1
            self._journal(request.request_id, sent)
            self._prompts[request.request_id] = sent
        return self.inner.complete(request)

    def _journal(self, request_id: str, prompts: dict[str, int]) -> None:
        assert self.staging is not None
        intent = {
            "run_id": self.run_id,
            "prompt_sha256": list(prompts),
            "attempts": list(prompts.values()),
            "provider": self.inner.name,
            "model_name": self.inner.model,
            "sent_utc": utc_now(),
        }
        try:
            self.staging.write_call(request_id, intent)
        except Exception as err:  # not durable: the call is not sent (fail closed)
            raise ProviderError(
                f"cannot journal the model call of {request_id} before sending it: {err}",
                reason_code=ReasonCode.AUDIT_FAILED,
                provider=self.inner.name,
            ) from err

    def sent(self, request_id: str) -> bool:
        """True when this journal wrote an intent for `request_id` since `bind`."""
        return request_id in self._prompts

    def forget(self, request_ids: list[str]) -> list[str]:
        """Forget the requests whose rows are now staged; those this journal had journaled
        (their intent files are the caller's to clear)."""
        return [rid for rid in request_ids if self._prompts.pop(rid, None) is not None]


def interrupted_row(
    request_id: str,
    question: str,
    intent: dict[str, Any],
    *,
    run_id: str,
    policy: Policy,
) -> tuple[PublicResponse, AuditRecord]:
    """The FAILED response and audit record of a journaled call whose answer was lost."""
    provider = str(intent.get("provider") or "")
    model = str(intent.get("model_name") or "")
    prompts = [str(p) for p in intent.get("prompt_sha256") or []]
    counts = intent.get("attempts")
    if not (
        isinstance(counts, list)
        and len(counts) == len(prompts)
        and all(isinstance(n, int) and n >= 1 for n in counts)
    ):
        counts = [1] * len(prompts)  # an intent without counts: one call per prompt
    calls = [
        ModelCallRecord(
            stage=INTERRUPTED_STAGE,
            prompt_sha256=sha,
            provider=provider,
            model_name=model,
            generation_status=GenerationStatus.FAILED,
            failure_reason=ReasonCode.LLM_INTERRUPTED.value,
            attempts=n,
            llm_latency_ms=0.0,
        )
        for sha, n in zip(prompts, counts, strict=True)
    ]
    failed = ReasonCode.GENERATION_FAILED.value
    response = PublicResponse(
        request_id=request_id,
        status=PublicStatus.FAILED,
        answer="",
        token_usage=TokenUsage(),
        latency_ms=0.0,
        failure_reason=failed,
    )
    record = AuditRecord(
        request_id=request_id,
        run_id=run_id,
        timestamp_utc=utc_now(),
        status=PublicStatus.FAILED,
        generation_status=GenerationStatus.FAILED,
        llm_generation_status=GenerationStatus.FAILED,
        failure_reason=failed,
        reason_codes=[failed],
        llm_failure_reason=ReasonCode.LLM_INTERRUPTED.value,
        model_name=model or None,
        provider=provider or None,
        prompt_sha256=prompts[-1] if prompts else None,
        model_calls=calls,
        policy_version=policy.policy_version,
        policy_fingerprint=policy.fingerprint,
        attempts=sum(c.attempts for c in calls),
        latency_ms=0.0,
        question=question,
    )
    return response, record.model_copy(update={"record_hash": record.compute_hash()})
