"""Grounding benchmark: the validator (verifier model + hard checks) on held-out data.

For each preset, caught (unsupported answers failed) / passed (supported answers passed) /
balanced accuracy on sets the verifier never trained on:

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
from the evidence); with `--rules-src`, the validator of another checkout (the word rules
r5-v6 of main: `--rules-src ../main/src`) on the same rows, run in a subprocess with that
checkout's `citebound` first on the path; and, for full runs, the recorded r5-v6 figures of
benchmarks/results/grounding_r5v6.json.

Which model: `--model DIR` (or `$CITEBOUND_VERIFIER_DIR`) names the exported verifier folder
(model.onnx, tokenizer.json, config.json: `python -m training.export`) used as the built-in
one; `--threshold` (or `$CITEBOUND_VERIFIER_THRESHOLD`) replaces every preset's
`[validation] verifier_threshold` (`python -m training.verifier.fit` fits it). The run stops
before measuring when the model does not load: a validator that cannot load its model fails
every answer closed, which would read as everything caught.

Cost: median CPU and wall ms of one validation of a five-sentence answer (sentences of
HaluEval summaries over their article, strict-v1), and the cold start a CLI user sees (a fresh
interpreter importing the validator, loading the model and validating once).

    PYTHONPATH=src python benchmarks/bench_grounding.py [--limit N] [--model DIR]
        [--threshold T] [--preset NAME ...] [--rules-src ../main/src] [--no-cost]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _grounding_sets import Row, chat_rows, measure, scifact_rows

import citebound
import citebound.validate.analysis as analysis
from citebound.eval.data import dataset_dir
from citebound.eval.grounding import (
    SPLITS,
    HaluItem,
    baseline_flags,
    cited,
    holdout_half,
    load_split,
    score,
)
from citebound.policy import PRESETS, Policy, load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.text import split_sentences
from citebound.text.sanitize import safe_normalize_v1
from citebound.validate import validate_text
from citebound.validate.validator import VALIDATOR_VERSION

try:  # r6-v1 and later; a checkout of the word rules (r5) has no verifier
    from citebound.validate.verifier import Verdict, judge
except ImportError:  # pragma: no cover - only under --rules-src
    judge = None  # type: ignore[assignment]

HERE = Path(__file__).resolve().parent
RECORDED = HERE / "results" / "grounding_r5v6.json"
MODEL_ENV = "CITEBOUND_VERIFIER_DIR"  # citebound.models.VERIFIER_DIR_ENV (absent in r5)
THRESHOLD_ENV = "CITEBOUND_VERIFIER_THRESHOLD"
# Answers the validator failed with INTERNAL_ERROR (never a verdict on support), per preset.
ERRORS: Counter[str] = Counter()


def _cached_judge() -> None:
    """The presets share the verifier: score each (sentence, evidence) once per run."""
    if judge is None:
        return
    memo: dict[tuple[str, str], Verdict] = {}

    def cached(model, claims):  # type: ignore[no-untyped-def]
        todo = [c for c in dict.fromkeys(claims) if c not in memo]
        memo.update(zip(todo, judge(model, todo), strict=True))
        return [memo[c] for c in claims]

    analysis.judge = cached  # type: ignore[attr-defined]


def _policy(name: str, threshold: float | None) -> Policy:
    policy = load_policy(name)
    if threshold is None:
        return policy
    if "verifier_threshold" not in type(policy.validation).model_fields:
        raise SystemExit(f"--threshold: validator {VALIDATOR_VERSION} has no verifier_threshold")
    vp = policy.validation.model_copy(update={"verifier_threshold": threshold})
    return policy.evolve(validation=vp)


def _verifier_id(policy: Policy) -> str | None:
    """`name@sha256:<hex>` of the model `policy` uses, loading it now; None for the rules.

    Raises SystemExit when the model does not load (see the module docstring)."""
    if judge is None:
        return None
    from citebound.errors import ConfigError
    from citebound.validate.verifier import verifier_for

    try:
        model = verifier_for(policy)
    except ConfigError as err:
        raise SystemExit(f"bench_grounding: the verifier does not load: {err}") from None
    return None if model is None else f"{model.name}@sha256:{model.sha256}"


def _passes(policy: Policy, texts: list[str], question: str, answer: str) -> bool:
    bundle = make_answer_bundle(texts, question=question, policy=policy)
    res = validate_text(bundle, answer, policy)
    if res.failure_reason == "INTERNAL_ERROR":
        ERRORS[policy.name] += 1
    return res.validation_status.value == "PASSED" and not res.grounding_metrics.low_confidence


def _row_passes(policy: Policy) -> Callable[[Row], bool]:
    return lambda r: _passes(policy, [safe_normalize_v1(t) for t in r[0]], r[1], r[2])


def _halu_flags(policy: Policy) -> Callable[[HaluItem, str], bool]:
    return lambda item, answer: (
        not _passes(policy, [safe_normalize_v1(item.knowledge)], item.question, cited(answer))
    )


def _word_baseline(r: Row) -> bool:
    item = HaluItem(" ".join(r[0]), r[1], "", "")
    return not baseline_flags(item, re.sub(r"\[C\d+\]", "", r[2]))


def _fmt(name: str, m: dict[str, float]) -> str:
    return (
        f"  {name:<44} {m['caught']:>7.3f} {m['passed']:>7.3f} {m['balanced']:>9.3f}   n={m['n']}"
    )


def _five_sentence_answers(items: list[HaluItem]) -> list[tuple[HaluItem, str]]:
    out: list[tuple[HaluItem, str]] = []
    for item in items:
        sentences = split_sentences(item.right) + split_sentences(item.hallucinated)
        if len(sentences) >= 5:
            out.append((item, " ".join(f"{s.rstrip('.')} [C0]." for s in sentences[:5])))
    return out


_COLD = """
import sys, time; t0 = time.perf_counter()
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.validate import validate_text
p = load_policy("strict-v1")
b = make_answer_bundle(["The pump runs at 45 bar. Inspect the relief valve every 6 months."])
r = validate_text(b, "The pump delivers 45 bar [C0]. The relief valve is checked twice a year [C0].", p)
assert r.failure_reason != "INTERNAL_ERROR", r.message
print((time.perf_counter() - t0) * 1000)
"""


def _cost(items: list[HaluItem], policy: Policy) -> str:
    samples = _five_sentence_answers(items)[:120]
    bundles = [
        make_answer_bundle([safe_normalize_v1(i.knowledge)], question=i.question, policy=policy)
        for i, _ in samples
    ]
    if judge is not None:  # time the model, not the memo of the measured sets
        analysis.judge = judge  # type: ignore[attr-defined]
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
    med_cpu, med_base = statistics.median(cpu), statistics.median(base)
    return (
        f"median validation of a five-sentence answer ({policy.name}, {len(samples)} HaluEval "
        f"summary answers over their article): {med_cpu:.1f} ms CPU, "
        f"{statistics.median(wall):.1f} ms wall; word-coverage baseline {med_base:.3f} ms CPU "
        f"(ratio {med_cpu / max(med_base, 1e-6):.0f}x, same run)\n"
        f"cold start (fresh interpreter: import, model load, first validation): "
        f"{statistics.median(colds):.0f} ms median of 3"
    )


def _sets(limit: int | None) -> dict[str, list[Row] | list[HaluItem]]:
    data = dataset_dir("halueval-dev")
    sets: dict[str, list[Row] | list[HaluItem]] = {}
    if data is not None:
        for split in SPLITS:
            sets[f"halueval-{split}-holdout"] = holdout_half(load_split(data, split))[:limit]
    shared = data.parent if data is not None else None
    if shared is not None and (shared / "scifact").is_dir():
        sets["scifact-heldout"] = list(scifact_rows(shared))[:limit]
    sets["chat"] = list(chat_rows())[:limit]
    return sets


def _measure(
    name: str, rows: list[Row] | list[HaluItem], policies: list[Policy]
) -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    for policy in policies:
        if name.startswith("halueval"):
            s = score(rows, _halu_flags(policy))  # type: ignore[arg-type]
            results[f"validator {VALIDATOR_VERSION} {policy.name}"] = {
                "caught": round(s.caught, 4), "passed": round(s.passed, 4),
                "balanced": round(s.balanced_accuracy, 4), "n": s.tp + s.fn + s.tn + s.fp,
            }  # fmt: skip
        else:
            m = measure(rows, _row_passes(policy))  # type: ignore[arg-type]
            results[f"validator {VALIDATOR_VERSION} {policy.name}"] = m
    return results


def _rules(args: argparse.Namespace) -> dict[str, dict[str, dict[str, float]]]:
    """The same sets measured by the validator of `args.rules_src`, in a subprocess."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rules.json"
        cmd = [sys.executable, __file__, "--no-cost", "--json", str(out)]
        cmd += [] if args.limit is None else ["--limit", str(args.limit)]
        for name in args.preset or []:
            cmd += ["--preset", name]
        env = {k: v for k, v in os.environ.items() if k not in (MODEL_ENV, THRESHOLD_ENV)}
        env["PYTHONPATH"] = os.pathsep.join([str(Path(args.rules_src).resolve()), str(HERE)])
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        print(f"(--rules-src {args.rules_src}: {time.perf_counter() - t0:.0f} s)", flush=True)
        result: dict[str, dict[str, dict[str, float]]] = json.loads(out.read_text("utf-8"))["sets"]
        return result


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="First N items of each set.")
    parser.add_argument(
        "--model", type=Path, default=None,
        help=f"Exported verifier folder used as the built-in one (else ${MODEL_ENV}).",
    )  # fmt: skip
    parser.add_argument(
        "--threshold", type=float, default=None,
        help=f"verifier_threshold for every preset (else ${THRESHOLD_ENV}, else the preset's).",
    )  # fmt: skip
    parser.add_argument(
        "--preset", action="append", choices=sorted(PRESETS), help="Only these presets."
    )
    parser.add_argument(
        "--rules-src", type=Path, default=None,
        help="src/ of a checkout whose validator to measure beside (the word rules: main).",
    )  # fmt: skip
    parser.add_argument("--no-cost", action="store_true", help="Skip the timing section.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    args = parser.parse_args()
    if args.model is not None:
        if not (args.model / "model.onnx").is_file():
            raise SystemExit(f"--model {args.model}: no model.onnx there")
        os.environ[MODEL_ENV] = str(args.model.resolve())  # the cold-start runs inherit it
    env_threshold = os.environ.get(THRESHOLD_ENV, "").strip()
    threshold = args.threshold if args.threshold is not None else (
        float(env_threshold) if env_threshold else None
    )  # fmt: skip
    policies = [_policy(name, threshold) for name in (args.preset or PRESETS)]
    verifier = _verifier_id(policies[0])
    print(
        f"validator {VALIDATOR_VERSION} ({Path(citebound.__file__).parent}); verifier "
        f"{verifier or 'none'}; threshold "
        + ", ".join(
            f"{p.name} {getattr(p.validation, 'verifier_threshold', '-')}" for p in policies
        ),
        flush=True,
    )
    _cached_judge()
    rules = _rules(args) if args.rules_src is not None else {}
    recorded = json.loads(RECORDED.read_text("utf-8"))["sets"] if RECORDED.is_file() else {}
    out: dict[str, dict[str, dict[str, float]]] = {}
    print(f"  {'checker':<44} {'caught':>7} {'passed':>7} {'balanced':>9}")
    for name, rows in _sets(args.limit).items():
        t0 = time.perf_counter()
        results = _measure(name, rows, policies)
        results.update({f"{k} (--rules-src)": m for k, m in rules.get(name, {}).items()
                        if k.startswith("validator")})  # fmt: skip
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
        print(f"\n{name} ({time.perf_counter() - t0:.0f} s)")
        for k, m in results.items():
            print(_fmt(k, m))
        out[name] = results
    if ERRORS:
        print(f"\nINTERNAL_ERROR answers (counted as flagged): {dict(ERRORS)}")
    data = dataset_dir("halueval-dev")
    if data is not None and not args.no_cost:
        print("\n" + _cost(load_split(data, "summarization"), policies[0]))
    if args.json:
        report: dict[str, Any] = {
            "validator_version": VALIDATOR_VERSION,
            "verifier": verifier,
            "thresholds": {
                p.name: getattr(p.validation, "verifier_threshold", None) for p in policies
            },
            "limit": args.limit,
            "internal_errors": dict(ERRORS),
            "sets": out,
        }
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
