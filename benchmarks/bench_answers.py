"""Answer quality on real engineering docs (F´), for every shipped preset.

    PYTHONPATH=src python benchmarks/bench_answers.py [--work DIR] [--json FILE]

`benchmarks/data/fprime_questions.jsonl` holds questions written by hand from
`../shared/data/fprime-docs` (definition, procedure, quantity, list, yes/no, comparison; many
documents), each with the key facts a correct answer must state, plus out-of-corpus questions
that must be refused. The docs are ingested once (the store under --work is reused); each
preset then answers every question with the built-in extractive provider, in one process.

Reported per preset: answered well (OK, every key fact, starts at a sentence start, no raw
markup; `citebound.eval.answers`), in-corpus refusals, and out-of-corpus refusals, with the
failing questions listed. The SQuAD 2.0 table for every preset comes from
`bench_end_to_end.py --parts squad` (same protocol as the README).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from citebound.eval.answers import judge, load_questions, summarize_answers
from citebound.eval.data import dataset_dir
from citebound.eval.end_to_end import make_pipeline
from citebound.ingest import ingest_paths
from citebound.store.sqlite import SqliteStore

QUESTIONS = Path(__file__).resolve().parent / "data" / "fprime_questions.jsonl"
PRESETS = ("strict-v1", "hybridrag", "superprompt-v1")
COLLECTION = "fprime"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "cb-bench-answers")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args(argv)
    docs = dataset_dir("fprime-docs")
    if docs is None:
        print("skipped: ../shared/data/fprime-docs is absent (set CITEBOUND_SHARED_DATA)")
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(args.work / "store")
    t0 = time.perf_counter()
    report = ingest_paths(store, [docs], collection=COLLECTION, progress=False)
    print(f"F´ docs: {report.chunks_total} chunks in {time.perf_counter() - t0:.1f}s")
    questions = load_questions(QUESTIONS)
    results: dict[str, object] = {}
    for preset in PRESETS:
        audit = args.work / f"audit-{preset}"
        shutil.rmtree(audit, ignore_errors=True)  # request ids are the question ids
        pipe, ctx = make_pipeline(store, audit, COLLECTION, preset=preset)
        judgements = []
        for q in questions:
            resp = pipe.run(q.question, request_id=q.id).response
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
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
