"""The HaluEval QA refusal tune set (`citebound.eval.halueval_tune`) and the offline tools of
`benchmarks/tune_answerer.py` that read its captures (simulate with the preset's whole gate,
refusals by rule), on a tiny synthetic file in the shared layout. The study script runs as a
user runs it, in a subprocess: no test imports from benchmarks/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from citebound.eval.halueval_tune import FILE, in_corpus_answer, paragraphs
from citebound.text.terms import terms

TUNE_ANSWERER = Path(__file__).resolve().parents[2] / "benchmarks" / "tune_answerer.py"


def _tune_answerer(*args: str) -> subprocess.CompletedProcess[str]:
    """`python benchmarks/tune_answerer.py ARGS` with this run's environment and imports."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run(
        [sys.executable, str(TUNE_ANSWERER), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


ITEMS = [
    {
        "knowledge": "The HP-220 pump was built in Aarhus in 1998.The Aarhus works closed in 2004.",
        "question": "In which city was the HP-220 pump built?",
        "right_answer": "Aarhus",
    },
    {
        "knowledge": "Mount Etna is an active volcano on Sicily. It erupted in 2021.",
        "question": "On which island is Mount Etna?",
        "right_answer": "Sicily",
    },
    {
        "knowledge": "The Grundfos company makes circulator pumps in Bjerringbro.",
        "question": "Where does Grundfos make circulator pumps?",
        "right_answer": "Bjerringbro",
    },
    {
        "knowledge": "Lake Baikal in Siberia is the deepest lake on Earth.",
        "question": "Which is the deepest lake on Earth?",
        "right_answer": "Lake Baikal",
    },
]


def test_glued_paragraphs_are_split_and_nothing_else() -> None:
    text = "Arthur's Magazine was a periodical in the 19th century.First for Women is a magazine."
    assert paragraphs(text) == (
        "Arthur's Magazine was a periodical in the 19th century.\n\nFirst for Women is a magazine."
    )
    # A stop followed by a space, an initialism and a decimal are not paragraph joins.
    for kept in ("It ended. Then it began.", "The U.S.Army base.", "Version 2.5 shipped."):
        assert paragraphs(kept) == kept


def test_an_outside_question_an_indexed_passage_answers_is_flagged() -> None:
    indexed = ["The HP-220 pump was built in Aarhus by Grundfos engineers in 1998."]
    said = [terms(t) for t in indexed]
    asked = {"question": "In which city did Grundfos build the HP-220?", "right_answer": "Aarhus"}
    assert in_corpus_answer(asked, said, indexed)
    # The answer alone is not enough: too few of the question's key terms are there.
    other = {"question": "Which Danish city hosts the Tall Ships Races?", "right_answer": "Aarhus"}
    assert not in_corpus_answer(other, said, indexed)
    # Yes / no and very short answers never flag (they are in any passage).
    yes = {"question": "Was the HP-220 built by Grundfos in Aarhus?", "right_answer": "yes"}
    assert not in_corpus_answer(yes, said, indexed)
    assert not in_corpus_answer({**asked, "right_answer": "in"}, said, indexed)


@pytest.fixture
def tiny_halueval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data" / "halueval-dev"
    folder.mkdir(parents=True)
    lines = [json.dumps({**x, "hallucinated_answer": "no"}) for x in ITEMS]
    (folder / FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("CITEBOUND_SHARED_DATA", str(tmp_path / "data"))
    return tmp_path / "work"


@pytest.mark.integration
def test_capture_then_simulate_and_refusals(tiny_halueval: Path) -> None:
    work = str(tiny_halueval)
    run = _tune_answerer("capture", "--halueval", "--open-gate", "--work", work)
    assert run.returncode == 0, run.stderr
    records = [
        json.loads(x)
        for x in (tiny_halueval / "capture-open-halueval.jsonl").read_text("utf-8").splitlines()
    ]
    # Even items indexed and answerable, odd ones out of corpus; each asked once.
    assert [(r["qid"], r["kind"]) for r in records] == [
        ("hq0", "in"),
        ("hq2", "in"),
        ("hq1", "out"),
        ("hq3", "out"),
    ]
    capture = str(tiny_halueval / "capture-open-halueval.jsonl")
    run = _tune_answerer("simulate", "--work", work, "--capture", capture, "--policy-gate", "{}")
    assert run.returncode == 0, run.stderr
    line = run.stdout.strip()
    assert line.startswith("gate 0.76/0.55 tune: ")
    assert "of 2) |" in line and "out-of-corpus the gate refused" in line
    # The preset's gate, refusing everything, leaves nothing for the answerer.
    passes = ("covered_min_score", "found_min_score", "rare_min_score")
    closed = json.dumps({"min_score": 1.0, **dict.fromkeys(passes)})
    closed_line = _tune_answerer("simulate", "--capture", capture, "--policy-gate", closed).stdout
    assert "answerable refused 100.0% (gate 2, answerer 0, failed 0 of 2)" in closed_line
    run = _tune_answerer("refusals", "--capture", capture)
    assert run.returncode == 0, run.stderr
    assert "of 2 answerable" in run.stdout.splitlines()[-1]
