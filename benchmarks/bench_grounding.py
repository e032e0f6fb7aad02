"""Grounding benchmark: the shipped validator on HaluEval dev (../shared/data/halueval-dev).

For every shipped preset and each split (QA, summarization, dialogue) the evidence is the single
chunk C0 and every sentence of the right and the hallucinated output is cited `[C0]`; the real
R5 validator decides. An output is flagged when the validator fails it or passes it with low
confidence. Reported per half: `fit` (even items: the `[validation]` knobs were chosen on
them) and `holdout` (odd items: never used to choose anything), beside the word-coverage
baseline (flag when any output word is absent from the evidence) measured in the same run.
Then the same for the held-out SciFact train claims (claim_id % 5 == 0, the claim citing its
abstract: SUPPORT must pass) and the 90 chat-style cited answers of
benchmarks/data/chat_answers.jsonl (half with one subtle unsupported claim).

The ratio baseline flags an output when the share of its words found in the evidence is below
a threshold fitted on the fit half of the split.

Cost: the median CPU time (`time.process_time`, what the work costs on a busy shared host) and
wall time of one validation of a five-sentence answer (sentences of HaluEval summaries, cited,
over the article; each article validated for the first time, then again with its evidence
cached), beside the baseline on the same answers; the cold start a CLI user sees (a fresh
interpreter importing the validator and validating once); with `--dense-cost`, what the
packaged MiniLM embedder would add to embed each sentence and its best window (not part of the
shipped check, see docs/validation.md).

    PYTHONPATH=src python benchmarks/bench_grounding.py [--limit N] [--dense-cost]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _grounding_sets import Row, chat_rows, measure, scifact_rows

from citebound.eval.data import dataset_dir
from citebound.eval.grounding import (
    SPLITS,
    HaluItem,
    Scores,
    baseline_flags,
    fit_coverage_threshold,
    fit_half,
    holdout_half,
    load_split,
    score,
    validator_flags,
    word_coverage,
)
from citebound.policy import PRESETS, Policy, load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.text import split_sentences
from citebound.text.sanitize import safe_normalize_v1
from citebound.validate import validate_text
from citebound.validate.support import clear_caches


def _row(name: str, s: Scores) -> str:
    return (
        f"{name:<34} {s.caught:>7.3f} {s.passed:>7.3f} {s.balanced_accuracy:>9.3f}"
        f"   n={s.tp + s.fn}+{s.tn + s.fp}"
    )


def _five_sentence_answers(items: list[HaluItem]) -> list[tuple[HaluItem, str]]:
    out: list[tuple[HaluItem, str]] = []
    for item in items:
        sentences = split_sentences(item.right) + split_sentences(item.hallucinated)
        if len(sentences) >= 5:
            out.append((item, " ".join(f"{s.rstrip('.')} [C0]." for s in sentences[:5])))
    return out


def _median_ms(
    samples: list[tuple[HaluItem, str]], run: Callable[[HaluItem, str], object]
) -> tuple[float, float]:
    """(median wall ms, median CPU ms of this process): on a shared, busy host the CPU time
    is the cost of the work itself, the wall time includes waiting for a core."""
    wall, cpu = [], []
    for item, answer in samples:
        t0, c0 = time.perf_counter_ns(), time.process_time_ns()
        run(item, answer)
        cpu.append((time.process_time_ns() - c0) / 1e6)
        wall.append((time.perf_counter_ns() - t0) / 1e6)
    return statistics.median(wall), statistics.median(cpu)


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


def _dense_cost(samples: list[tuple[HaluItem, str]], policy: Policy) -> None:
    """CPU ms to embed each sentence of an answer and its best evidence window with the
    packaged MiniLM (one batch of ten texts): the price of a dense-similarity signal."""
    from citebound.index.embedder import default_embedder
    from citebound.validate.analysis import support_params
    from citebound.validate.support import support_features

    embedder = default_embedder()
    params = support_params(policy)
    batches = []
    for item, answer in samples:
        evidence = safe_normalize_v1(item.knowledge)
        sentences = [s.replace("[C0]", "") for s in split_sentences(answer)]
        spans = [support_features(s, evidence, params).best_span or s for s in sentences]
        batches.append(sentences + spans)
    embedder.embed(batches[0])  # load the model before timing
    cpu = []
    for texts in batches:
        c0 = time.process_time_ns()
        embedder.embed(texts)
        cpu.append((time.process_time_ns() - c0) / 1e6)
    print(
        f"dense similarity (MiniLM int8, 5 sentences + 5 windows, {len(batches)} answers): "
        f"median {statistics.median(cpu):.1f} ms CPU per answer (not in any shipped preset)"
    )


def _other_sets(shared: Path) -> None:
    """Held-out SciFact claims and the chat-style cited answers (benchmarks/_grounding_sets.py),
    every preset beside the word-coverage baseline."""
    sets = {"chat answers (benchmarks/data/chat_answers.jsonl)": list(chat_rows())}
    if (shared / "scifact").is_dir():
        sets["SciFact train claims, claim_id % 5 == 0"] = list(scifact_rows(shared))
    for name, rows in sets.items():
        print(f"\n{name} ({len(rows)} answers)")
        for preset in PRESETS:
            policy = load_policy(preset)

            def passes(r: Row, policy: Policy = policy) -> bool:
                texts = [safe_normalize_v1(t) for t in r[0]]
                b = make_answer_bundle(texts, question=r[1], policy=policy)
                res = validate_text(b, r[2], policy)
                return res.validation_status.value == "PASSED" and not (
                    res.grounding_metrics.low_confidence
                )

            m = measure(rows, passes)
            print(
                f"{'validator ' + preset:<34} {m['caught']:>7.3f} {m['passed']:>7.3f} {m['balanced']:>9.3f}"
            )
        m = measure(rows, _word_baseline)
        print(
            f"{'baseline word coverage':<34} {m['caught']:>7.3f} {m['passed']:>7.3f} {m['balanced']:>9.3f}"
        )


def _word_baseline(r: Row) -> bool:
    item = HaluItem(" ".join(r[0]), r[1], "", "")
    return not baseline_flags(item, re.sub(r"\[C\d+\]", "", r[2]))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="First N items of each split.")
    parser.add_argument(
        "--dense-cost", action="store_true", help="Also time MiniLM on the same answers."
    )
    args = parser.parse_args()
    folder = dataset_dir("halueval-dev")
    if folder is None:
        print("skipped: ../shared/data/halueval-dev is absent (set CITEBOUND_SHARED_DATA)")
        return 0
    data = {split: load_split(folder, split, args.limit) for split in SPLITS}
    print(f"{'checker':<34} {'caught':>7} {'passed':>7} {'balanced':>9}")
    for split, items in data.items():
        t = fit_coverage_threshold(fit_half(items))
        for half_name, half in (("fit", fit_half(items)), ("holdout", holdout_half(items))):
            print(f"\n{split} / {half_name} ({len(half)} items)")
            for preset in PRESETS:
                policy = load_policy(preset)
                s = score(half, lambda item, a, p=policy: validator_flags(item, a, p))
                print(_row(f"validator {preset}", s))
            print(_row("baseline word coverage", score(half, baseline_flags)))
            ratio = score(half, lambda item, a, t=t: word_coverage(item, a) < t)
            print(_row(f"baseline coverage ratio < {t:.2f}", ratio))

    _other_sets(folder.parent)

    policy = load_policy("strict-v1")
    samples = _five_sentence_answers(data["summarization"])[:300]
    bundles = {
        id(item): make_answer_bundle(
            [safe_normalize_v1(item.knowledge)], question=item.question, policy=policy
        )
        for item, _ in samples
    }

    def validate(item: HaluItem, answer: str) -> object:
        return validate_text(bundles[id(item)], answer, policy)

    for item, answer in samples[-20:]:  # warm the code paths (not the evidence caches)
        validate(item, answer)
    samples = samples[:-20]
    clear_caches()
    v_ms = _median_ms(samples, validate)  # each evidence text seen for the first time
    warm_ms = _median_ms(samples, validate)  # the same answers again (evidence cached)
    b_ms = _median_ms(samples, baseline_flags)
    print(
        f"\nmedian validation of a five-sentence answer (strict-v1, {len(samples)} answers), "
        f"wall / CPU ms: new evidence each {v_ms[0]:.2f} / {v_ms[1]:.2f}; evidence cached "
        f"{warm_ms[0]:.2f} / {warm_ms[1]:.2f}; baseline {b_ms[0]:.3f} / {b_ms[1]:.3f} "
        f"(CPU ratio {v_ms[1] / max(b_ms[1], 1e-6):.0f}x, same run)"
    )
    if args.dense_cost:
        _dense_cost(samples[:50], policy)
    colds = [
        float(subprocess.run([sys.executable, "-c", _COLD], check=True, capture_output=True,
                             text=True).stdout)
        for _ in range(3)
    ]  # fmt: skip
    print(
        f"cold start (fresh interpreter: import + first validation): {statistics.median(colds):.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
