"""Per-request derivations made once: the bundle's EvidenceView (validation, regeneration and
packaging share it) and the renumbering of anchors (packaging makes it; the audit record and
`extras` keep the same mapping)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import citebound.audit.record as audit_record
import citebound.respond.renumber as renumber_module
from citebound.pipeline import Pipeline, RequestState
from citebound.pipeline.state import DISPLAY_ANCHORS
from citebound.testing import ScriptedLLMServer
from citebound.validate.view import EvidenceView

# Its extractive answer cites the evidence out of rank order (test_pipeline_anchor_order.py).
QUESTION = "How do I replace the HP-220 mechanical seal?"
PRESET = Path(__file__).resolve().parents[2] / "src/citebound/presets/strict-v1.toml"


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often each derivation ran."""
    seen = {"views": 0, "renumberings": 0, "shown_of": 0}
    project = EvidenceView.from_bundle.__func__  # type: ignore[attr-defined]
    renumbering = renumber_module.renumbering
    shown_of = audit_record.shown_of

    def from_bundle(cls: type[EvidenceView], bundle: Any) -> EvidenceView:
        seen["views"] += 1
        return project(cls, bundle)  # type: ignore[no-any-return]

    def counted_renumbering(*args: Any) -> dict[str, str]:
        seen["renumberings"] += 1
        return renumbering(*args)

    def counted_shown_of(*args: Any) -> dict[str, str]:
        seen["shown_of"] += 1
        return shown_of(*args)

    monkeypatch.setattr(EvidenceView, "from_bundle", classmethod(from_bundle))
    monkeypatch.setattr(renumber_module, "renumbering", counted_renumbering)
    monkeypatch.setattr(audit_record, "shown_of", counted_shown_of)
    return seen


def _record_of(pipe: Pipeline, state: RequestState) -> Any:
    (record,) = pipe.ctx.sinks[0].find(state.request_id)
    assert record.hash_ok() and record.record_hash == state.audit_record_hash
    return record


def test_an_answer_projects_its_bundle_and_renumbers_once(
    make_pipeline: Callable[..., Pipeline], counts: dict[str, int]
) -> None:
    pipe = make_pipeline()
    state = pipe.run(QUESTION)
    assert state.response is not None and state.response.status.value == "OK"
    assert state.validation is not None
    assert counts == {"views": 1, "renumberings": 1, "shown_of": 0}
    record = _record_of(pipe, state)
    shown = [c.anchor for c in state.response.citations]
    assert state.validation.validated_citations != shown  # really renumbered
    assert record.display_anchors == state.extras[DISPLAY_ANCHORS]
    assert list(record.display_anchors.values()) == shown


def test_a_state_rebuilt_from_json_projects_its_bundle_again(
    make_pipeline: Callable[..., Pipeline], counts: dict[str, int]
) -> None:
    """Step mode over HTTP: the kept view is not serialized; packaging builds the same one."""
    pipe = make_pipeline()
    state = pipe.start(QUESTION)
    while state.steps_done[-1:] != ["validated"]:
        state = pipe.step(state)
    again = RequestState.model_validate_json(state.model_dump_json())
    assert state._view is not None and again._view is None
    assert again == state and state == again  # the kept view is no part of the state's value
    assert again != again.evolve(prompt_md=again.prompt_md + "x")
    done = pipe.finish(again)
    assert counts["views"] == 2  # validated (kept), then packaging (the copy has none)
    assert done.response is not None and done.response.status.value == "OK"
    record = _record_of(pipe, done)
    assert record.display_anchors == done.extras[DISPLAY_ANCHORS]
    assert list(record.display_anchors.values()) == [c.anchor for c in done.response.citations]


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as s:
        yield s


@pytest.mark.integration
def test_a_regeneration_shares_the_one_view(
    make_pipeline: Callable[..., Pipeline],
    server: ScriptedLLMServer,
    counts: dict[str, int],
    tmp_path: Path,
) -> None:
    policy = tmp_path / "regen.toml"
    text = PRESET.read_text("utf-8").replace(
        "regenerate_on_failure = false", "regenerate_on_failure = true"
    )
    policy.write_text(text, "utf-8")
    good = (
        "The impeller bolts were tightened to 45 Nm in a cross pattern with a calibrated "
        "torque wrench. [C0]"
    )
    server.reply(good + " Mars has two moons.", usage=(100, 10))  # rejected: regenerated
    server.reply(good, usage=(120, 12))
    pipe = make_pipeline(
        **{
            "provider.name": "openai",
            "provider.model": "m",
            "provider.base_url": server.base_url,
            "policy": str(policy),
        }
    )
    state = pipe.run("What torque should the HP-220 impeller bolts be tightened to?")
    assert state.response is not None and state.response.answer == good
    assert len(server.requests) == 2
    # validate + locate failures + validate the regeneration + package: one projection
    assert counts == {"views": 1, "renumberings": 1, "shown_of": 0}
    assert _record_of(pipe, state).display_anchors == {"C0": "C0"}
