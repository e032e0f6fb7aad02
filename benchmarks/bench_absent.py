"""Questions about an attribute no document states, of an item the documents do mention.

    PYTHONPATH=src python benchmarks/bench_absent.py [--work DIR] [--json FILE]

`benchmarks/data/absent_probes.jsonl` holds, per corpus (`demo`: the bundled sample corpus as
`citebound demo` ingests it; `fprime`: `../shared/data/fprime-docs`):

* `absent` probes: "Who designed the cooling tower fan?", "What is the orbital period of the
  International Space Station?" - the item is in the documents (the gate rightly passes), the
  attribute asked is not (checked with grep when written): the only right outcome is the exact
  refusal;
* `control` questions of the same shapes (who / which company / what colour / when / how much /
  where) whose answer the documents state, with its key facts (`eval.answers.judge`).

Reported per corpus and preset (extractive provider): absent probes refused, controls answered
well, with every probe answered and every control missed listed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from citebound.cli.demo import build_demo_store
from citebound.eval.answers import AnswerQuestion, judge
from citebound.eval.data import dataset_dir
from citebound.eval.end_to_end import make_pipeline
from citebound.ingest import ingest_paths
from citebound.store.sqlite import SqliteStore

PROBES = Path(__file__).resolve().parent / "data" / "absent_probes.jsonl"
PRESETS = ("strict-v1", "hybridrag", "superprompt-v1")


def load(path: Path) -> list[tuple[str, str, AnswerQuestion]]:
    """(corpus, kind, question) per line; an absent probe is judged as out of corpus (only the
    refusal is right)."""
    out = []
    for line in path.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        corpus, kind = row.pop("corpus"), row.pop("kind")
        if kind == "absent":
            row["type"] = "ooc"
        out.append((corpus, kind, AnswerQuestion.model_validate(row)))
    return out


def stores(work: Path) -> dict[str, tuple[SqliteStore, str]]:
    """The demo store (as `citebound demo` builds it) and the F´ store, when its data is here."""
    demo, _ = build_demo_store(work / "demo")
    out = {"demo": (demo, "demo")}
    docs = dataset_dir("fprime-docs")
    if docs is None:
        print("skipped F´: ../shared/data/fprime-docs is absent (set CITEBOUND_SHARED_DATA)")
        return out
    store = SqliteStore(work / "fprime" / "store")
    ingest_paths(store, [docs], collection="fprime", progress=False)
    out["fprime"] = (store, "fprime")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "cb-bench-absent")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    ap.add_argument("--probes", type=Path, default=PROBES)
    args = ap.parse_args(argv)
    probes = load(args.probes)
    results: dict[str, dict[str, object]] = {}
    rows = []
    for corpus, (store, collection) in stores(args.work).items():
        mine = [(kind, q) for c, kind, q in probes if c == corpus]
        for preset in PRESETS:
            audit = args.work / f"audit-{corpus}-{preset}"
            shutil.rmtree(audit, ignore_errors=True)  # request ids are the probe ids
            pipe, ctx = make_pipeline(store, audit, collection, preset=preset)
            outcome: dict[str, object] = {}
            for kind, q in mine:
                resp = pipe.run(q.question, request_id=q.id).response
                status = resp.status.value if resp is not None else "FAILED"
                answer = (resp.answer or "") if resp is not None else ""
                well = judge(q, status, answer).well
                outcome[q.id] = {"kind": kind, "status": status, "well": well, "answer": answer}
                if not well:
                    what = "answered" if kind == "absent" else "missed"
                    print(f"  {corpus} {preset} {q.id} {what} {q.question!r}: {answer[:150]!r}")
            ctx.close()
            absent = [v for v in outcome.values() if isinstance(v, dict) and v["kind"] == "absent"]
            control = [v for v in outcome.values() if isinstance(v, dict) and v["kind"] != "absent"]
            refused = sum(bool(v["well"]) for v in absent)
            good = sum(bool(v["well"]) for v in control)
            results.setdefault(corpus, {})[preset] = outcome
            rows.append((corpus, preset, refused, len(absent), good, len(control)))
    print("\n| corpus | preset | absent probes refused | controls answered well |")
    print("|---|---|---|---|")
    for corpus, preset, refused, n_abs, good, n_ctl in rows:
        print(
            f"| {corpus} | {preset} | {refused}/{n_abs} ({100 * refused / max(n_abs, 1):.0f}%) "
            f"| {good}/{n_ctl} ({100 * good / max(n_ctl, 1):.0f}%) |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
