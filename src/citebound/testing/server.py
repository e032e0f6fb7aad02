"""A scripted, fault-injecting OpenAI-compatible (and Ollama) server for tests.

It runs on loopback in a background thread, answers the three chat endpoints citebound
speaks, and records the raw bytes of every request so tests can prove byte identity:

* `POST /v1/chat/completions` (Chat Completions)
* `POST /v1/responses` (Responses API)
* `POST /api/chat` (Ollama native, `stream: false`)

Each request consumes the next queued step. A step is a reply or a fault: an HTTP error
(429 with `Retry-After`, 500, 503, ...), a delay past the client timeout, a connection reset,
a malformed JSON body, an empty choice, or a reply cut off with `finish_reason=length`.
When the queue is empty the server answers `default_text` if one was given, else HTTP 500
with a message saying nothing was queued.

Example:
    >>> import httpx
    >>> from citebound.testing import ScriptedLLMServer
    >>> with ScriptedLLMServer() as server:
    ...     server.error(503)
    ...     server.reply("The pump runs at 40 bar. [C0]")
    ...     url = server.base_url + "/chat/completions"
    ...     body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    ...     first = httpx.post(url, json=body).status_code
    ...     second = httpx.post(url, json=body).json()["choices"][0]["message"]["content"]
    ...     (first, second, len(server.requests))
    (503, 'The pump runs at 40 bar. [C0]', 2)
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

__all__ = ["RecordedRequest", "ScriptedLLMServer", "Step"]

StepKind = Literal["reply", "error", "delay", "reset", "raw", "empty"]


@dataclass(frozen=True)
class Step:
    """One scripted behaviour, consumed by one request."""

    kind: StepKind
    text: str = ""
    finish_reason: str = "stop"
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    delay_s: float = 0.0
    usage: tuple[int, int] | None = None
    model: str | None = None


@dataclass(frozen=True)
class RecordedRequest:
    """A request exactly as it arrived: method, path, headers and raw body bytes."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.body)

    def messages(self) -> list[dict[str, Any]]:
        """Chat messages from `messages` (chat, Ollama) or `input` (Responses API)."""
        data = self.json()
        found = data.get("messages", data.get("input"))
        if not isinstance(found, list):
            raise ValueError(f"request to {self.path} carries no message list")
        return found

    def prompt_text(self) -> str:
        """System content + blank line + user content, as citebound defines prompt bytes."""
        by_role = {m["role"]: m["content"] for m in self.messages()}
        return str(by_role["system"]) + "\n\n" + str(by_role["user"])


@dataclass
class _State:
    steps: deque[Step] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    default_text: str | None = None
    counter: int = 0


class ScriptedLLMServer:
    """Loopback HTTP server that replays queued replies and faults; see the module docstring.

    Args:
        default_text: Answer used when no step is queued (None: HTTP 500 instead).
        host: Interface to bind; loopback by default.
        port: Port to bind; 0 picks a free one.
    """

    def __init__(
        self, *, default_text: str | None = None, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self._state = _State(default_text=default_text)
        self._httpd = _Server((host, port), _Handler)
        self._httpd.state = self._state
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> ScriptedLLMServer:
        """Serve in a daemon thread (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.02},
                name="ScriptedLLMServer",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; handlers still sleeping in a delay step are woken and dropped."""
        self._state.stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses -------------------------------------------------------------------------
    @property
    def root_url(self) -> str:
        """`http://127.0.0.1:PORT` (the Ollama base URL)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT/v1` (the OpenAI-compatible base URL)."""
        return self.root_url + "/v1"

    # -- script ----------------------------------------------------------------------------
    def queue(self, *steps: Step) -> None:
        """Append steps to the script."""
        with self._state.lock:
            self._state.steps.extend(steps)

    def reply(
        self,
        text: str,
        *,
        finish_reason: str = "stop",
        usage: tuple[int, int] | None = None,
        delay_s: float = 0.0,
        model: str | None = None,
    ) -> None:
        """Queue a successful answer.

        Args:
            text: Answer text, returned byte for byte.
            finish_reason: `stop`, or `length` for a cut-off answer.
            usage: (prompt_tokens, completion_tokens); default: whitespace word counts.
            delay_s: Wait this long before answering.
            model: Model name to report; default: the one requested (a server-side
                substitution can be simulated by giving another name).
        """
        self.queue(
            Step(
                "reply",
                text=text,
                finish_reason=finish_reason,
                usage=usage,
                delay_s=delay_s,
                model=model,
            )
        )

    def truncated(self, text: str = "The answer was cut") -> None:
        """Queue an answer cut off by the output cap (`finish_reason=length`)."""
        self.reply(text, finish_reason="length")

    def error(self, status: int, *, retry_after: str | None = None, body: bytes = b"") -> None:
        """Queue an HTTP error, e.g. `error(429, retry_after="1")`, `error(503)`."""
        headers = (("Retry-After", retry_after),) if retry_after is not None else ()
        payload = body or json.dumps({"error": {"message": f"scripted HTTP {status}"}}).encode()
        self.queue(Step("error", status=status, headers=headers, body=payload))

    def timeout(self, delay_s: float) -> None:
        """Queue a reply that arrives only after `delay_s` (set it past the client timeout)."""
        self.queue(Step("delay", text="too late", delay_s=delay_s))

    def reset(self) -> None:
        """Queue a connection reset (TCP RST) after the request body was read."""
        self.queue(Step("reset"))

    def malformed_json(self, body: bytes = b'{"choices": [{"message": ') -> None:
        """Queue a 200 response whose body is not valid JSON."""
        self.queue(Step("raw", body=body))

    def empty_choice(self) -> None:
        """Queue a 200 response with no answer: `choices: []`, `output: []`, empty content."""
        self.queue(Step("empty"))

    # -- inspection ------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def pending(self) -> int:
        """Steps not consumed yet."""
        with self._state.lock:
            return len(self._state.steps)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    state: _State

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Writes to a client that already gave up (timeout, reset) are expected here.
        return


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        record = RecordedRequest(
            "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
        )
        routed = self.path in _ROUTES
        with state.lock:
            state.requests.append(record)
            state.counter += 1
            number = state.counter
            step = state.steps.popleft() if routed and state.steps else None
        if not routed:  # an unknown path does not consume a step
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        if step is None:
            if state.default_text is None:
                self._send(500, {"error": {"message": "ScriptedLLMServer: no reply queued"}})
                return
            step = Step("reply", text=state.default_text)
        self._play(step, record, number)

    def _play(self, step: Step, record: RecordedRequest, number: int) -> None:
        if step.delay_s and self.server.state.stopping.wait(step.delay_s):
            return
        if step.kind == "reset":
            self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.request.close()
            self.close_connection = True
            return
        if step.kind == "error":
            self._send_bytes(step.status, step.body, step.headers)
            return
        if step.kind == "raw":
            self._send_bytes(200, step.body, ())
            return
        self._send(200, _ROUTES[self.path](step, record, number))

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        self._send_bytes(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"), ())

    def _send_bytes(self, status: int, body: bytes, headers: tuple[tuple[str, str], ...]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


def _usage(step: Step, record: RecordedRequest) -> tuple[int, int]:
    if step.usage is not None:
        return step.usage
    try:
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in record.messages())
    except (ValueError, AttributeError):
        prompt_words = 0
    return prompt_words, len(step.text.split())


def _model(step: Step, record: RecordedRequest) -> str:
    if step.model is not None:
        return step.model
    try:
        return str(record.json().get("model", ""))
    except (ValueError, AttributeError):
        return ""


def _chat(step: Step, record: RecordedRequest, number: int) -> dict[str, Any]:
    prompt, completion = _usage(step, record)
    choices = []
    if step.kind != "empty":
        choices.append(
            {
                "index": 0,
                "message": {"role": "assistant", "content": step.text},
                "finish_reason": step.finish_reason,
            }
        )
    return {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": _model(step, record),
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def _responses(step: Step, record: RecordedRequest, number: int) -> dict[str, Any]:
    prompt, completion = _usage(step, record)
    output = []
    if step.kind != "empty":
        output.append(
            {
                "type": "message",
                "id": f"msg_scripted_{number}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}],
            }
        )
    truncated = step.finish_reason == "length"
    return {
        "id": f"resp_scripted_{number}",
        "object": "response",
        "created_at": 0,
        "status": "incomplete" if truncated else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
        "model": _model(step, record),
        "output": output,
        "usage": {
            "input_tokens": prompt,
            "output_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def _ollama(step: Step, record: RecordedRequest, number: int) -> dict[str, Any]:
    prompt, completion = _usage(step, record)
    return {
        "model": _model(step, record),
        "created_at": "1970-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": "" if step.kind == "empty" else step.text},
        "done": True,
        "done_reason": step.finish_reason,
        "prompt_eval_count": prompt,
        "eval_count": completion,
    }


_ROUTES = {"/v1/chat/completions": _chat, "/v1/responses": _responses, "/api/chat": _ollama}
