"""BM25 over tantivy: stated tie order, filters that never change scores, reference score."""

from __future__ import annotations

import math
import random
from pathlib import Path

from citebound.index.lexical import LexicalDoc, LexicalFilter, LexicalIndex, build_lexical


def _index(tmp_path: Path, texts: list[str], **meta: list[object]) -> LexicalIndex:
    docs = [
        LexicalDoc(
            row=i,
            text=t,
            equipment_id=meta.get("eq", [None] * len(texts))[i],  # type: ignore[arg-type]
            knowledge_type="manual",
            event_day=meta.get("day", [None] * len(texts))[i],  # type: ignore[arg-type]
        )
        for i, t in enumerate(texts)
    ]
    order = list(range(len(docs)))
    random.Random(7).shuffle(order)  # insertion order must not matter
    build_lexical(tmp_path / "lex", [docs[i] for i in order], "en_stem")
    return LexicalIndex(tmp_path / "lex", "en_stem")


def test_ties_break_by_row_even_past_the_fetch_window(tmp_path: Path) -> None:
    # 60 identical rows tie; tantivy's own order follows segment layout, ours is row asc
    ix = _index(tmp_path, ["pump seal"] * 60 + ["seal"])
    hits = ix.search("pump seal", 5)
    assert [r for r, _ in hits] == [0, 1, 2, 3, 4]
    assert len({s for _, s in hits}) == 1
    everything = ix.search("pump seal", 100)
    assert [r for r, _ in everything] == list(range(61))


def test_same_ranking_for_two_builds(tmp_path: Path) -> None:
    texts = [f"valve {'leak ' * (i % 3)}report {i}" for i in range(30)]
    a = _index(tmp_path / "a", texts).search("valve leak", 30)
    b = _index(tmp_path / "b", texts).search("valve leak", 30)
    assert a == b and len(a) == 30


def test_stemming_and_reference_score(tmp_path: Path) -> None:
    ix = _index(tmp_path, ["Pumps were bolted", "unrelated text", "more words here"])
    assert ix.terms("Pumping bolts!") == ["pump", "bolt"]
    (row, _score), *_ = ix.search("pump bolting", 3)
    assert row == 0
    n, df = 3, 1
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    assert ix.reference_score(["pump", "bolt"]) == 2 * idf
    assert ix.reference_score(["absent"]) == 0.0
    assert ix.search("", 3) == [] and ix.search("absent", 3) == []


def test_filters_restrict_without_changing_scores(tmp_path: Path) -> None:
    texts = ["pump torque", "pump torque spec", "pump", "pump torque"]
    ix = _index(
        tmp_path, texts, eq=["P1", None, "P1", "P2"], day=[20240101, 20240105, None, 20231231]
    )
    plain = dict(ix.search("pump torque", 10))
    by_eq = ix.search("pump torque", 10, LexicalFilter(equipment_id="P1"))
    assert {r for r, _ in by_eq} == {0, 2}
    assert all(plain[r] == s for r, s in by_eq)
    by_day = ix.search("pump torque", 10, LexicalFilter(day_from=20240101, day_to=20240105))
    assert {r for r, _ in by_day} == {0, 1}  # row 2 has no date: never inside a range
    assert all(plain[r] == s for r, s in by_day)
