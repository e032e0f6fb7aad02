"""Grounding benchmark: the shipped validator (verifier model + hard checks) on held-out data.

For every shipped preset, caught (unsupported answers failed) / passed (supported answers
passed) / balanced accuracy on sets the verifier never trained on:

- HaluEval dev holdout half (odd items of ../shared/data/halueval-dev; QA, summarization,
  dialogue): evidence the single chunk C0, every sentence of the right and the hallucinated
  output cited `[C0]`;
- SciFact train claims held out from training (claim_id % 5 == 0): the claim citing its
  abstract; SUPPORT must pass, CONTRADICT and NEI fail;
- chat answers (benchmarks/data/chat_answers.jsonl): 90 cited answers in the style a chat LLM
  writes over the sample corpus and F´ UsersGuide, half with exactly one subtle unsupported
  claim (number, entity, relation, modal, overgeneralisation, extrinsic, wrong chunk).

An answer counts as flagged when the validator fails it or passes it with low confidence.
Beside them, in the same run: the word-coverage baseline (flag when any answer word is absent
from the evidence); and, from benchmarks/results/grounding_r5v6.json, the word-rule validator
r5-v6 that this model replaced (measured on the same sets at commit 7b33aa8).

Cost: median CPU and wall ms of one validation of a five-sentence answer (sentences of
HaluEval summaries over their article, strict-v1), and the cold start a CLI user sees (a fresh
interpreter importing the validator, loading the model and validating once).

    PYTHONPATH=src python benchmarks/bench_grounding.py [--limit N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from _grounding_sets import Row, chat_rows, measure, scifact_rows

import citebound.validate.analysis as analysis
from citebound.eval.data import dataset_dir
from citebound.eval.grounding import (
    SPLITS,
    HaluItem,
    baseline_flags,
    holdout_half,
    load_split,
    score,
    validator_flags,
)
from citebound.policy import PRESETS, load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.text import split_sentences
from citebound.text.sanitize import safe_normalize_v1
from citebound.validate import validate_text
from citebound.validate.verifier import Verdict, judge

RECORDED = Path(__file__).resolve().parent / "results" / "grounding_r5v6.json"


def _cached_judge() -> None:
    """The presets share the verifier: score each (sentence, evidence) once per run."""
    memo: dict[tuple[str, str], Verdict] = {}

    def cached(model, claims):  # type: ignore[no-untyped-def]
        todo = [c for c in dict.fromkeys(claims) if c not in memo]
        memo.update(zip(todo, judge(model, todo), strict=True))
        return [memo[c] for c in claims]

    analysis.judge = cached  # type: ignore[assignment]


def _row_passes(policy_name: str) -> Callable[[Row], bool]:
    policy = load_policy(policy_name)

    def passes(r: Row) -> bool:
        texts = [safe_normalize_v1(t) for t in r[0]]
        b = make_answer_bundle(texts, question=r[1], policy=policy)
        res = validate_text(b, r[2], policy)
        return res.validation_status.value == "PASSED" and not res.grounding_metrics.low_confidence

    return passes


def _word_baseline(r: Row) -> bool:
    item = HaluItem(" ".join(r[0]), r[1], "", "")
    return not baseline_flags(item, re.sub(r"\[C\d+\]", "", r[2]))


def _fmt(name: str, m: dict[str, float]) -> str:
    return f"  {name:<40} {m['caught']:>7.3f} {m['passed']:>7.3f} {m['balanced']:>9.3f}   n={m['n']}"


def _five_sentence_answers(items: list[HaluItem]) -> list[tuple[HaluItem, str]]:
    out: list[tuple[HaluItem, str]] = []
    for item in items:
        sentences = split_sentences(item.right) + split_sentences(item.hallucinated)
        if len(sentences) >= 5:
            out.append((item, " ".join(f"{s.rstrip('.')} [C0]." for s in sentences[:5])))
    return out


_COLD = """
import time; t0 = time.perf_counter()
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.validate import validate_text
p = load_policy("strict-v1")
b = make_answer_bundle(["The pump runs at 45 bar. Inspect the relief valve every 6 months."])
validate_text(b, "The pump runs at 45 bar [C0]. Inspect the relief valve every 6 months [C0].", p)
print((time.perf_counter() - t0) * 1000)
"""


def _cost(items: list[HaluItem]) -> str:
    policy = load_policy("strict-v1")
    samples = _five_sentence_answers(items)[:120]
    bundles = [
        make_answer_bundle([safe_normalize_v1(i.knowledge)], question=i.question, policy=policy)
        for i, _ in samples
    ]
    validate_text(bundles[0], samples[0][1], policy)  # load the model before timing
    wall, cpu, base = [], [], []
    for b, (item, answer) in zip(bundles, samples, strict=True):
        t0, c0 = time.perf_counter_ns(), time.process_time_ns()
        validate_text(b, answer, policy)
        cpu.append((time.process_time_ns() - c0) / 1e6)
        wall.append((time.perf_counter_ns() - t0) / 1e6)
        c1 = time.process_time_ns()
        baseline_flags(item, answer)
        base.append((time.process_time_ns() - c1) / 1e6)
    colds = [
        float(subprocess.run([sys.executable, "-c", _COLD], check=True, capture_output=True,
                             text=True).stdout)
        for _ in range(3)
    ]  # fmt: skip
    return (
        f"median validation of a five-sentence answer (strict-v1, {len(samples)} HaluEval "
        f"summary answers over their article): {statistics.median(cpu):.1f} ms CPU, "
        f"{statistics.median(wall):.1f} ms wall; word-coverage baseline "
        f"{statistics.median(base):.3f} ms CPU (ratio {statistics.median(cpu) / max(statistics.median(base), 1e-6):.0f}x, same run)\n"
        f"cold start (fresh interpreter: import, model load, first validation): "
        f"{statistics.median(colds):.0f} ms median of 3"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="First N items of each split.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    args = parser.parse_args()
    data = dataset_dir("halueval-dev")
    shared = data.parent if data is not None else None
    _cached_judge()
    sets: dict[str, list[Row] | list[HaluItem]] = {}
    if data is not None:
        for split in SPLITS:
            sets[f"halueval-{split}-holdout"] = holdout_half(load_split(data, split))[: args.limit]
    if shared is not None and (shared / "scifact").is_dir():
        sets["scifact-heldout"] = list(scifact_rows(shared))[: args.limit]
    sets["chat"] = list(chat_rows())[: args.limit]
    recorded = json.loads(RECORDED.read_text("utf-8"))["sets"] if RECORDED.is_file() else {}
    out: dict[str, dict[str, dict[str, float]]] = {}
    print(f"  {'checker':<40} {'caught':>7} {'passed':>7} {'balanced':>9}")
    for name, rows in sets.items():
        print(f"\n{name}")
        results: dict[str, dict[str, float]] = {}
        for preset in PRESETS:
            if name.startswith("halueval"):
                policy = load_policy(preset)
                s = score(rows, lambda item, a, p=policy: validator_flags(item, a, p))  # type: ignore[arg-type]
                m = {"caught": round(s.caught, 4), "passed": round(s.passed, 4),
                     "balanced": round(s.balanced_accuracy, 4), "n": s.tp + s.fn + s.tn + s.fp}  # fmt: skip
            else:
                m = measure(rows, _row_passes(preset))  # type: ignore[arg-type]
            results[f"validator {preset}"] = m
        if name.startswith("halueval"):
            s = score(rows, baseline_flags)  # type: ignore[arg-type]
            results["baseline word coverage"] = {
                "caught": round(s.caught, 4), "passed": round(s.passed, 4),
                "balanced": round(s.balanced_accuracy, 4), "n": s.tp + s.fn + s.tn + s.fp,
            }  # fmt: skip
        else:
            results["baseline word coverage"] = measure(rows, _word_baseline)  # type: ignore[arg-type]
        old = recorded.get("strict-v1", {}).get(name)
        if old and args.limit is None:
            results["word rules r5-v6 strict-v1 (recorded)"] = old
        for k, m in results.items():
            print(_fmt(k, m))
        out[name] = results
    if data is not None:
        print("\n" + _cost(load_split(data, "summarization")))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
