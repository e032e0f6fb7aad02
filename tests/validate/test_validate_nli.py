"""A verifier model the user brings: loaded from a real export layout, scored, decides.

The model is the tiny classifier the test builds (testing/tiny_cross_encoder.py): logits
(overlap, 0, 0), so P(entailment) = e^overlap / (e^overlap + 2) can be worked out by hand.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from citebound.errors import ConfigError
from citebound.policy import Policy, load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.testing.tiny_cross_encoder import write_tiny_cross_encoder, write_tiny_nli
from citebound.validate import validate_text
from citebound.validate.nli import OnnxNLIModel

pytest.importorskip("onnx")


def _p(overlap: int, labels: int = 3) -> float:
    return math.exp(overlap) / (math.exp(overlap) + labels - 1)


def test_entailment_probability_is_the_softmax_of_the_entailment_label(tmp_path: Path) -> None:
    model = OnnxNLIModel(write_tiny_nli(tmp_path / "nli"))
    assert (model.entailment, model.n_labels) == (0, 3)
    assert model.entailment_probability("the pump", "the valve") == pytest.approx(_p(0))
    # pump x1 * pump x1 + torque x1 * torque x1 = 2
    p = model.entailment_probability("torque the pump", "pump torque")
    assert p == pytest.approx(_p(2), rel=1e-6)


def test_entailment_label_is_found_by_name(tmp_path: Path) -> None:
    path = write_tiny_nli(tmp_path / "nli", labels=("CONTRADICTION", "ENTAILMENT"))
    model = OnnxNLIModel(path)
    assert model.entailment == 1  # the overlap drives label 0 here, so entailment stays low
    assert model.entailment_probability("pump", "pump") == pytest.approx(1 - _p(1, 2))


@pytest.mark.parametrize(
    "labels", [{"0": "yes", "1": "no"}, {"0": "entailment"}, None], ids=["unnamed", "one", "none"]
)
def test_models_without_a_clear_entailment_class_are_refused(
    tmp_path: Path, labels: dict[str, str] | None
) -> None:
    path = write_tiny_cross_encoder(tmp_path / "m", n_labels=2)
    if labels is not None:
        (path / "config.json").write_text(json.dumps({"id2label": labels}), "utf-8")
    with pytest.raises(ConfigError, match="id2label"):
        OnnxNLIModel(path)


def test_missing_model_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no ONNX NLI model"):
        OnnxNLIModel(tmp_path / "absent")


def test_batched_scores_equal_one_by_one(tmp_path: Path) -> None:
    model = OnnxNLIModel(write_tiny_nli(tmp_path / "nli"))
    pairs = [("torque the pump", "pump torque"), ("the seal", "the valve leak"),
             ("bolt bolt 40 nm", "bolt 40")] * 7  # fmt: skip
    batched = model.entailment_probabilities(pairs)
    assert batched == pytest.approx([model.entailment_probability(p, h) for p, h in pairs])
    assert model.entailment_probabilities([]) == []


def _with(policy_name: str, **update: object) -> Policy:
    base = load_policy(policy_name)
    return base.evolve(validation=base.validation.model_copy(update=update))


def test_a_model_the_user_brings_replaces_the_shipped_verifier(tmp_path: Path) -> None:
    path = write_tiny_nli(tmp_path / "nli")
    policy = _with("strict-v1", nli_model_path=str(path), verifier_threshold=0.85)
    bundle = make_answer_bundle(["Torque the pump bolts to 40 Nm. Inspect the seal."])
    # The evidence fits the window whole: overlap pump+bolts+40+nm+torque = 5, P = e^5/(e^5+2).
    ok = validate_text(bundle, "The pump bolts take 40 Nm of torque [C0].", policy)
    assert ok.validation_status == "PASSED", ok.message
    assert ok.grounding_metrics.min_support == pytest.approx(_p(5), abs=1e-6)
    # Shares only "seal": P = e^1/(e^1+2) < 0.85 -> UNSUPPORTED_CLAIM, score and window kept.
    r = validate_text(bundle, "Inspect the seal for cracks [C0].", policy)
    assert r.failure_reason == "UNSUPPORTED_CLAIM", r.message
    (u,) = r.grounding_metrics.unsupported_sentences
    assert u.score == pytest.approx(_p(1), abs=1e-6)
    assert u.best_evidence_span == "Torque the pump bolts to 40 Nm. Inspect the seal."
    assert "verifier score" in u.reason
    assert r.grounding_metrics.verifier is not None
    assert r.grounding_metrics.verifier.startswith("onnx-nli:nli@sha256:")
    low = validate_text(
        bundle, "Inspect the seal for cracks [C0].", _with(
            "strict-v1", nli_model_path=str(path), verifier_threshold=0.85,
            low_support_action="low_confidence",
        ),
    )  # fmt: skip
    assert low.validation_status == "PASSED" and low.grounding_metrics.low_confidence


def test_a_missing_model_fails_closed(tmp_path: Path) -> None:
    broken = _with("strict-v1", nli_model_path=str(tmp_path / "x"))
    bundle = make_answer_bundle(["Inspect the seal."])
    failed = validate_text(bundle, "Inspect the seal [C0].", broken)
    assert failed.failure_reason == "INTERNAL_ERROR"  # fails closed, never passes unchecked


def test_verifier_none_leaves_the_hard_checks(tmp_path: Path) -> None:
    policy = _with("strict-v1", verifier="none")
    bundle = make_answer_bundle(["Inspect the seal."])
    r = validate_text(bundle, "The seal is made of graphite [C0].", policy)
    assert r.validation_status == "PASSED" and r.grounding_metrics.verifier is None
    assert validate_text(bundle, "Inspect 4 seals [C0].", policy).failure_reason == (
        "UNSUPPORTED_NEW_FACT"
    )
