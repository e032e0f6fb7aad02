"""The call journal of batch executors (batch/intents.py) without Spark: what an intent
records, that it is on disk before the call, and the FAILED LLM_INTERRUPTED record built
from it after a crash."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from citebound.audit.location import table_location
from citebound.batch.intents import CallJournal, interrupted_row
from citebound.batch.staging import Staging
from citebound.policy import load_policy


class _Staging:
    """The one Staging method the journal uses, in memory."""

    def __init__(self) -> None:
        self.intents: dict[str, dict[str, Any]] = {}

    def write_call(self, request_id: str, intent: dict[str, Any]) -> None:
        self.intents[request_id] = {**intent, "request_id": request_id}


class _Provider:
    name, model = "openai", "scripted"

    def __init__(self) -> None:
        self.sent: list[str] = []

    def complete(self, request: Any) -> str:
        self.sent.append(request.prompt_sha256)
        return "reply"


def test_a_transient_retry_of_the_same_bytes_is_journaled_as_an_attempt() -> None:
    """`llm.execute` retries a timed-out call with the same bytes: the model may have received
    both. A crash during the retry must audit two attempts of that prompt, not one."""
    provider, staging = _Provider(), _Staging()
    journal = CallJournal(provider)  # type: ignore[arg-type]
    journal.bind(staging, "run")  # type: ignore[arg-type]
    first, retry, regenerated = ("a" * 64, "a" * 64, "b" * 64)
    for sha in (first, retry, regenerated):
        journal.complete(SimpleNamespace(request_id="q1", prompt_sha256=sha))  # type: ignore[arg-type]
    assert provider.sent == [first, retry, regenerated]
    intent = staging.intents["q1"]
    _, record = interrupted_row("q1", "Why?", intent, run_id="run", policy=load_policy())
    calls = record.model_calls or []
    assert [(c.prompt_sha256, c.attempts) for c in calls] == [(first, 2), (regenerated, 1)]
    assert record.attempts == len(provider.sent) == 3
    assert record.hash_ok()


def test_an_intent_without_attempt_counts_reads_as_one_attempt_per_prompt() -> None:
    intent = {"prompt_sha256": ["c" * 64], "provider": "openai", "model_name": "m"}
    _, record = interrupted_row("q2", "Why?", intent, run_id="run", policy=load_policy())
    assert [c.attempts for c in record.model_calls or []] == [1] and record.attempts == 1


def test_an_intent_reaches_the_disk_before_its_call_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A power cut must not take back an intent whose call went out: the intent file goes
    through `cache_dir.write_atomic` (flushed, renamed, folder flushed) and each folder made
    for it is flushed into its parent, all before the provider is called."""
    from citebound import cache_dir
    from citebound.batch import staging as staging_module

    events: list[tuple[str, Path]] = []
    real_fsync, real_write = cache_dir.fsync_path, cache_dir.write_atomic

    def fsync(path: Path) -> None:
        events.append(("fsync", path))
        real_fsync(path)

    def write(path: Path, data: bytes) -> None:
        events.append(("write", path))
        real_write(path, data)

    monkeypatch.setattr(cache_dir, "fsync_path", fsync)
    monkeypatch.setattr(staging_module, "write_atomic", write, raising=False)
    out = tmp_path / "out"
    staging = Staging(table_location(out), "r")
    provider = _Provider()
    journal = CallJournal(provider)  # type: ignore[arg-type]
    journal.bind(staging, "r")
    sha = "a" * 64

    send = provider.complete

    def complete(request: Any) -> str:
        events.append(("send", Path()))
        return send(request)

    monkeypatch.setattr(provider, "complete", complete)
    journal.complete(SimpleNamespace(request_id="q1", prompt_sha256=sha))  # type: ignore[arg-type]
    run = out / "_staging" / "r"
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "send" and kinds.count("write") == 1
    (written,) = [p for kind, p in events if kind == "write"]
    assert written.parent == run / "calls"
    flushed = {p for kind, p in events if kind == "fsync"}
    assert {tmp_path, out, out / "_staging", run, run / "calls"} <= flushed
    assert (staging.read_call("q1") or {})["prompt_sha256"] == [sha]


def test_closing_a_worker_context_closes_the_client_inside_the_journal(tmp_path: Path) -> None:
    """The executors' provider is wrapped in a `CallJournal`; the wrapped provider (and its
    HTTP client) is still the context's own, so `PipelineContext.close` closes it."""
    from batch_helpers import batch_config

    from citebound.batch import worker

    config = batch_config(
        tmp_path,
        **{
            "provider.name": "openai",
            "provider.base_url": "http://127.0.0.1:9/v1",
            "provider.model": "m",
        },
    )
    config_json = config.model_dump_json()
    pipe, _ = worker.worker_context(config_json)
    try:
        journal = pipe.ctx.provider
        assert isinstance(journal, CallJournal)
        client = journal.inner._client  # type: ignore[attr-defined]
        assert not client.is_closed
    finally:
        worker._CONTEXTS.pop(config_json)
        pipe.ctx.close()
    assert client.is_closed
    extractive = config.model_copy(
        update={"provider": config.provider.model_copy(update={"name": "extractive"})}
    )
    assert not worker.calls_remote_model(extractive) and worker.calls_remote_model(config)


def test_a_task_reads_only_the_intents_of_its_own_lost_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task's start lists the run's intents without reading them: a staged row's leftover
    intent is cleared by its name; an intent is read only when its request comes up."""
    from citebound.batch.staging import call_file, slice_key
    from citebound.batch.worker import RowStager

    staging = Staging(table_location(tmp_path), "run")
    for rid in ("lost", "staged", "other-task"):
        staging.write_call(rid, {"prompt_sha256": ["d" * 64], "provider": "openai"})
    staging.write_part(slice_key("run", "lost"), [("staged", "{}", "{}")])
    read: list[str] = []
    real_get = Staging._get

    def get(self: Staging, name: str) -> bytes:
        read.append(name)
        return real_get(self, name)

    monkeypatch.setattr(Staging, "_get", get)
    journal = CallJournal(_Provider())  # type: ignore[arg-type]
    pipe = SimpleNamespace(ctx=SimpleNamespace(provider=journal, policy=load_policy()))
    stager = RowStager(staging, "run", 64, pipe)
    assert stager.start("lost") == {"staged": staging.part_files()[0]}
    assert read == staging.part_files()  # the staged rows; no intent read
    assert staging.call_files() == {call_file("lost"), call_file("other-task")}
    assert stager.interrupted("fresh", "Why?") is None and len(read) == 1
    record = stager.interrupted("lost", "Why?")
    assert record is not None and record.llm_failure_reason == "LLM_INTERRUPTED"
    assert read[1:] == [f"calls/{call_file('lost')}"]
    assert staging.call_files() == {call_file("other-task")}  # staged, so cleared
