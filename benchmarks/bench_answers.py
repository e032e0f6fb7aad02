"""Answer quality on real engineering docs (F´), for every shipped preset.

    PYTHONPATH=src python benchmarks/bench_answers.py [--work DIR] [--json FILE] [--no-squad]

`benchmarks/data/fprime_questions*.jsonl` (eight sets, all run by default) hold questions written by hand from
`../shared/data/fprime-docs` (definition, procedure, quantity, list, yes/no, comparison; many
documents), each with the key facts a correct answer must state, plus out-of-corpus questions
that must be refused. The docs are ingested once (the store under --work is reused); each
preset then answers every question with the built-in extractive provider, in one process.

Reported per preset: answered well (OK, every key fact, starts at a sentence start, no raw
markup; `citebound.eval.answers`), in-corpus refusals, and out-of-corpus refusals, with the
failing questions listed.

Then the SQuAD 2.0 table for every preset, same protocol as the README (`_e2e_squad.build`:
paragraphs of dev articles 1-4 indexed, their answerable questions in corpus, every question of
articles 5-8 out of corpus; tune = 1-2 / 5-6, held-out = 3-4 / 7-8): out-of-corpus refused
(any refusal; before the LLM in brackets), answerable refused (gate / answerer), and gold in
the answer (of answered). The gate sweep stays in `bench_end_to_end.py --parts squad`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _e2e_squad import SPLITS, build

from citebound.contracts.public import PublicResponse
from citebound.eval.answers import judge, load_questions, summarize_answers
from citebound.eval.data import dataset_dir
from citebound.eval.end_to_end import ask, make_pipeline
from citebound.ingest import ingest_paths
from citebound.store.sqlite import SqliteStore

DATA = Path(__file__).resolve().parent / "data"
# Every F´ set, in the order they were written (set 1, then dev2 ... dev8).
QUESTIONS = sorted(DATA.glob("fprime_questions*.jsonl"), key=lambda p: (len(p.stem), p.stem))
PRESETS = ("strict-v1", "hybridrag", "superprompt-v1")
COLLECTION = "fprime"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "cb-bench-answers")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    ap.add_argument("--no-squad", action="store_true", help="skip the SQuAD 2.0 table")
    ap.add_argument(
        "--answers",
        type=Path,
        default=None,
        help="also write every response (latency left out) here as JSON lines, one per preset "
        "and question, to show that a change leaves answers and verdicts as they were",
    )
    ap.add_argument(
        "--preset", action="append", default=None, help="only this preset (repeat for several)"
    )
    ap.add_argument(
        "--questions",
        type=Path,
        action="append",
        default=None,
        help="F´ question file(s) (default: every data/fprime_questions*.jsonl); repeat for several",
    )
    args = ap.parse_args(argv)
    presets = tuple(args.preset or PRESETS)
    kept: list[dict[str, object]] = []  # every response, for --answers
    results: dict[str, object] = {
        f.stem: fprime(args.work, f, presets, kept) for f in (args.questions or QUESTIONS)
    }
    if not args.no_squad:
        results["squad"] = squad(args.work, presets, kept)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if args.answers:
        # Ordered by (preset, set, question id): the file diffs cleanly between two runs.
        lines = sorted(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in kept)
        args.answers.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return 0


def record(
    kept: list[dict[str, object]], preset: str, where: str, qid: str, resp: PublicResponse | None
) -> None:
    """Keep one response for `--answers`, without the timing that differs run to run."""
    body = resp.model_dump(mode="json", exclude={"latency_ms"}) if resp is not None else None
    kept.append({"preset": preset, "set": where, "id": qid, "response": body})


def fprime(
    work: Path, path: Path, presets: tuple[str, ...], kept: list[dict[str, object]]
) -> dict[str, object]:
    """Answered well / refused on one F´ question set, per preset."""
    docs = dataset_dir("fprime-docs")
    if docs is None:
        print("skipped: ../shared/data/fprime-docs is absent (set CITEBOUND_SHARED_DATA)")
        return {}
    work.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(work / "store")
    t0 = time.perf_counter()
    report = ingest_paths(store, [docs], collection=COLLECTION, progress=False)
    print(f"F´ docs: {report.chunks_total} chunks in {time.perf_counter() - t0:.1f}s")
    questions = load_questions(path)
    print(f"questions: {path.name}")
    results: dict[str, object] = {}
    for preset in presets:
        audit = work / f"audit-{preset}"
        shutil.rmtree(audit, ignore_errors=True)  # request ids are the question ids
        pipe, ctx = make_pipeline(store, audit, COLLECTION, preset=preset)
        judgements = []
        for q in questions:
            resp = pipe.run(q.question, request_id=q.id).response
            record(kept, preset, path.stem, q.id, resp)
            status = resp.status.value if resp is not None else "FAILED"
            j = judge(q, status, resp.answer if resp is not None else None)
            judgements.append(j)
            if not j.well:
                answer = (resp.answer or "") if resp is not None else ""
                print(f"  {preset} {q.id} [{q.type}] {q.question!r}: {status} {answer[:160]!r}")
        ctx.close()
        summary = summarize_answers(judgements)
        results[preset] = summary
        print(
            f"{preset}: answered well {100 * float(summary['answered_well']):.1f}% of "
            f"{summary['n_in']} F´ questions; in-corpus refused "
            f"{100 * float(summary['in_refused']):.1f}%; out-of-corpus refused "
            f"{100 * float(summary['out_refused']):.1f}% of {summary['n_out']}"
        )
    return results


def squad(work: Path, presets: tuple[str, ...], kept: list[dict[str, object]]) -> dict[str, object]:
    """The README's SQuAD 2.0 protocol, final outcome per preset and split."""
    folder = dataset_dir("squad2-dev")
    if folder is None:
        print("skipped: ../shared/data/squad2-dev is absent (set CITEBOUND_SHARED_DATA)")
        return {}
    store, items = build(folder, work / "squad", 0)
    items = [i for i in items if i.kind in ("in", "out")]
    results: dict[str, object] = {}
    print(
        "\n| preset | split | out-of-corpus refused (before LLM) | answerable refused (gate + "
        "answerer) | gold in the answer (of answered) |"
    )
    print("|---|---|---|---|---|")
    for preset in presets:
        audit = work / f"audit-squad-{preset}"
        shutil.rmtree(audit, ignore_errors=True)  # request ids are the SQuAD ids
        pipe, ctx = make_pipeline(store, audit, "squad", preset=preset)
        outcomes = [
            (
                it,
                ask(
                    pipe,
                    it.question,
                    qid=it.qid,
                    answers=it.answers,
                    in_corpus=it.kind == "in",
                    on_state=lambda st, p=preset: record(
                        kept, p, "squad", st.request_id, st.response
                    ),
                ),
            )
            for it in items
        ]
        ctx.close()
        per: dict[str, object] = {}
        for name in ("tune", "held-out"):
            arts = SPLITS[name]
            out = [o for it, o in outcomes if it.kind == "out" and it.article in arts]
            inn = [o for it, o in outcomes if it.kind == "in" and it.article in arts]
            ok = [o for o in inn if o.status == "OK"]
            out_refused = sum(o.status != "OK" for o in out) / len(out)
            out_before = sum(o.refused_before_llm for o in out) / len(out)
            in_gate = sum(o.refused_before_llm for o in inn)
            in_answerer = sum(o.status != "OK" and not o.refused_before_llm for o in inn)
            gold = sum(o.answer_hit for o in ok) / len(ok) if ok else None
            per[name] = {
                "out_refused": out_refused,
                "out_refused_before_llm": out_before,
                "in_refused": 1 - len(ok) / len(inn),
                "in_refused_gate": in_gate,
                "in_refused_answerer": in_answerer,
                "n_in": len(inn),
                "n_out": len(out),
                "gold_in_answer": gold,
            }
            print(
                f"| {preset} | {name} | {100 * out_refused:.1f}% ({100 * out_before:.1f}%) of "
                f"{len(out)} | {100 * (1 - len(ok) / len(inn)):.1f}% ({in_gate} + {in_answerer} "
                f"of {len(inn)}) | " + ("n/a" if gold is None else f"{100 * gold:.1f}%") + " |"
            )
        results[preset] = per
    return results


if __name__ == "__main__":
    sys.exit(main())
