"""The verifier's model: a local ONNX sequence classifier scoring (premise, hypothesis).

citebound ships one (`citebound/models/verifier/`, trained by `make models`); `[validation]
nli_model_path` names an export the user brings instead (nothing is downloaded), in the layout
`optimum-cli export onnx --task text-classification` writes for an NLI or fact-checking model
(e.g. a MiniLM/DeBERTa MNLI head):

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
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from citebound.errors import ConfigError
from citebound.models import file_sha256, session
from citebound.rerank.base import find_onnx_files

_ENTAILMENT = re.compile(r"entail|support|consistent", re.IGNORECASE)
_INT_DTYPES: dict[str, Any] = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}
DEFAULT_MAX_LENGTH = 512
BATCH = 16  # pairs per onnxruntime call: padding waste stays small, calls few


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

    def __init__(self, path: Path, *, max_length: int = 0) -> None:
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
        self.model_file = model_file
        try:
            self._tok = Tokenizer.from_file(str(tokenizer_file))
        except Exception as err:  # tokenizers raises a bare Exception for a bad file
            raise ConfigError(f"cannot read {tokenizer_file}: {err}", source=str(path)) from None
        pad = self._tok.padding
        self._pad_id = int(pad["pad_id"]) if pad else (self._tok.token_to_id("[PAD]") or 0)
        declared = _declared_max_length(config)
        self.max_length = max_length or declared or DEFAULT_MAX_LENGTH
        # Set once here, never per call: the Tokenizer is then safe to share across threads.
        self._tok.enable_truncation(max_length=self.max_length, strategy="longest_first")
        self._tok.no_padding()
        self._session = session(model_file, field="validation.nli_model_path")
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

    @property
    def sha256(self) -> str:
        """sha256 of the model file (read once per process)."""
        return file_sha256(self.model_file)

    def token_count(self, text: str) -> int:
        """Tokens of `text` alone (no special tokens, no truncation)."""
        return len(self._tok.encode(text, add_special_tokens=False).ids) if text else 0

    def entailment_probability(self, premise: str, hypothesis: str) -> float:
        """Softmax probability of the entailment class for one pair."""
        return self.entailment_probabilities([(premise, hypothesis)])[0]

    def entailment_probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(entailment) of each (premise, hypothesis), in order. Pairs are batched by
        length (sorted, ties by position) and padded per batch: the scores do not depend on
        the batching beyond float rounding of padded positions, which attention masks out."""
        if not pairs:
            return []
        encs = self._tok.encode_batch([(p, h) for p, h in pairs])
        order = sorted(range(len(encs)), key=lambda i: (len(encs[i].ids), i))
        out = [0.0] * len(encs)
        for k in range(0, len(order), BATCH):
            chunk = order[k : k + BATCH]
            width = max(len(encs[i].ids) for i in chunk)
            ids = np.full((len(chunk), width), self._pad_id, dtype=np.int64)
            types = np.zeros_like(ids)
            mask = np.zeros_like(ids)
            for row, i in enumerate(chunk):
                e = encs[i]
                ids[row, : len(e.ids)] = e.ids
                types[row, : len(e.ids)] = e.type_ids
                mask[row, : len(e.ids)] = 1
            arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            feeds = {n: arrays[n].astype(dtype) for n, dtype in self._feeds.items()}
            with self._lock:
                raw = self._session.run([self._output], feeds)[0]
            logits = np.asarray(raw, dtype=np.float64)
            if logits.shape != (len(chunk), self.n_labels):
                raise ConfigError(
                    f"{self.name}: logits of shape {logits.shape}, config.json names "
                    f"{self.n_labels} labels"
                )
            z = logits - logits.max(axis=1, keepdims=True)
            probs = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
            for row, i in enumerate(chunk):
                out[i] = float(probs[row, self.entailment])
        return out


def _declared_max_length(config: Path) -> int | None:
    """`max_length` that config.json declares (the shipped verifier's 256), if any."""
    try:
        value = json.loads(config.read_text("utf-8")).get("max_length")
    except (OSError, ValueError, AttributeError):
        return None
    return int(value) if isinstance(value, int) and value > 0 else None


@lru_cache(maxsize=4)
def load_nli(path: str) -> OnnxNLIModel:
    """The model at `path`, loaded once per process."""
    return OnnxNLIModel(Path(path))
