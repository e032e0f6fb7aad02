"""The verifier: does the evidence a sentence cites support it? A trained cross-encoder decides.

For every cited factual sentence the validator asks one question of the model: P(supported)
of (window of the cited evidence, sentence), where the window is `premise.window` (the whole
cited text when it fits the model, else the sentences that share most with the claim, in
document order). Below `[validation] verifier_threshold` the sentence is UNSUPPORTED_CLAIM.

Which model: `[validation] nli_model_path` when set (a model the user brings), else the one
citebound ships (`citebound/models/verifier/`, or the folder `$CITEBOUND_VERIFIER_DIR` names:
`citebound.models.verifier_dir`; `verifier = "builtin"`); `verifier = "none"` turns the model
off (only the hard checks decide). The model is loaded once per process, on the
first answer that needs it, never at import.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from citebound.errors import ConfigError
from citebound.models import VERIFIER_DIR_ENV, verifier_dir
from citebound.policy import Policy
from citebound.validate.nli import OnnxNLIModel, load_nli
from citebound.validate.premise import window

# Evidence tokens the shipped model reads; the sentence gets the rest of its 192 (training used
# the same budget: training/verifier/sources.py PREMISE_BUDGET).
WINDOW_TOKENS = 128


@dataclass(frozen=True)
class Verdict:
    """The model's judgement of one sentence."""

    score: float
    window: str


def builtin_verifier() -> OnnxNLIModel:
    """The built-in verifier (`citebound.models.verifier_dir`), loaded once per process and
    folder.

    Raises:
        ConfigError: the folder holds no model file (the package was installed without it,
            or `$CITEBOUND_VERIFIER_DIR` names a folder without one).
    """
    return _load(verifier_dir())


@lru_cache(maxsize=2)
def _load(folder: Path) -> OnnxNLIModel:
    if not (folder / "model.onnx").is_file():
        raise ConfigError(
            f"the verifier model is missing ({folder / 'model.onnx'}): reinstall citebound, "
            f"set ${VERIFIER_DIR_ENV} to an exported model folder, or set [validation] "
            'verifier = "none"',
            field="validation.verifier",
        )
    return OnnxNLIModel(folder)


def verifier_for(policy: Policy) -> OnnxNLIModel | None:
    """The model `policy` asks for, or None when it turns the verifier off."""
    vp = policy.validation
    if vp.nli_model_path:
        return load_nli(vp.nli_model_path)
    if vp.verifier == "builtin":
        return builtin_verifier()
    return None


def judge(model: OnnxNLIModel, claims: Sequence[tuple[str, str]]) -> list[Verdict]:
    """Verdicts of (sentence, cited evidence text) pairs, in order, in one batched call."""
    windows = [
        window(sentence, evidence, count=model.token_count, budget=WINDOW_TOKENS)
        for sentence, evidence in claims
    ]
    scores = model.entailment_probabilities(
        [(w, sentence) for w, (sentence, _) in zip(windows, claims, strict=True)]
    )
    return [Verdict(round(s, 6), w) for s, w in zip(scores, windows, strict=True)]
