"""Test helpers shipped for users' own tests.

`ScriptedLLMServer` is a loopback OpenAI-compatible (and Ollama) server that replays queued
replies and faults and records every request body, so a test can point any provider at it::

    from citebound.llm import OpenAIProvider, execute
    from citebound.testing import ScriptedLLMServer

    with ScriptedLLMServer() as server:
        server.error(429, retry_after="0")
        server.reply("The pump runs at 40 bar. [C0]")
        provider = OpenAIProvider("my-model", base_url=server.base_url)
        result = execute(prompt, bundle, provider, policy)
        assert result.attempts == 2
        assert {r.body for r in server.requests} == {server.requests[0].body}
"""

from citebound.testing.server import RecordedRequest, ScriptedLLMServer, Step

__all__ = ["RecordedRequest", "ScriptedLLMServer", "Step"]
