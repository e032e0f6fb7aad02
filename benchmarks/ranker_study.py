"""Study: a fitted linear lead ranker for the extractive answerer (not shipped;
benchmarks/results/answers_measured.md "A fitted lead ranker (study, not shipped)").

    PYTHONPATH=src python benchmarks/ranker_study.py capture [--work DIR]
    PYTHONPATH=src python benchmarks/ranker_study.py study [--work DIR] [--semantic] [--held-out]

`capture` writes, with the shipped presets and their gates, the AnswerBundles the answerer saw:
the SQuAD 2.0 dev capture and swapped capture (`tune_answerer.py capture` / `capture --swap`;
kept when already under --work) and every F´ question set through each preset (fprime.jsonl).
HaluEval QA dev needs none: each item's knowledge becomes a bundle, one evidence per paragraph.

`study` builds one group per answered question: the sentences that may lead (`provider.rank` ->
`choice.lead_pool`, then within `rank_tolerance` of the best: `citebound.eval.rank_features.eligible`), each
with its feature vector (`citebound.eval.rank_features.FEATURES`; `--semantic` adds the packaged MiniLM
similarity to the question and its gap to the closest) and two labels: the sentence holds the
gold (SQuAD answer, HaluEval right_answer, an F´ key fact) and the whole answer it leads (the
shipped `choose` with that lead forced, then the shipped validator) holds it / is judged well.
It fits a conditional logit (softmax over each group, L2 0.05, 3,000 full-batch gradient steps
on standardized features; numpy, float64, deterministic) on the fit sets only: SQuAD tune
(articles 1-2 answerable) + swapped tune (5-6), HaluEval QA dev items 1-1000, F´ sets 1-3
(strict-v1 bundles); and reports each variant against the shipped rule, per set: answers
holding the gold (SQuAD, HaluEval; of answered) or answered well (F´, every preset), with the
F´ questions whose judgement changes. Held-out sets: HaluEval 1001-2000, F´ sets 4-6, and with
`--held-out` SQuAD articles 3-4 (look once). Qualification is unchanged: only the lead among
sentences that already may lead is chosen differently (a forced lead whose answer is refused or
fails validation counts as not good: 1 of 7,932 in the study).
"""

from __future__ import annotations

import argparse
import collections
import json
import pickle
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import tune_answerer
from bench_answers import COLLECTION as FPRIME
from bench_answers import PRESETS, QUESTIONS

from citebound.contracts.assembly import AnswerBundle
from citebound.eval import rank_features as rf
from citebound.eval.answers import AnswerQuestion, judge, load_questions
from citebound.eval.data import dataset_dir
from citebound.eval.end_to_end import make_pipeline
from citebound.eval.lead_ranker import Group, Grouper, fit
from citebound.eval.squad import contains_gold
from citebound.ingest import ingest_paths
from citebound.policy import load_policy
from citebound.store.sqlite import SqliteStore
from citebound.testing.bundles import make_answer_bundle

FIT_FPRIME = ("fprime_questions", "fprime_questions_dev2", "fprime_questions_dev3")
HALU_FIT = 1000  # HaluEval QA dev items 1-1000 fit, 1001-2000 held out
L2 = 0.05
MARGINS = (0.0, 0.25, 0.5, 1.0)
# HaluEval knowledge paragraphs are glued without a space ("... 19th century.First for ...").
_GLUE = re.compile(r"(?<=[a-z0-9)\]\"'][.!?])(?=[A-Z])")


# --- capture -----------------------------------------------------------------------------------


def capture(work: Path) -> None:
    if not (work / "capture.jsonl").exists():
        tune_answerer.capture(work, False, work / "capture.jsonl")
    if not (work / "capture-swap.jsonl").exists():
        tune_answerer.capture(work, False, work / "capture-swap.jsonl", swap=True)
    docs = dataset_dir("fprime-docs")
    if docs is None:
        print("skipped F´: ../shared/data/fprime-docs is absent (set CITEBOUND_SHARED_DATA)")
        return
    store = SqliteStore(work / "fprime-store")
    ingest_paths(store, [docs], collection=FPRIME, progress=False)
    with (work / "fprime.jsonl").open("w", encoding="utf-8") as fh:
        for preset in PRESETS:
            audit = work / f"audit-fprime-{preset}"
            shutil.rmtree(audit, ignore_errors=True)  # request ids are the question ids
            pipe, ctx = make_pipeline(store, audit, FPRIME, preset=preset)
            for path in QUESTIONS:
                for q in load_questions(path):
                    st = pipe.run(q.question, request_id=f"{path.stem}-{q.id}")
                    called = st.llm_result is not None and st.llm_result.attempts > 0
                    bundle = st.answer_bundle if called else None
                    record = {
                        "preset": preset,
                        "set": path.stem,
                        "question": q.model_dump(),
                        "status": st.response.status.value if st.response else "FAILED",
                        "bundle": json.loads(bundle.model_dump_json()) if bundle else None,
                    }
                    fh.write(json.dumps(record) + "\n")
            ctx.close()
    print(f"wrote {work / 'fprime.jsonl'}")


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]


def halueval() -> list[tuple[AnswerBundle, str]]:
    folder = dataset_dir("halueval-dev")
    if folder is None:
        return []
    out = []
    for i, line in enumerate((folder / "qa-dev-2000.jsonl").read_text("utf-8").splitlines()):
        item = json.loads(line)
        parts = [p.strip() for p in _GLUE.split(item["knowledge"]) if p.strip()]
        bundle = make_answer_bundle(parts, question=item["question"], request_id=f"halu-{i}")
        out.append((bundle, item["right_answer"]))
    return out


# --- groups ------------------------------------------------------------------------------------


def groups(work: Path, scope: str, with_semantic: bool, held_out: bool) -> dict[str, list[Group]]:
    """Every set's groups: fit sets first (named fit:...), then held-out ones (eval:...)."""
    out: dict[str, list[Group]] = collections.defaultdict(list)
    strict = Grouper(load_policy("strict-v1"), scope, with_semantic)
    for name, tag in (("capture.jsonl", "squad-tune"), ("capture-swap.jsonl", "squad-swap")):
        for r in _lines(work / name):
            swap = "swap" in name
            article = r["article"]
            split = "fit:" + tag if swap or article in (1, 2) else "eval:squad-held-out"
            if (
                r["kind"] != "in"
                or r["bundle"] is None
                or (split.startswith("eval") and not held_out)
            ):
                continue
            golds = r["answers"]
            g = strict.group(
                AnswerBundle.model_validate(r["bundle"]),
                r["qid"],
                lambda t, a=golds: contains_gold(a, [t]),
                lambda t, a=golds: contains_gold(a, [t]),
            )
            out[split].append(g) if g is not None else None
    for i, (bundle, right) in enumerate(halueval()):
        split = "fit:halueval-1-1000" if i < HALU_FIT else "eval:halueval-1001-2000"
        g = strict.group(
            bundle,
            f"halu-{i}",
            lambda t, a=right: contains_gold([a], [t]),
            lambda t, a=right: contains_gold([a], [t]),
        )
        out[split].append(g) if g is not None else None
    graders = {preset: Grouper(load_policy(preset), scope, with_semantic) for preset in PRESETS}
    for r in _lines(work / "fprime.jsonl"):
        q = AnswerQuestion.model_validate(r["question"])
        if r["bundle"] is None or not q.in_corpus:
            continue  # out-of-corpus: answered or refused the same (only the lead changes)
        fit = r["preset"] == "strict-v1" and r["set"] in FIT_FPRIME
        split = f"{'fit' if fit else 'eval'}:{r['preset']}:{r['set']}"
        g = graders[r["preset"]].group(
            AnswerBundle.model_validate(r["bundle"]),
            q.id,
            lambda t, q=q: any(_fold(a) in _fold(t) for grp in q.facts for a in grp),
            lambda t, q=q: judge(q, "OK", t).well,
        )
        out[split].append(g) if g is not None else None
    return out


def _fold(text: str) -> str:
    return " ".join(text.replace("`", "").casefold().split())


# --- fit and report ----------------------------------------------------------------------------


def report(
    data: dict[str, list[Group]], label: str, margin: float, title: str, factoid: bool = False
) -> None:
    """Fit on the fit sets, then compare each set's answers with the rule's; `factoid`: only
    questions expecting a name / date / number / place / person are fitted on and re-ranked."""

    def applies(g: Group) -> bool:
        return not factoid or g.kind != "none"

    train = [
        (g.xs, getattr(g, label))
        for name, gs in data.items()
        if name.startswith("fit")
        for g in gs
        if applies(g)
    ]
    w = fit(train, L2)
    names = list(rf.FEATURES) + (["minilm", "minilm_gap"] if len(w) > len(rf.FEATURES) else [])
    print(
        f"\n## {title}\nweights: "
        + ", ".join(f"{n} {v:+.3f}" for n, v in zip(names, w, strict=True))
    )
    print(
        "| set | questions with a lead | shipped rule: good answers | fitted: good answers "
        "| leads changed | best lead known (ceiling) |"
    )
    print("|---|---|---|---|---|---|")
    for name in sorted(data, key=lambda n: (n.startswith("eval"), n)):
        gs = data[name]
        rule = now = changed = 0
        ceiling = sum(any(g.answer) for g in gs)  # some lead among the choices answers well
        flips = []
        for g in gs:
            i = rf.pick(g.keys, g.xs, w, g.rule, margin) if applies(g) else g.rule
            rule += g.answer[g.rule]
            now += g.answer[i]
            changed += i != g.rule
            if g.answer[i] != g.answer[g.rule] and "fprime" in name:
                flips.append(f"{g.qid} {'+' if g.answer[i] else '-'}")
        print(
            f"| {name} | {len(gs)} | {rule} | {now} ({now - rule:+d}) | {changed} | {ceiling} |"
            + (f" {' '.join(flips)}" if flips else "")
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("mode", choices=("capture", "study"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/cb-ranker-study"))
    ap.add_argument("--semantic", action="store_true", help="add the MiniLM similarity")
    ap.add_argument("--held-out", action="store_true", help="also SQuAD 3-4 (look once)")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.mode == "capture":
        capture(args.work)
        return 0
    for scope in ("all", "evidence"):
        cache = args.work / f"groups-{scope}{'-minilm' if args.semantic else ''}.pickle"
        if args.held_out or not cache.exists():
            data = groups(args.work, scope, args.semantic, args.held_out)
            cache.write_bytes(pickle.dumps(dict(data)))
        data = pickle.loads(cache.read_bytes())
        report(
            data, "sentence", float("-inf"), f"scope {scope}: sentence labels, fitted lead always"
        )
        if scope == "all":
            for margin in MARGINS:
                report(
                    data,
                    "answer",
                    margin,
                    f"scope all: answer labels, rule lead unless beaten by > {margin}",
                )
                report(
                    data,
                    "answer",
                    margin,
                    f"scope all, factoid questions only: answer labels, margin {margin}",
                    factoid=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
