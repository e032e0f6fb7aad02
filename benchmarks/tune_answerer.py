"""Tune the extractive answerer on SQuAD 2.0 dev: capture bundles once, re-answer offline.

    PYTHONPATH=src python benchmarks/tune_answerer.py capture [--open-gate] [--work DIR]
    PYTHONPATH=src python benchmarks/tune_answerer.py simulate [--gate 0.76/0.74 ...]
        [--set '{"tie_share": 0.8}'] [--split tune|held-out] [--capture FILE]

`capture` runs every answerable (articles 1-4) and out-of-corpus (5-8) question through the
whole pipeline with the shipped strict-v1 (or the gate open) and writes one JSON line per
question: status, answer, the gate's similarities and the AnswerBundle the provider saw.
Its numbers are the real end-to-end ones. `simulate` re-answers the captured bundles with the
current answerer (plus `--set` overrides of `[answerer]`), validates each answer with the
shipped validator, applies a gate min_score / per-row floor to open-gate captures, and prints
refusals (gate vs answerer), gold-in-answer and validation failures per split. Tune on
`--split tune` (answerable 1-2, out-of-corpus 5-6); look at held-out (3-4, 7-8) once.

`capture --swap` runs the tune articles with their roles swapped (5-6 indexed and answerable,
1-2 out of corpus): a second tune set that never touches 3-4 / 7-8 (strict-v1's coverage gate
was fitted on both). `--gate` applies a plain similarity threshold to open-gate captures; a
capture of the shipped preset (`--gate 0/0`) carries the real gate, coverage included.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from _e2e_squad import COLLECTION, build

from citebound.contracts.assembly import AnswerBundle
from citebound.eval.data import dataset_dir
from citebound.eval.end_to_end import OPEN_GATE, gate_similarities, make_pipeline
from citebound.eval.squad import contains_gold
from citebound.llm.extractive import ExtractiveProvider
from citebound.policy import load_policy
from citebound.testing.bundles import make_llm_result
from citebound.validate import validate_answer

TUNE = {1, 2, 5, 6}
# `--swap`: the tune articles with their roles swapped (5-6 indexed and answerable, 1-2 out of
# corpus). It doubles the tune questions the gate can be fitted on without touching 3-4 / 7-8.
SWAP_INDEXED = (5, 6)
SWAP_OUTSIDE = (1, 2)
PRESET = "strict-v1"


def capture(work: Path, open_gate: bool, out: Path, swap: bool = False) -> None:
    folder = dataset_dir("squad2-dev")
    if folder is None:
        print("skipped: ../shared/data/squad2-dev is absent (set CITEBOUND_SHARED_DATA)")
        return
    if swap:  # the tune articles with roles swapped: a second tune set, never 3-4 / 7-8
        store, items = build(folder, work / "swap", 0, indexed=SWAP_INDEXED, outside=SWAP_OUTSIDE)
    else:
        store, items = build(folder, work, 0)
    audit = work / f"audit-tune-{'open' if open_gate else 'shipped'}{'-swap' if swap else ''}"
    shutil.rmtree(audit, ignore_errors=True)  # request ids are the SQuAD ids
    changes = OPEN_GATE if open_gate else None
    pipe, ctx = make_pipeline(store, audit, COLLECTION, preset=PRESET, policy_changes=changes)
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
                "bundle": json.loads(bundle.model_dump_json()) if bundle is not None else None,
            }
            fh.write(json.dumps(record) + "\n")
    ctx.close()
    print(f"wrote {out}")


def simulate(path: Path, gates: list[tuple[float, float]], changes: dict[str, Any]) -> None:
    policy = load_policy(PRESET)
    provider = ExtractiveProvider(policy.answerer, **changes)
    refusal = policy.refusal.model_text
    records = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    for gate, floor in gates:
        stats: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(
            collections.Counter
        )
        for r in records:
            split = "tune" if r["article"] in TUNE else "held-out"
            s = stats[split, r["kind"]]
            s["n"] += 1
            top = r["sims"][0] if r["sims"] else 0.0
            if r["bundle"] is None or top < gate:
                s["gate"] += 1
                continue
            bundle = AnswerBundle.model_validate(r["bundle"])
            kept = [e for e in bundle.selected_evidence if e.similarity_score >= floor]
            if not kept:
                s["gate"] += 1
                continue
            bundle = bundle.model_copy(
                update={
                    "selected_evidence": kept,
                    "anchor_map": {e.citation_anchor: e.chunk_id for e in kept},
                }
            )
            text = provider.answer(bundle, refusal, max_tokens=policy.llm.max_output_tokens)
            if text == refusal:
                s["answerer"] += 1
                continue
            verdict = validate_answer(bundle, make_llm_result(bundle, text), policy)
            if verdict.validation_status.value != "PASSED":
                s["failed"] += 1
                continue
            s["ok"] += 1
            s["gold"] += r["kind"] == "in" and contains_gold(r["answers"], [text])
        for split in ("tune", "held-out"):
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
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("mode", choices=("capture", "simulate"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/cb-tune-answerer"))
    ap.add_argument("--capture", type=Path, default=None, help="capture file (JSON lines)")
    ap.add_argument("--open-gate", action="store_true", help="capture with the gate open")
    ap.add_argument("--swap", action="store_true", help="capture 5-6 indexed, 1-2 outside")
    ap.add_argument("--gate", nargs="*", default=["0.76/0.74"], help="min_score/floor pairs")
    ap.add_argument("--set", default="{}", help="JSON overrides of [answerer]")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    name = ("capture-open" if args.open_gate else "capture") + ("-swap" if args.swap else "")
    name += ".jsonl"
    path = args.capture or args.work / name
    if args.mode == "capture":
        capture(args.work, args.open_gate, path, swap=args.swap)
    else:
        gates = [(float(a), float(b)) for a, b in (g.split("/") for g in args.gate)]
        simulate(path, gates, json.loads(args.set))
    return 0


if __name__ == "__main__":
    sys.exit(main())
