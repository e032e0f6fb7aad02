"""The optional ONNX entailment model: loaded from a real export layout, scored, mixed in.

The model is the tiny classifier the test builds (testing/tiny_cross_encoder.py): logits
(overlap, 0, 0), so P(entailment) = e^overlap / (e^overlap + 2) can be worked out by hand.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from citebound.errors import ConfigError
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.testing.tiny_cross_encoder import write_tiny_cross_encoder, write_tiny_nli
from citebound.validate import validate_text
from citebound.validate.analysis import support_params
from citebound.validate.nli import OnnxNLIModel, load_nli
from citebound.validate.support import rule_score, sentence_support

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


def test_score_joins_the_decision(tmp_path: Path) -> None:
    path = write_tiny_nli(tmp_path / "nli")
    nli = load_nli(str(path)).entailment_probability
    params = replace(support_params(load_policy("strict-v1")), nli_weight=0.5)
    evidence = "Torque the pump bolts to 40 nm."
    plain = sentence_support("The pump bolts take 40 nm of torque.", evidence, params)
    mixed = sentence_support("The pump bolts take 40 nm of torque.", evidence, params, nli=nli)
    # The lexical rule scores the sentence (all but "take" covered); the premise is the best
    # window, the evidence sentence: overlap torque+pump+bolts+40+nm = 5.
    assert plain.features is not None and plain.features.missing_words == 1
    assert plain.score == pytest.approx(rule_score(plain.features, params.weights), abs=1e-6)
    assert mixed.score == pytest.approx(0.5 * plain.score + 0.5 * _p(5), abs=1e-6)


def test_policy_path_reaches_the_validator(tmp_path: Path) -> None:
    path = write_tiny_nli(tmp_path / "nli")
    strict = load_policy("strict-v1")
    vp = strict.validation.model_copy(
        update={
            "nli_model_path": str(path),
            "nli_weight": 1.0,
            "support_window": 1,
            "min_sentence_support": 0.85,
        }
    )
    policy = strict.evolve(validation=vp)
    bundle = make_answer_bundle(["Torque the pump bolts to 40 Nm. Inspect the seal."])
    # Lexically complete (passes without the model), but the tiny model's premise, the best
    # one-sentence window "Inspect the seal.", shares only "seal": P = e^1/(e^1+2) < 0.85 -> LOW_SUPPORT.
    text = "Inspect the seal and the bolts [C0]."
    assert validate_text(bundle, text, strict).validation_status == "PASSED"
    r = validate_text(bundle, text, policy)
    assert r.failure_reason == "LOW_SUPPORT", r.message
    assert r.grounding_metrics.min_support == pytest.approx(_p(1), abs=1e-6)
    broken = strict.evolve(
        validation=strict.validation.model_copy(update={"nli_model_path": str(tmp_path / "x")})
    )
    failed = validate_text(bundle, "Inspect the seal [C0].", broken)
    assert failed.failure_reason == "INTERNAL_ERROR"  # fails closed, never passes unchecked
