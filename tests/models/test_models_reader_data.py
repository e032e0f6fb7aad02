"""The reader's training data (training/reader): which sentence is labelled as stating the
answer, which split it lands in, and that the build is deterministic. Runs on small files
written here, so it needs neither ../shared/data nor torch."""

from __future__ import annotations

import json
from pathlib import Path

from training.common import Pair, read_jsonl
from training.reader import build, evaluate, sources

SENTENCES = ["The pump runs at 40 rpm.", "It was built in 1990.", "Oil is changed yearly."]


def _squad(root: Path) -> None:
    context = " ".join(SENTENCES)
    articles = []
    for a in range(4):  # articles 3 and 4 (indexes 2, 3) are dev articles
        qas = [
            {
                "id": f"q{a}",
                "question": "When was it built?",
                "answers": [{"text": "1990", "answer_start": context.index("1990")}],
                "is_impossible": False,
            },
            {"id": f"u{a}", "question": "Who painted the pump?", "answers": [],
             "is_impossible": True},
        ]  # fmt: skip
        articles.append({"title": f"Pump_{a}", "paragraphs": [{"context": context, "qas": qas}]})
    (root / "squad2-dev").mkdir(parents=True)
    (root / "squad2-dev" / "dev-v2.0-part1.json").write_text(json.dumps({"data": articles}))


def _halueval_and_scifact(root: Path) -> None:
    (root / "halueval-dev").mkdir(parents=True)
    items = [
        {"question": "How fast does the pump run?", "knowledge": " ".join(SENTENCES),
         "right_answer": "40 rpm", "hallucinated_answer": "50 rpm"},
        {"question": "odd item", "knowledge": "Never read.", "right_answer": "read",
         "hallucinated_answer": "x"},
    ]  # fmt: skip
    (root / "halueval-dev" / "qa-dev-2000.jsonl").write_text(
        "".join(json.dumps(i) + "\n" for i in items)
    )
    (root / "scifact").mkdir(parents=True)
    claims = [
        {"claim_id": 5, "claim": "The pump runs slowly.", "label": "SUPPORT",
         "abstract_sentences": repr(SENTENCES), "evidence_sentence_ids": "[0]"},
        {"claim_id": 6, "claim": "Nothing is known.", "label": "NEI",
         "abstract_sentences": repr(SENTENCES), "evidence_sentence_ids": "[]"},
    ]  # fmt: skip
    (root / "scifact" / "claims_train_evidence.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in claims)
    )


def test_the_passage_is_the_heading_path_then_the_sentence() -> None:
    assert sources.passage(["Pump", "Speed"], " It runs. ") == "Pump > Speed: It runs."
    assert sources.passage([], "It runs.") == "It runs."


def test_squad_labels_the_sentence_holding_the_answer_and_splits_by_article(
    tmp_path: Path,
) -> None:
    _squad(tmp_path)
    rows = list(sources.squad(tmp_path))
    gold = [(split, p) for split, p in rows if p.label == 1]
    assert {p.premise for _, p in gold} == {f"Pump {a}: It was built in 1990." for a in range(4)}
    assert [split for split, _ in gold] == ["train", "train", "dev", "dev"]
    unanswerable = [p for _, p in rows if p.kind == "unanswerable"]
    assert len(unanswerable) == 4 * sources.UNANSWERABLE_NEGATIVES and not any(
        p.label for p in unanswerable
    )
    assert all(split == "train" for split, _ in sources.squad(tmp_path, all_train=True))


def test_halueval_and_scifact_label_the_answering_sentence(tmp_path: Path) -> None:
    _halueval_and_scifact(tmp_path)
    qa = list(sources.halueval_qa(tmp_path))
    assert [(p.premise, p.label) for _, p in qa] == [(s, int(i == 0)) for i, s in
                                                     enumerate(SENTENCES)]  # fmt: skip
    assert all(p.claim == "How fast does the pump run?" for _, p in qa)  # odd items unread
    sci = list(sources.scifact(tmp_path))
    assert [(split, p.label) for split, p in sci] == [("dev", 1), ("dev", 0), ("dev", 0)]


def test_fprime_reads_prose_under_its_headings_and_skips_held_out_sets(tmp_path: Path) -> None:
    doc = tmp_path / "fprime-docs" / "Svc" / "Pump.md"
    doc.parent.mkdir(parents=True)
    doc.write_text(
        "# Pump\n\n## Speed\n\nThe pump runs\nat 40 rpm.\nIt is quiet.\n\n```\nspeed = 40 rpm\n```\n"
        "| speed | 40 rpm |\n\n## Care\n\nOil is changed yearly.\n"
    )
    questions = tmp_path / "questions"
    questions.mkdir()
    q = {"id": "p1", "doc": "Svc/Pump.md", "question": "How fast does the pump run?",
         "facts": [["40 rpm"]]}  # fmt: skip
    for name in ("fprime_questions_dev2.jsonl", sources.HELD_OUT[0]):
        (questions / name).write_text(json.dumps(q) + "\n")
    rows = [p for _, p in sources.fprime(tmp_path, questions)]
    assert [(p.premise, p.label) for p in rows] == [
        ("Pump > Speed: The pump runs at 40 rpm.", 1),  # hard-wrapped lines are one sentence
        ("Pump > Speed: It is quiet.", 0),  # negatives: no shared word, document order
        ("Pump > Care: Oil is changed yearly.", 0),
    ]  # the code block and the table are not candidates; the held-out set was not read


def test_build_is_deterministic_and_counts_what_it_wrote(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _squad(data)
    _halueval_and_scifact(data)
    first = build.build(tmp_path / "a", data=data)
    build.build(tmp_path / "b", data=data)
    for name in ("train.jsonl", "dev.jsonl", "counts.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    train = list(read_jsonl(tmp_path / "a" / "train.jsonl"))
    counts = first["train"]
    assert isinstance(counts, dict)
    assert counts["pairs"] == len(train) and counts["positive"] == sum(p.label for p in train)


def test_evaluate_ranks_the_best_positive_and_breaks_ties_against_it() -> None:
    assert evaluate.ranks([0.9, 0.5, 0.1], [0, 1, 0]) == 2
    assert evaluate.ranks([0.5, 0.5, 0.1], [0, 1, 0]) == 2  # a tie is not a win
    assert evaluate.ranks([0.2, 0.9, 0.9], [1, 1, 0]) == 2
    pairs = [
        Pair("a", "q1", 1, "s", "gold"),
        Pair("b", "q1", 0, "s", "other"),
        Pair("c", "q2", 0, "s", "other"),  # q2 has no positive: left out
    ]
    by = evaluate.groups(pairs)
    assert list(by) == [("s", "q1")]
    got = evaluate.evaluate(by, lambda cands: [1.0 if p.premise == "b" else 0.0 for p in cands])
    assert got["s"] == {"questions": 1, "p_at_1": 0.0, "mrr": 0.5} and got["all"] == got["s"]
