"""Schemathesis against the server's own /openapi.json (#21), with a key and without: no 5xx,
no response that breaks its schema, no hang. Bounded for CI (a few examples per operation);
docs/api.md shows the longer run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from api_helpers import KEYS

from citebound.api import create_app
from citebound.config import Config

schemathesis = pytest.importorskip("schemathesis", reason="pip install -e '.[test]'")
from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import response_schema_conformance  # noqa: E402

EXAMPLES = 4  # per operation; docs/api.md runs more with the CLI


def _run(config: Config, headers: dict[str, str]) -> int:
    schema: Any = schemathesis.openapi.from_asgi("/openapi.json", create_app(config))
    ran = 0
    for op in schema.get_all_operations():
        operation = op.ok()

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        def check(case: Any) -> None:
            response = case.call(headers=headers, timeout=30)
            case.validate_response(
                response, checks=[not_a_server_error, response_schema_conformance]
            )

        operation.as_strategy  # noqa: B018 - fails early if the operation cannot be built
        from hypothesis import given

        given(case=operation.as_strategy())(check)()
        ran += 1
    return ran


@pytest.mark.integration
@pytest.mark.parametrize("keyed", [False, True], ids=["anonymous", "admin-key"])
def test_schemathesis_finds_no_5xx_and_no_schema_break(
    make_config: Callable[..., Config], keyed: bool
) -> None:
    hosts = {"api.allowed_hosts": ["localhost", "testserver", "127.0.0.1"]}
    config = make_config(keys=keyed, **hosts)
    headers = {"Authorization": f"Bearer {KEYS['admin'][0]}"} if keyed else {}
    assert _run(config, headers) >= 10
