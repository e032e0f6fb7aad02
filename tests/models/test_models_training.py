"""The training pipeline end to end on a tiny model: fine-tune, export, quantize, load.

CI never trains for real; this keeps the code that rebuilds the shipped models alive. It needs
the `train` extra (torch 2.13.0 CPU, transformers); without it the tests skip with the reason.
A two-layer BERT with a 30-word vocabulary learns for a few steps on a few dozen pairs; the
export must give an int8 ONNX model that the run-time loader (validate/nli.py) reads, whose
verdicts agree with the float model's, and whose int8 weights cannot saturate the AVX2 kernel.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from citebound.testing.tiny_cross_encoder import CONTENT_WORDS, STOPWORDS, write_tokenizer
from citebound.validate.nli import OnnxNLIModel

torch = pytest.importorskip("torch", reason="needs the train extra (torch 2.13.0 CPU)")
transformers = pytest.importorskip("transformers", reason="needs the train extra")
pytest.importorskip("onnx", reason="needs the test extra (onnx)")

from training.common import Pair, write_jsonl  # noqa: E402
from training.export import export  # noqa: E402
from training.finetune import parser, roc_auc, train  # noqa: E402

WORDS = (*STOPWORDS, *CONTENT_WORDS)


def _tiny_base(folder: Path) -> Path:
    folder.mkdir(parents=True)
    write_tokenizer(folder / "tokenizer.json", WORDS)
    config = transformers.BertConfig(
        vocab_size=5 + len(WORDS), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=64,
    )  # fmt: skip
    torch.manual_seed(0)
    transformers.BertModel(config).save_pretrained(str(folder))
    return folder


def _pairs() -> list[Pair]:
    out = []
    for i, word in enumerate(CONTENT_WORDS):
        other = CONTENT_WORDS[(i + 3) % len(CONTENT_WORDS)]
        out.append(Pair(f"the {word} is to the {other}", f"the {word}", 1, "tiny", "copy"))
        out.append(
            Pair(f"the {word} is to the {other}", f"a {CONTENT_WORDS[i - 1]}", 0, "tiny", "x")
        )
    return out * 3


@pytest.mark.slow
def test_finetune_export_quantize_and_load(tmp_path: Path) -> None:
    base = _tiny_base(tmp_path / "base")
    data = tmp_path / "data"
    pairs = _pairs()
    write_jsonl(data / "train.jsonl", pairs)
    write_jsonl(data / "dev.jsonl", pairs[:24])
    args = parser().parse_args(
        ["--data", str(data), "--out", str(tmp_path / "model"), "--base", str(base),
         "--max-steps", "6", "--batch", "8", "--epochs", "1", "--evals-per-epoch", "2",
         "--max-length", "32", "--threads", "1", "--written-repeat", "1"]
    )  # fmt: skip
    summary = train(args)
    assert summary["steps"] == 6 and summary["curve"], summary
    trained = json.loads((tmp_path / "model" / "training.json").read_text())
    assert trained["max_length"] == 32

    out = tmp_path / "onnx"
    report = export(tmp_path / "model", out, data, sample=16)
    assert {p.name for p in out.iterdir()} >= {"model.onnx", "tokenizer.json", "config.json"}
    assert report["agreement_at_0.5"] is not None and report["agreement_at_0.5"] >= 0.9
    assert report["int8_bytes"] < report["float_bytes"]
    model = OnnxNLIModel(out)
    assert (model.entailment, model.n_labels, model.max_length) == (1, 2, 32)
    scores = model.entailment_probabilities([(p.premise, p.claim) for p in pairs[:8]])
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert len(model.sha256) == 64


def test_roc_auc_matches_the_pairwise_definition() -> None:
    rng = np.random.default_rng(0)
    scores = [float(x) for x in rng.integers(0, 5, 40)]  # many ties
    labels = [int(x) for x in rng.integers(0, 2, 40)]
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    pairwise = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))
    assert roc_auc(scores, labels) == pytest.approx(pairwise)


def test_frozen_bottom_gives_the_full_models_logits_and_trains_only_the_top(
    tmp_path: Path,
) -> None:
    from training import frozen, heads
    from training.finetune import Encoder

    base = _tiny_base(tmp_path / "base")
    model = heads.build(str(base), "mean").eval()
    enc = Encoder(base / "tokenizer.json", 32)
    feats = enc(_pairs()[:6])
    with torch.no_grad():
        full = model(**feats).logits
        cached = frozen.bottom(model, 1, feats)
        split = frozen.top(model, 1, cached)
    assert [int(c.shape[0]) for c in cached] == feats["attention_mask"].sum(1).tolist()
    assert torch.allclose(full, split, atol=1e-2)  # the cache is float16
    trainable = {id(p) for p in frozen.freeze(model, 1)}
    bert = model.encoder  # type: ignore[attr-defined]
    assert not any(id(p) in trainable for p in bert.embeddings.parameters())
    assert not any(id(p) in trainable for p in bert.encoder.layer[0].parameters())
    assert all(id(p) in trainable for p in bert.encoder.layer[1].parameters())


def test_finetune_with_frozen_layers_runs_and_saves(tmp_path: Path) -> None:
    base = _tiny_base(tmp_path / "base")
    data = tmp_path / "data"
    write_jsonl(data / "train.jsonl", _pairs())
    write_jsonl(data / "dev.jsonl", _pairs()[:24])
    args = parser().parse_args(
        ["--data", str(data), "--out", str(tmp_path / "model"), "--base", str(base),
         "--max-steps", "4", "--batch", "8", "--epochs", "1", "--evals-per-epoch", "1",
         "--max-length", "32", "--threads", "1", "--written-repeat", "1", "--head", "mean",
         "--freeze-layers", "1"]
    )  # fmt: skip
    summary = train(args)
    assert summary["steps"] == 4 and summary["freeze_layers"] == 1
    from training import heads

    loaded = heads.load(tmp_path / "model")  # as the export reads it
    assert loaded(**_feats(base)).logits.shape == (2, 2)


def _feats(base: Path) -> dict[str, object]:
    from training.finetune import Encoder

    return dict(Encoder(base / "tokenizer.json", 32)(_pairs()[:2]))


def test_length_cue_reads_the_label_off_the_claims_length() -> None:
    from training.verifier.build import length_cue

    long_true = [Pair("p", "a b c d e f", 1, "cued", "k"), Pair("p", "a b c d e", 1, "cued", "k")]
    short_false = [Pair("p", "a b", 0, "cued", "k"), Pair("p", "a b c", 0, "cued", "k")]
    even = [Pair("p", "a b c", 1, "even", "k"), Pair("p", "x y z", 0, "even", "k")]
    one_label = [Pair("p", "a", 1, "single", "k")]
    got = length_cue([*long_true, *short_false, *even, *one_label])
    assert got == {"cued": 1.0, "even": 0.5}


def test_balance_length_leaves_no_length_cue() -> None:
    from training.verifier.build import balance_length, length_cue

    pairs = [Pair("p", "w " * n, 1, "s", "k") for n in (3, 4, 4, 6, 6, 6)]
    pairs += [Pair("p", "w " * n, 0, "s", "k") for n in (2, 4, 6, 6)]
    kept = balance_length(pairs, seed=1)
    by = sorted((len(p.claim.split()), p.label) for p in kept)
    assert by == [(4, 0), (4, 1), (6, 0), (6, 0), (6, 1), (6, 1)]
    assert length_cue(kept) == {"s": 0.5}
    assert balance_length(pairs, seed=1) == kept  # seeded
