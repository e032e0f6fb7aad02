"""Tune the extractive answerer on SQuAD 2.0 dev: capture bundles once, re-answer offline.

    PYTHONPATH=src python benchmarks/tune_answerer.py capture [--open-gate] [--work DIR]
        [--preset strict-v1|hybridrag|superprompt-v1] [--swap] [--halueval]
    PYTHONPATH=src python benchmarks/tune_answerer.py simulate [--gate 0.76/0.74 ...]
        [--policy-gate '{"found_min_score": 0.66}'] [--set '{"tie_share": 0.8}']
        [--split tune|held-out|all] [--capture FILE]
    PYTHONPATH=src python benchmarks/tune_answerer.py misses [--split tune] [--set ...]
    PYTHONPATH=src python benchmarks/tune_answerer.py refusals [--swap] [--split tune]

`capture` runs every answerable (articles 1-4) and out-of-corpus (5-8) question through the
whole pipeline with the shipped strict-v1 (or the gate open) and writes one JSON line per
question: status, answer, the gate's similarities and the AnswerBundle the provider saw.
Its numbers are the real end-to-end ones. `simulate` re-answers the captured bundles with the
current answerer (plus `--set` overrides of `[answerer]`), validates each answer with the
shipped validator, applies a gate min_score / per-row floor to open-gate captures, and prints
refusals (gate vs answerer), gold-in-answer and validation failures per split. Tune on
`--split tune` (answerable 1-2, out-of-corpus 5-6); look at held-out (3-4, 7-8) once.

`misses` says where the gold answers the current answerer misses are lost (`citebound.eval.answer_misses`:
not in the evidence, not quotable, too few shared terms, or ranked N-th and not chosen), the
gold-in-answer ceiling (answered questions whose selected evidence holds the gold), sentences
per answer and the answerer's CPU time per question. `--split` defaults to tune in both
`simulate` and `misses`: held-out is printed only when asked for (look at it once, at the end).

`refusals` lists each refused answerable question of a shipped-preset capture with the rule
that refused it and the measurements behind it (docs/gate.md "Words that frame the question
count only when held"), then the count per rule.

`capture --swap` runs the tune articles with their roles swapped (5-6 indexed and answerable,
1-2 out of corpus): a second tune set that never touches 3-4 / 7-8 (strict-v1's coverage gate
was fitted on both). `--gate` applies a plain similarity threshold to open-gate captures; a
capture of the shipped preset (`--gate 0/0`) carries the real gate, coverage included.
`--policy-gate JSON` applies the preset's whole `[gate]` rule (with those overrides) offline to
an open-gate capture, and counts the gate's refusals the answerer would have answered.

`capture --halueval` (with or without `--swap`) is a refusal tune set that is not SQuAD:
HaluEval QA dev, one half's knowledge passages indexed, that half's questions answerable, the
other half's out of corpus (`_halueval_tune.py`; benchmarks/results/gate_tuning.md "A tune
set that is not SQuAD"). Its capture holds tune questions only.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from _e2e_squad import COLLECTION, build
from _halueval_tune import COLLECTION as HALUEVAL_COLLECTION
from _halueval_tune import build as halueval_build

from citebound.contracts.assembly import AnswerBundle
from citebound.eval.answer_misses import classify
from citebound.eval.data import dataset_dir
from citebound.eval.end_to_end import OPEN_GATE, gate_similarities, make_pipeline
from citebound.eval.squad import contains_gold
from citebound.gate import rule as gate_rule
from citebound.gate.measures import Rarity, row_text, top_coverage
from citebound.llm.extractive import ExtractiveProvider
from citebound.llm.extractive.names import stated
from citebound.policy import GatePolicy, load_policy
from citebound.retrieve.retriever import Retriever
from citebound.store.sqlite import SqliteStore
from citebound.testing.bundles import make_llm_result
from citebound.validate import validate_answer

TUNE = {1, 2, 5, 6}
# `--swap`: the tune articles with their roles swapped (5-6 indexed and answerable, 1-2 out of
# corpus). It doubles the tune questions the gate can be fitted on without touching 3-4 / 7-8.
SWAP_INDEXED = (5, 6)
SWAP_OUTSIDE = (1, 2)
PRESET = "strict-v1"


def capture(
    work: Path,
    open_gate: bool,
    out: Path,
    swap: bool = False,
    preset: str = PRESET,
    halueval: bool = False,
) -> None:
    data = "halueval-dev" if halueval else "squad2-dev"
    folder = dataset_dir(data)
    if folder is None:
        print(f"skipped: ../shared/data/{data} is absent (set CITEBOUND_SHARED_DATA)")
        return
    collection = COLLECTION
    if halueval:  # not SQuAD at all: HaluEval QA halves (benchmarks/_halueval_tune.py, rules in citebound.eval.halueval_tune)
        store, items = halueval_build(
            folder, work / f"halueval{'-swap' if swap else ''}", swap=swap
        )
        collection = HALUEVAL_COLLECTION
    elif swap:  # the tune articles with roles swapped: a second tune set, never 3-4 / 7-8
        store, items = build(folder, work / "swap", 0, indexed=SWAP_INDEXED, outside=SWAP_OUTSIDE)
    else:
        store, items = build(folder, work, 0)
    audit = work / (
        f"audit-{preset}-{'open' if open_gate else 'shipped'}{'-swap' if swap else ''}"
        + ("-halueval" if halueval else "")
    )
    shutil.rmtree(audit, ignore_errors=True)  # request ids are the SQuAD ids
    changes = OPEN_GATE if open_gate else None
    pipe, ctx = make_pipeline(store, audit, collection, preset=preset, policy_changes=changes)
    with out.open("w", encoding="utf-8") as fh:
        for it in (i for i in items if i.kind in ("in", "out")):
            st = pipe.run(it.question, request_id=it.qid)
            called = st.llm_result is not None and st.llm_result.attempts > 0
            bundle = st.answer_bundle if called else None
            record = {
                "qid": it.qid,
                "kind": it.kind,
                "article": it.article,
                "question": it.question,
                "answers": list(it.answers),
                "status": st.response.status.value if st.response else "FAILED",
                "answer": st.response.answer if st.response else "",
                "attempts": st.llm_result.attempts if st.llm_result else 0,
                "sims": gate_similarities(st, ctx.policy.retrieval.top_k),
                "rows": gate_rows(st, ctx.policy.retrieval.top_k),
                "bundle": json.loads(bundle.model_dump_json()) if bundle is not None else None,
            }
            fh.write(json.dumps(record) + "\n")
    ctx.close()
    print(f"wrote {out}")


def gate_rows(state: Any, top_k: int) -> list[dict[str, Any]]:
    """The rows the A3 gate decided on (reranked view cut to `top_k`): similarity and the text
    the gate's term signals read (`row_text`: document, headings, chunk)."""
    by_id = state.rows_by_id()
    top = state.views_by_stage.get("reranked", [])[:top_k]
    return [{"sim": by_id[i].similarity, "text": row_text(by_id[i])} for i in top]


def _tune_only(path: Path) -> bool:
    """A swapped or HaluEval capture (by its file name) holds tune questions only."""
    return "swap" in path.name or "halueval" in path.name


def _split(record: dict[str, Any], swapped: bool) -> str:
    """A swapped or HaluEval capture holds tune questions only (HaluEval items have article
    0); otherwise the SQuAD article decides."""
    return "tune" if swapped or record["article"] in TUNE | {0} else "held-out"


def simulate(
    path: Path,
    gates: list[tuple[float, float]],
    changes: dict[str, Any],
    splits: tuple[str, ...] = ("tune",),
    preset: str = PRESET,
    policy_gate: dict[str, Any] | None = None,
) -> None:
    """`policy_gate` (overrides of the preset's `[gate]`, {} for none) applies the preset's
    whole gate rule offline to an open-gate capture, from the captured rows (coverage, names,
    found and covered passes), with the preset's per-row floor; `gates` is then ignored. It
    also counts the gate's refusals the answerer would have answered (validated): all that any
    gate change could win back, and, for out-of-corpus questions, what it would let out."""
    policy = load_policy(preset)
    provider = ExtractiveProvider(policy.answerer, **changes)
    refusal = policy.refusal.model_text
    records = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    rule, rarity = None, None
    if policy_gate is not None:
        rule = GatePolicy.model_validate({**policy.gate.model_dump(), **policy_gate})
        gates = [(rule.min_score, policy.min_similarity_floor)]
        if rule.rare_min_score is not None:
            rarity = _rarity(path)

    def outcome(r: dict[str, Any], floor: float) -> tuple[str, str]:
        """("gate" | "answerer" | "failed" | "ok", answer text) past the gate."""
        if r["bundle"] is None:
            return "gate", ""
        bundle = AnswerBundle.model_validate(r["bundle"])
        kept = [e for e in bundle.selected_evidence if e.similarity_score >= floor]
        if not kept:
            return "gate", ""
        bundle = bundle.model_copy(
            update={
                "selected_evidence": kept,
                "anchor_map": {e.citation_anchor: e.chunk_id for e in kept},
            }
        )
        text = provider.answer(bundle, refusal, max_tokens=policy.llm.max_output_tokens)
        if text == refusal:
            return "answerer", text
        verdict = validate_answer(bundle, make_llm_result(bundle, text), policy)
        return ("ok" if verdict.validation_status.value == "PASSED" else "failed"), text

    for gate, floor in gates:
        stats: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(
            collections.Counter
        )
        for r in records:
            s = stats[_split(r, _tune_only(path)), r["kind"]]
            s["n"] += 1
            top = max(r["sims"], default=0.0)
            if rule is not None:
                m = top_coverage(r["question"], _rows(r), rarity)
                shut = (
                    gate_rule.refusal(rule, top if r["sims"] else None, m, rule.min_score)
                    is not None
                )
            else:
                shut = top < gate
            if shut:
                s["gate"] += 1
                s["gate_would"] += rule is not None and outcome(r, floor)[0] == "ok"
                continue
            status, text = outcome(r, floor)
            s[status] += 1
            s["gold"] += (
                status == "ok" and r["kind"] == "in" and contains_gold(r["answers"], [text])
            )
        for split in splits:
            i, o = stats[split, "in"], stats[split, "out"]
            if not i["n"] or not o["n"]:
                continue  # a capture without this split (--swap has tune articles only)
            print(
                f"gate {gate:.2f}/{floor:.2f} {split}: out-of-corpus refused "
                f"{100 * (1 - o['ok'] / o['n']):.1f}% (gate {100 * o['gate'] / o['n']:.1f}%) | "
                f"answerable refused {100 * (1 - i['ok'] / i['n']):.1f}% (gate {i['gate']}, "
                f"answerer {i['answerer']}, failed {i['failed']} of {i['n']}) | gold in answer "
                f"{100 * i['gold'] / max(1, i['ok']):.1f}% | invalid answers "
                f"{i['failed'] + o['failed']}"
                + (
                    f" | the answerer would answer {i['gate_would']} of the answerable and "
                    f"{o['gate_would']} of the {o['gate']} out-of-corpus the gate refused"
                    if rule is not None
                    else ""
                )
            )


def misses(
    path: Path, changes: dict[str, Any], splits: tuple[str, ...] = ("tune",), preset: str = PRESET
) -> dict[str, collections.Counter[str]]:
    """Where the answerer's gold misses come from, per split (answerable questions answered)."""
    policy = load_policy(preset)
    provider = ExtractiveProvider(policy.answerer, **changes)
    refusal = policy.refusal.model_text
    records = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    stats: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    cpu: dict[str, float] = collections.defaultdict(float)
    for r in records:
        split = _split(r, _tune_only(path))
        if r["kind"] != "in" or r["bundle"] is None or split not in splits:
            continue
        bundle = AnswerBundle.model_validate(r["bundle"])
        t0 = time.process_time()
        text = provider.answer(bundle, refusal, max_tokens=policy.llm.max_output_tokens)
        cpu[split] += time.process_time() - t0
        s = stats[split]
        s["asked"] += 1
        if text == refusal:
            s["refused"] += 1
            continue
        s["answered"] += 1
        s["sentences"] += len(provider.choose(bundle, refusal))
        s["gold"] += contains_gold(r["answers"], [text])
        evidence = [e.sanitized_text for e in bundle.selected_evidence]
        s["ceiling"] += contains_gold(r["answers"], evidence)
        label = classify(provider, bundle, r["answers"], refusal)
        if label is not None:
            s["miss:" + label] += 1
    for split in splits:
        s = stats[split]
        if not s["answered"]:
            continue
        n = s["answered"]
        print(
            f"{preset} {split}: gold in answer {100 * s['gold'] / n:.1f}% of {n} answered "
            f"(ceiling: gold in the selected evidence {100 * s['ceiling'] / n:.1f}%); "
            f"{s['sentences'] / n:.2f} sentences per answer; answerer CPU "
            f"{1000 * cpu[split] / s['asked']:.2f} ms per question"
        )
        for key in sorted(k for k in s if k.startswith("miss:")):
            print(f"  {s[key]:4d}  {key[5:]}")
    return stats


def refusals(path: Path, splits: tuple[str, ...] = ("tune",), preset: str = PRESET) -> None:
    """Why each refused answerable question was refused: the gate's rule and the measurements
    it weighed (recomputed from the captured rows: top similarity, key terms held by the best
    row, names no row holds), or the answerer's (a name no evidence states, else too few shared
    key terms). On a shipped-preset capture."""
    policy = load_policy(preset)
    provider = ExtractiveProvider(policy.answerer)
    refusal = policy.refusal.model_text
    count: collections.Counter[str] = collections.Counter()
    asked = 0
    for line in path.read_text("utf-8").splitlines():
        r = json.loads(line)
        if r["kind"] != "in" or _split(r, _tune_only(path)) not in splits:
            continue
        asked += 1
        top = max(r["sims"]) if r["sims"] else None
        m = top_coverage(r["question"], _rows(r))
        if r["bundle"] is None:
            why = gate_rule.refusal(policy.gate, top, m, policy.gate.min_score) or "assembly"
        else:
            bundle = AnswerBundle.model_validate(r["bundle"])
            text = provider.answer(bundle, refusal, max_tokens=policy.llm.max_output_tokens)
            if text != refusal:
                continue
            why = "answerer: " + (
                "name not stated"
                if not stated(bundle, r["question"], policy.answerer.transposed_min_letters)
                else "terms"
            )
        count[why] += 1
        held = "-" if m is None else f"{m.held}/{m.key_terms + m.framing_held}"
        unfound = "-" if m is None else m.names_unfound
        print(f"{why:24s} top {top or 0:.3f} held {held} names unfound {unfound} | {r['question']}")
    print(
        f"refused {sum(count.values())} of {asked} answerable: "
        + ", ".join(f"{k} {v}" for k, v in sorted(count.items()))
    )


def _rarity(path: Path) -> Rarity:
    """The idf of a word in the collection a capture was made on (its store under the
    capture's --work folder, as `capture` lays it out), for the gate's rare pass."""
    halueval = "halueval" in path.name
    sub = ("halueval" if halueval else "") + ("-swap" if "swap" in path.name else "")
    folder = path.parent / sub.lstrip("-") if sub else path.parent
    collection = HALUEVAL_COLLECTION if halueval else COLLECTION
    return Retriever(SqliteStore(folder / "store")).load(collection).lexical.idf


def _rows(record: dict[str, Any]) -> list[_CapturedRow]:
    return [_CapturedRow(i, x["sim"], x["text"]) for i, x in enumerate(record["rows"])]


class _CapturedRow:
    """A captured gate row as `top_coverage` reads it (its text already holds the headings)."""

    def __init__(self, rank: int, similarity: float, text: str) -> None:
        self.rank, self.similarity, self.chunk_id, self.chunk_text = rank, similarity, "", text
        self.source = None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("mode", choices=("capture", "simulate", "misses", "refusals"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/cb-tune-answerer"))
    ap.add_argument("--capture", type=Path, default=None, help="capture file (JSON lines)")
    ap.add_argument("--preset", default=PRESET, help="shipped preset to capture / answer with")
    ap.add_argument("--open-gate", action="store_true", help="capture with the gate open")
    ap.add_argument("--swap", action="store_true", help="capture 5-6 indexed, 1-2 outside")
    ap.add_argument(
        "--halueval", action="store_true", help="capture HaluEval QA halves instead of SQuAD"
    )
    ap.add_argument("--gate", nargs="*", default=["0.76/0.74"], help="min_score/floor pairs")
    ap.add_argument("--set", default="{}", help="JSON overrides of [answerer]")
    ap.add_argument(
        "--policy-gate",
        default=None,
        help="JSON overrides of the preset's [gate] ('{}': as shipped), applied offline to an "
        "open-gate capture with the preset's floor (instead of --gate)",
    )
    ap.add_argument(
        "--split", choices=("tune", "held-out", "all"), default="tune", help="what to print"
    )
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    name = "capture" + (f"-{args.preset}" if args.preset != PRESET else "")
    name += ("-open" if args.open_gate else "") + ("-swap" if args.swap else "")
    name += ("-halueval" if args.halueval else "") + ".jsonl"
    path = args.capture or args.work / name
    splits = ("tune", "held-out") if args.split == "all" else (args.split,)
    if args.mode == "capture":
        capture(
            args.work,
            args.open_gate,
            path,
            swap=args.swap,
            preset=args.preset,
            halueval=args.halueval,
        )
    elif args.mode == "misses":
        misses(path, json.loads(args.set), splits, preset=args.preset)
    elif args.mode == "refusals":
        refusals(path, splits, preset=args.preset)
    else:
        gates = [(float(a), float(b)) for a, b in (g.split("/") for g in args.gate)]
        pg = None if args.policy_gate is None else json.loads(args.policy_gate)
        simulate(path, gates, json.loads(args.set), splits, preset=args.preset, policy_gate=pg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
