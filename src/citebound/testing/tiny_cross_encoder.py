"""A tiny ONNX cross-encoder that a test builds itself, in the layout of a real export.

No cross-encoder ships in any installable package, and the real loading and scoring code must
still run in CI without torch. So this writes what `optimum-cli export onnx` writes for
`cross-encoder/ms-marco-MiniLM-L-6-v2` (model.onnx with inputs input_ids, attention_mask,
token_type_ids and output `logits` (batch, 1); a WordPiece tokenizer.json with the BERT pair
template), but with a graph whose score can be worked out by hand:

    logit = sum over content words w of  count(w in the query) * count(w in the text)

i.e. one-hot word embeddings (Gather), segment sums weighted by attention_mask and
token_type_ids, their product, and a MatMul to one logit. Stopwords and special tokens have
zero embeddings, so they never count. Needs the `onnx` package (the `test` extra).

    >>> path = write_tiny_cross_encoder(tmp_path / "xenc")                # doctest: +SKIP
    >>> OnnxCrossEncoderReranker(path).scores("pump torque", ["torque of the pump"])  # +SKIP
    [2.0]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
STOPWORDS = ("the", "of", "for", "what", "is", "to", "a", "and", "in")
CONTENT_WORDS = (
    "pump",
    "bolt",
    "bolts",
    "torque",
    "impeller",
    "valve",
    "leak",
    "seal",
    "planet",
    "safety",
    "nm",
    "40",
)
_SEP_ID = SPECIALS.index("[SEP]")


def write_tokenizer(path: Path, words: Sequence[str]) -> None:
    """A lowercasing WordPiece tokenizer.json with BERT's `[CLS] A [SEP] B [SEP]` pair template."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {tok: i for i, tok in enumerate((*SPECIALS, *words))}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.BertProcessing(
        ("[SEP]", vocab["[SEP]"]), ("[CLS]", vocab["[CLS]"])
    )
    # Exports carry a padding section; the reranker must read pad_id from it and then pad itself.
    tok.enable_padding(pad_id=vocab["[PAD]"], pad_token="[PAD]")
    tok.save(str(path))


def _save(graph: object, path: Path) -> None:
    from onnx import checker, helper, save

    model = helper.make_model(
        graph,  # type: ignore[arg-type]
        opset_imports=[helper.make_opsetid("", 17)],
        producer_name="citebound-tiny-cross-encoder",
    )
    model.ir_version = 8  # readable by every onnxruntime >= 1.17 that citebound allows
    checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    save(model, str(path))


def write_tiny_cross_encoder(
    path: Path,
    *,
    token_type_ids: bool = True,
    n_labels: int = 1,
    static_labels: bool = True,
    layout: Literal["flat", "onnx-subdir"] = "flat",
    max_position_embeddings: int | None = None,
    label_weights: Sequence[float] | None = None,
) -> Path:
    """Write the tiny cross-encoder into directory `path` and return `path`.

    Args:
        token_type_ids: With False the model has no token_type_ids input and finds the text
            segment itself (tokens after the first [SEP]): same scores, other signature.
        n_labels: Output labels (each the same overlap score); > 1 must be refused.
        static_labels: Let the label count be known from the graph (else only at run time).
        layout: "flat" = path/model.onnx; "onnx-subdir" = path/onnx/model.onnx (the Hub layout).
        max_position_embeddings: When set, written to config.json (as an export has it).
        label_weights: Per-label multiplier of the overlap score (default all 1), e.g.
            `(1, 0, 0)` for an NLI-like head whose first label grows with the overlap.
    """
    from onnx import TensorProto, helper, numpy_helper

    words = (*STOPWORDS, *CONTENT_WORDS)
    vocab_size = len(SPECIALS) + len(words)
    emb = np.zeros((vocab_size, len(CONTENT_WORDS)), dtype=np.float32)
    for k, word in enumerate(CONTENT_WORDS):
        emb[len(SPECIALS) + words.index(word), k] = 1.0
    inits = [
        numpy_helper.from_array(emb, "word_embeddings"),
        numpy_helper.from_array(
            np.ones((len(CONTENT_WORDS), 1), np.float32)
            * np.asarray(label_weights or [1.0] * n_labels, np.float32)[None, :],
            "head",
        ),
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
        numpy_helper.from_array(np.array([2], np.int64), "axis2"),
    ]
    node = helper.make_node
    nodes = [
        node("Gather", ["word_embeddings", "input_ids"], ["emb"], axis=0),  # (B, L, K)
        node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
    ]
    if token_type_ids:
        nodes.append(node("Cast", ["token_type_ids"], ["segment"], to=TensorProto.FLOAT))
    else:  # segment B = after the first [SEP]: exclusive running count of [SEP] tokens, capped
        nodes += [
            node("Equal", ["input_ids", "sep_id"], ["is_sep_b"]),
            node("Cast", ["is_sep_b"], ["is_sep"], to=TensorProto.FLOAT),
            node("CumSum", ["is_sep", "axis1"], ["seps_before"], exclusive=1),
            node("Min", ["seps_before", "one"], ["segment"]),
        ]
        inits += [
            numpy_helper.from_array(np.array(1.0, np.float32), "one"),
            numpy_helper.from_array(np.array(_SEP_ID, np.int64), "sep_id"),
        ]
    nodes += [
        node("Mul", ["mask", "segment"], ["w_text"]),
        node("Sub", ["mask", "w_text"], ["w_query"]),
        node("Unsqueeze", ["w_query", "axis2"], ["w_query3"]),
        node("Unsqueeze", ["w_text", "axis2"], ["w_text3"]),
        node("Mul", ["emb", "w_query3"], ["emb_query"]),
        node("Mul", ["emb", "w_text3"], ["emb_text"]),
        node("ReduceSum", ["emb_query", "axis1"], ["count_query"], keepdims=0),  # (B, K)
        node("ReduceSum", ["emb_text", "axis1"], ["count_text"], keepdims=0),
        node("Mul", ["count_query", "count_text"], ["overlap"]),
        node("MatMul", ["overlap", "head"], ["scores" if not static_labels else "logits"]),
    ]
    if not static_labels:  # reshape to (batch, -1) from a runtime shape: no inference can
        # tell the label count, as in exports whose last dimension is symbolic
        nodes += [
            node("Shape", ["input_ids"], ["ids_shape"], start=0, end=1),
            node("Concat", ["ids_shape", "minus_one"], ["target"], axis=0),
            node("Reshape", ["scores", "target"], ["logits"]),
        ]
        inits.append(numpy_helper.from_array(np.array([-1], np.int64), "minus_one"))
    names = ["input_ids", "attention_mask", *(["token_type_ids"] if token_type_ids else [])]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in names]
    label_dim: int | str = n_labels if static_labels else "labels"
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", label_dim])
    graph = helper.make_graph(nodes, "tiny_cross_encoder", inputs, [output], inits)

    path = Path(path)
    _save(graph, path / ("onnx/model.onnx" if layout == "onnx-subdir" else "model.onnx"))
    path.mkdir(parents=True, exist_ok=True)
    write_tokenizer(path / "tokenizer.json", words)
    if max_position_embeddings is not None:
        config = {"model_type": "bert", "max_position_embeddings": max_position_embeddings}
        (path / "config.json").write_text(json.dumps(config), "utf-8")
    return path


def write_sentence_embedder(path: Path) -> Path:
    """A model.onnx that is not a cross-encoder: output last_hidden_state (batch, seq, hidden)."""
    from onnx import TensorProto, helper, numpy_helper

    words = (*STOPWORDS, *CONTENT_WORDS)
    table = np.eye(len(SPECIALS) + len(words), 4, dtype=np.float32)
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
        for n in ("input_ids", "attention_mask")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "seq", 4]
    )
    gather = helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)
    graph = helper.make_graph(
        [gather], "embedder", inputs, [output], [numpy_helper.from_array(table, "table")]
    )
    _save(graph, Path(path) / "model.onnx")
    write_tokenizer(Path(path) / "tokenizer.json", words)
    return Path(path)


def write_image_model(path: Path) -> Path:
    """A model.onnx with a (batch, 1) output but image inputs: must be refused by its inputs."""
    from onnx import TensorProto, helper

    pixels = helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, ["batch", 3])
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    reduce = helper.make_node("ReduceSum", ["pixel_values"], ["logits"], keepdims=1)
    _save(helper.make_graph([reduce], "image", [pixels], [output]), Path(path) / "model.onnx")
    write_tokenizer(Path(path) / "tokenizer.json", CONTENT_WORDS)
    return Path(path)


def write_tiny_nli(
    path: Path, labels: Sequence[str] = ("entailment", "neutral", "contradiction")
) -> Path:
    """A tiny NLI classifier export: logits (overlap, 0, 0, ...) over `labels`, so
    P(entailment) = e^overlap / (e^overlap + n_labels - 1) with overlap as in the cross-encoder
    (content words shared by premise and hypothesis, counted with multiplicity)."""
    weights = [1.0] + [0.0] * (len(labels) - 1)
    write_tiny_cross_encoder(path, n_labels=len(labels), label_weights=weights)
    config = {"model_type": "bert", "id2label": {str(i): name for i, name in enumerate(labels)}}
    (Path(path) / "config.json").write_text(json.dumps(config), "utf-8")
    return Path(path)
