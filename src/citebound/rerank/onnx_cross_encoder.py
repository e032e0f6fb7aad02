"""Cross-encoder reranker on onnxruntime + tokenizers (no torch at run time).

Loads the layout of a standard ONNX export of a Hugging Face cross-encoder, e.g. what
`optimum-cli export onnx --model cross-encoder/ms-marco-MiniLM-L-6-v2 DIR` writes:

    DIR/model.onnx            (or DIR/onnx/model.onnx, the layout of the Hub's onnx/ folder)
    DIR/tokenizer.json
    DIR/config.json           optional: max_position_embeddings caps max_length
    DIR/tokenizer_config.json optional: model_max_length is the default max_length

`model_path` may also name one `.onnx` file (e.g. a quantized `onnx/model_qint8_avx2.onnx`);
tokenizer.json is then looked up beside it and in its parent directory. Nothing is downloaded.

Scoring follows sentence-transformers' `CrossEncoder.predict` for a one-label model: each
(query, text) pair is encoded as one sequence pair, truncated 'longest_first' to `max_length`,
and its score is the raw logit (sentence-transformers reports sigmoid(logit); the order is the
same, and the logit keeps its resolution where the sigmoid saturates). Models with more than
one output label (NLI heads, two-class relevance heads) are refused with a ConfigError: which
label means "relevant" is not knowable from the export, and a guess would silently rank by the
wrong class.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from citebound.errors import ConfigError
from citebound.models import session
from citebound.rerank.base import find_onnx_files, order_by_scores

DEFAULT_MAX_LENGTH = 512
_REQUIRED_INPUTS = ("input_ids", "attention_mask")
_OPTIONAL_INPUTS = ("token_type_ids",)
_INT_DTYPES: dict[str, type[np.signedinteger[Any]]] = {
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
}


def _json_int(path: Path, key: str) -> int | None:
    """An integer setting from an optional JSON file (None when absent or not a sane int)."""
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text("utf-8")).get(key)
    except (ValueError, AttributeError, UnicodeDecodeError):
        return None
    # Hugging Face writes model_max_length = 1e30 for "no limit": not a usable cap.
    return value if isinstance(value, int) and 0 < value < 1_000_000 else None


def _model_limits(*dirs: Path) -> tuple[int | None, int | None]:
    """(tokenizer_config model_max_length, config max_position_embeddings) from the model's
    and the tokenizer's directories (the export's root when the model sits in onnx/)."""
    tok = next(
        (v for d in dirs if (v := _json_int(d / "tokenizer_config.json", "model_max_length"))),
        None,
    )
    pos = next(
        (v for d in dirs if (v := _json_int(d / "config.json", "max_position_embeddings"))), None
    )
    return tok, pos


class OnnxCrossEncoderReranker:
    """Scores (query, chunk text) pairs with an ONNX cross-encoder; sorts by score desc.

    Args:
        path: An export directory (model.onnx or onnx/model.onnx, tokenizer.json) or one
            `.onnx` file with tokenizer.json beside it or one level up.
        batch_size: Pairs per forward pass. Pairs are batched by token length (less padding);
            scores do not depend on the batch size beyond float rounding.
        max_length: Token cap per pair, special tokens included; 0 = the model's own
            (tokenizer_config.json model_max_length, else config.json max_position_embeddings,
            else 512).
        threads: onnxruntime intra-op threads (0 = onnxruntime's default).

    Raises:
        ConfigError: missing files, or a model whose inputs or outputs are not a cross-encoder's.
    """

    def __init__(
        self, path: Path, *, batch_size: int = 32, max_length: int = 0, threads: int = 0
    ) -> None:
        from tokenizers import Tokenizer

        path = Path(path)
        if not path.exists():
            raise ConfigError(f"no cross-encoder at {path}: the path does not exist")
        files = find_onnx_files(path)
        if files is None:
            raise ConfigError(
                f"no ONNX cross-encoder at {path}: model.onnx (or onnx/model.onnx) missing",
                source=str(path),
            )
        model_file, tokenizer_file = files
        # The export's directory names the model; a single file chosen among variants
        # (quantized, optimized) is named too, since its scores differ.
        label = tokenizer_file.parent.name + (f"/{path.name}" if path.is_file() else "")
        self.name = f"onnx-cross-encoder:{label}"
        self.batch_size = batch_size
        limits = _model_limits(*dict.fromkeys((model_file.parent, tokenizer_file.parent)))
        self.max_length = self._resolve_max_length(limits, max_length)

        try:
            self._tok = Tokenizer.from_file(str(tokenizer_file))
        except Exception as err:  # tokenizers raises a bare Exception for a bad file
            raise ConfigError(f"cannot read {tokenizer_file}: {err}", source=str(path)) from None
        pad = self._tok.padding
        self._pad_id = int(pad["pad_id"]) if pad else (self._tok.token_to_id("[PAD]") or 0)
        # Set once here, never per call: the Tokenizer is then safe to share across threads.
        self._tok.enable_truncation(max_length=self.max_length, strategy="longest_first")
        self._tok.no_padding()

        # Same settings as every model (no spinning threads: they would steal the shared cores);
        # inter_op_threads=0 is what this session always had. ConfigError if it cannot load.
        self._session = session(model_file, threads=threads, inter_op_threads=0, source=str(path))
        self._feeds, self._output = self._check_signature(model_file)

    @staticmethod
    def _resolve_max_length(limits: tuple[int | None, int | None], requested: int) -> int:
        tok_limit, pos_limit = limits
        if requested and pos_limit and requested > pos_limit:
            raise ConfigError(
                f"rerank max_length {requested} exceeds the model's "
                f"max_position_embeddings {pos_limit}",
                field="rerank.max_length",
            )
        return requested or tok_limit or pos_limit or DEFAULT_MAX_LENGTH

    def _check_signature(self, model_file: Path) -> tuple[dict[str, Any], str]:
        """Input name -> numpy int dtype, and the name of the logits output."""
        inputs = {i.name: i.type for i in self._session.get_inputs()}
        allowed = (*_REQUIRED_INPUTS, *_OPTIONAL_INPUTS)
        if any(n not in inputs for n in _REQUIRED_INPUTS) or any(n not in allowed for n in inputs):
            raise ConfigError(
                f"{model_file} is not a cross-encoder: its inputs are {sorted(inputs)}; "
                "expected input_ids, attention_mask and optionally token_type_ids",
                source=str(model_file),
            )
        bad = sorted(n for n, t in inputs.items() if t not in _INT_DTYPES)
        if bad:
            raise ConfigError(
                f"{model_file}: inputs {bad} are not int64/int32 tensors", source=str(model_file)
            )
        outputs = {o.name: o.shape for o in self._session.get_outputs()}
        name = "logits" if "logits" in outputs else next(iter(outputs))
        if "logits" not in outputs and len(outputs) != 1:
            raise ConfigError(
                f"{model_file} has no 'logits' output (outputs: {sorted(outputs)})",
                source=str(model_file),
            )
        shape = outputs[name]
        if len(shape) != 2:
            raise ConfigError(
                f"{model_file}: output '{name}' has shape {shape}; a cross-encoder's logits are "
                "(batch, 1) — is this a sentence embedder?",
                source=str(model_file),
            )
        if isinstance(shape[1], int) and shape[1] != 1:
            raise self._multi_label(model_file, shape[1])
        return {n: _INT_DTYPES[t] for n, t in inputs.items()}, name

    @staticmethod
    def _multi_label(model_file: Path, labels: int) -> ConfigError:
        return ConfigError(
            f"{model_file} has {labels} output labels; the reranker needs a one-label "
            "relevance model (num_labels = 1, like cross-encoder/ms-marco-MiniLM-L-6-v2)",
            source=str(model_file),
        )

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score (the raw logit) per text, in input order."""
        if not texts:
            return []
        encodings = self._tok.encode_batch([(query, t) for t in texts])
        lengths = np.array([len(e.ids) for e in encodings])
        order = np.argsort(lengths, kind="stable")  # batch by length: less padding
        out = np.zeros(len(texts), dtype=np.float64)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._run([encodings[i] for i in idx], int(lengths[idx].max()))
        return [float(x) for x in out]

    def _run(self, encodings: Sequence[Any], width: int) -> npt.NDArray[np.float64]:
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n] = enc.ids
            mask[row, :n] = 1
            types[row, :n] = enc.type_ids
        arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        feeds = {n: arrays[n].astype(dtype) for n, dtype in self._feeds.items()}
        logits = np.asarray(self._session.run([self._output], feeds)[0])
        if logits.ndim != 2 or logits.shape[0] != len(encodings):
            raise ConfigError(f"{self.name}: logits of shape {logits.shape}, not (batch, 1)")
        if logits.shape[1] != 1:  # a symbolic label dimension is only known now
            raise self._multi_label(Path(self.name), int(logits.shape[1]))
        return logits[:, 0].astype(np.float64)

    def rerank(self, query: str, chunk_ids: Sequence[str], texts: Sequence[str]) -> list[str]:
        return order_by_scores(chunk_ids, self.scores(query, texts))
