"""The gate weighs the question's rarest words only for a preset whose gate has the rare pass,
and both gate paths (the pipeline's A3 stage and `Retriever.retrieve`) measure them alike."""

from __future__ import annotations

from collections.abc import Callable

from citebound.pipeline import Pipeline
from citebound.retrieve import Retriever

TORQUE = "What torque for the impeller bolts of the HP-220 pump?"


def test_the_rare_measure_is_recorded_only_where_the_gate_uses_it(
    make_pipeline: Callable[..., Pipeline],
) -> None:
    strict = make_pipeline(policy="strict-v1").run(TORQUE, request_id="r1")
    assert strict.retrieval_bundle is not None and strict.retrieval_bundle.gate is not None
    share = strict.retrieval_bundle.gate.rarity_held
    assert share is not None and 0.0 < share <= 1.0
    # hybridrag has no rare pass: the words' rarity is not looked up at all.
    hybrid = make_pipeline(policy="hybridrag").run(TORQUE, request_id="r2")
    assert hybrid.retrieval_bundle is not None and hybrid.retrieval_bundle.gate is not None
    assert hybrid.retrieval_bundle.gate.rarity_held is None
    # The library path decides on the same measure.
    ctx = make_pipeline(policy="strict-v1").ctx
    retriever: Retriever = ctx.retriever
    bundle = retriever.retrieve(TORQUE, collection="demo", policy=ctx.policy)
    assert bundle.gate is not None and bundle.gate.rarity_held == share
