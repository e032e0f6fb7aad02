"""#34: request fields take the JSON types the OpenAPI says (schemathesis found "5" accepted as
an integer), a bad filter date is a 400 on the assemble routes too, and the body-size 413 of
/v1/validate and /v1/feedback is declared."""

from __future__ import annotations

from typing import Any

import pytest
from api_helpers import PLANT_QUESTION
from fastapi.testclient import TestClient
from pydantic import ValidationError

from citebound.contracts.api import AssemblePromptRequest


@pytest.mark.parametrize("value", ["5", True, 5.0])
def test_an_integer_field_refuses_strings_booleans_and_floats(
    client: TestClient, value: Any
) -> None:
    r = client.post(
        "/v1/assemble-prompt", json={"question": PLANT_QUESTION, "headroomTokens": value}
    )
    assert r.status_code in (400, 422), r.text
    assert "integer" in r.text


def test_the_same_field_takes_a_json_integer(client: TestClient) -> None:
    r = client.post("/v1/assemble-prompt", json={"question": PLANT_QUESTION, "headroomTokens": 5})
    assert r.status_code == 200, r.text


def test_the_contract_itself_refuses_lax_values() -> None:
    with pytest.raises(ValidationError, match="integer"):
        AssemblePromptRequest.model_validate({"question": "q", "limit": "3"})
    assert AssemblePromptRequest.model_validate({"question": "q", "limit": 3}).limit == 3


def test_a_bad_filter_date_is_400_on_assemble_prompt(client: TestClient) -> None:
    r = client.post(
        "/v1/assemble-prompt",
        json={"question": PLANT_QUESTION, "filters": {"date_range": {"start": "2024-13-45"}}},
    )
    assert r.status_code == 400, r.text
    assert "2024-13-45" in r.text or "date" in r.text


def test_the_body_size_413_is_declared_where_the_middleware_can_send_it(
    client: TestClient,
) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/v1/validate", "/v1/feedback", "/v1/answer", "/v1/retrieve", "/v1/steps"):
        assert "413" in paths[path]["post"]["responses"], path
