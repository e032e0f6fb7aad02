"""Optional entailment model for the support check: a local ONNX sequence classifier.

`[validation] nli_model_path` names an export the user brings (nothing is downloaded), in the
layout `optimum-cli export onnx --task text-classification` writes for an NLI or fact-checking
model (e.g. a MiniLM/DeBERTa MNLI head):

    DIR/model.onnx (or DIR/onnx/model.onnx)   inputs input_ids, attention_mask[, token_type_ids]
    DIR/tokenizer.json                        output logits (batch, n_labels), n_labels >= 2
    DIR/config.json                           id2label naming the entailment class

The entailment class is the label whose name contains `entail`, `support` or `consistent`
(case-insensitive); a model without one is refused (ConfigError), since guessing the class
would silently invert the check. The score of (premise = cited evidence span, hypothesis =
answer sentence) is the softmax probability of that class. onnxruntime + tokenizers only.
"""

from __future__ import annotations

import json
import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from citebound.errors import ConfigError
from citebound.rerank.base import find_onnx_files

_ENTAILMENT = re.compile(r"entail|support|consistent", re.IGNORECASE)
_INT_DTYPES: dict[str, Any] = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}
DEFAULT_MAX_LENGTH = 512


def _entailment_index(config: Path) -> tuple[int, int]:
    """(index of the entailment label, number of labels) from config.json's id2label."""
    try:
        labels = json.loads(config.read_text("utf-8"))["id2label"]
        names = {int(k): str(v) for k, v in labels.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise ConfigError(
            f"NLI model needs config.json with id2label naming its classes ({config}: {err})",
            field="validation.nli_model_path",
            source=str(config),
        ) from None
    hits = [i for i, name in sorted(names.items()) if _ENTAILMENT.search(name)]
    if len(hits) != 1 or len(names) < 2:
        raise ConfigError(
            f"{config}: id2label {names} must name exactly one entailment class "
            "(entail/support/consistent) among 2 or more",
            field="validation.nli_model_path",
            source=str(config),
        )
    return hits[0], len(names)


class OnnxNLIModel:
    """P(entailment) of (premise, hypothesis) pairs from an ONNX sequence classifier.

    Raises:
        ConfigError: missing files, a model whose inputs/outputs are not a classifier's, or
            an id2label without a single entailment class.
    """

    def __init__(self, path: Path, *, max_length: int = DEFAULT_MAX_LENGTH) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        path = Path(path)
        files = find_onnx_files(path) if path.exists() else None
        if files is None:
            raise ConfigError(
                f"no ONNX NLI model at {path}: model.onnx (or onnx/model.onnx) missing",
                field="validation.nli_model_path",
                source=str(path),
            )
        model_file, tokenizer_file = files
        config = next(
            (d / "config.json" for d in (model_file.parent, tokenizer_file.parent)
             if (d / "config.json").is_file()),
            tokenizer_file.parent / "config.json",
        )  # fmt: skip
        self.entailment, self.n_labels = _entailment_index(config)
        self.name = f"onnx-nli:{tokenizer_file.parent.name}"
        try:
            self._tok = Tokenizer.from_file(str(tokenizer_file))
        except Exception as err:  # tokenizers raises a bare Exception for a bad file
            raise ConfigError(f"cannot read {tokenizer_file}: {err}", source=str(path)) from None
        pad = self._tok.padding
        self._pad_id = int(pad["pad_id"]) if pad else (self._tok.token_to_id("[PAD]") or 0)
        self._tok.enable_truncation(max_length=max_length, strategy="longest_first")
        self._tok.no_padding()
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self._session = ort.InferenceSession(
                str(model_file), opts, providers=["CPUExecutionProvider"]
            )
        except Exception as err:  # onnxruntime raises its own Fail/InvalidGraph types
            raise ConfigError(f"cannot load ONNX model {model_file}: {err}") from None
        inputs = {i.name: i.type for i in self._session.get_inputs()}
        allowed = {"input_ids", "attention_mask", "token_type_ids"}
        if not {"input_ids", "attention_mask"} <= set(inputs) or set(inputs) - allowed:
            raise ConfigError(f"{model_file} is not a text classifier: inputs {sorted(inputs)}")
        if any(t not in _INT_DTYPES for t in inputs.values()):
            raise ConfigError(f"{model_file}: inputs must be int64/int32 tensors")
        self._feeds = {n: _INT_DTYPES[t] for n, t in inputs.items()}
        outputs = [o.name for o in self._session.get_outputs()]
        self._output = "logits" if "logits" in outputs else outputs[0]
        self._lock = threading.Lock()

    def entailment_probability(self, premise: str, hypothesis: str) -> float:
        """Softmax probability of the entailment class for one pair."""
        enc = self._tok.encode(premise, hypothesis)
        ids = np.array([enc.ids], dtype=np.int64)
        arrays = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
        }
        feeds = {n: arrays[n].astype(dtype) for n, dtype in self._feeds.items()}
        with self._lock:
            logits = np.asarray(self._session.run([self._output], feeds)[0], dtype=np.float64)
        if logits.shape != (1, self.n_labels):
            raise ConfigError(
                f"{self.name}: logits of shape {logits.shape}, config.json names "
                f"{self.n_labels} labels"
            )
        z = logits[0] - logits[0].max()
        probs = np.exp(z) / np.exp(z).sum()
        return float(probs[self.entailment])


@lru_cache(maxsize=4)
def load_nli(path: str) -> OnnxNLIModel:
    """The model at `path`, loaded once per process."""
    return OnnxNLIModel(Path(path))
