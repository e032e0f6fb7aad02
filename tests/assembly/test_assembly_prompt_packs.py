"""Seed 004 `assemble_prompt`: one test per example and edge case of the seed, plus errors.

Packs are built by hand here; tests/retrieve/test_retrieve_packs.py runs the seed's examples
on real retrieval (`retrieve_packs` -> `assemble_prompt`).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

import citebound
from citebound import AssembledPrompt, PackSpan, RetrievalPack, assemble_prompt
from citebound.errors import ContractError
from citebound.packs.assemble import load_system_template

SYSTEM_SHA256 = {
    "qa": "c987790a69d36ebf990b07a8d20932835ded83a4992e9474da27af252a063d89",
    "summarize": "8635fe03e604d60e4918ad0deca4cc51fdb18dd5247d1d3210cd427771e8cc58",
}


def pack(
    pid: str,
    score: float,
    texts: tuple[str, ...] = ("Some text.",),
    *,
    doc: str = "corpus:abc123",
    path: tuple[str, ...] = ("Chapter 3", "Section 3.2"),
    order: int = 0,
) -> RetrievalPack:
    spans, pos = [], 0
    for i, text in enumerate(texts):
        spans.append(PackSpan(chunk_id=f"{pid}-{i}", text=text, start=pos, end=pos + len(text)))
        pos += len(text) + 2
    return RetrievalPack(
        id=pid, doc_id=doc, heading_path=list(path), spans=spans, score=score, order=order
    )


THREE = [
    pack("p1", 0.9, ("Machine learning learns from data.",), order=0),
    pack("p2", 0.7, ("Neural networks are layered.",), path=("Chapter 4",), order=1),
    pack("p3", 0.5, ("Training minimises a loss.",), doc="corpus:def456", order=2),
]


def test_structure_has_exactly_the_seed_keys() -> None:
    out = assemble_prompt("What is machine learning?", THREE)
    dumped = out.model_dump(by_alias=True)
    assert set(dumped) == {"prompt", "citations", "tokensEstimated"}
    assert set(dumped["prompt"]) == {"system", "user"}
    assert [set(c) for c in dumped["citations"]] == [
        {"marker", "packId", "docId", "headingPath", "spanOffsets"}
    ] * 3
    as_json = json.loads(out.model_dump_json(by_alias=True))
    assert as_json["citations"][0]["spanOffsets"] == [[0, 34]]
    assert AssembledPrompt.model_validate(as_json) == out  # camelCase JSON reads back


def test_quick_start_citations_map_markers_to_packs() -> None:
    out = assemble_prompt("What is machine learning?", THREE, headroom_tokens=100000)
    assert [(c.marker, c.pack_id, c.doc_id) for c in out.citations] == [
        ("[¹]", "p1", "corpus:abc123"),
        ("[²]", "p2", "corpus:abc123"),
        ("[³]", "p3", "corpus:def456"),
    ]
    assert out.citations[1].heading_path == ["Chapter 4"]


def test_qa_style_system_prompt() -> None:
    system = assemble_prompt("What are neural networks?", THREE, style="qa").prompt.system
    assert "only the numbered context blocks" in system  # answer based on context
    assert "must cite" in system and "[¹]" in system  # cite sources
    assert system.endswith(citebound.load_policy().refusal.model_text)  # abstain


def test_summarize_style_system_prompt() -> None:
    qa = assemble_prompt("Summarize the key concepts", THREE, style="qa")
    out = assemble_prompt("Summarize the key concepts", THREE, style="summarize")
    assert "concise summary" in out.prompt.system  # summarise
    assert "must cite" in out.prompt.system  # cite sources
    assert "Stay within the provided context" in out.prompt.system
    assert out.prompt.user == qa.prompt.user and out.prompt.system != qa.prompt.system


@pytest.mark.parametrize("style", list(SYSTEM_SHA256))
def test_system_templates_are_pinned(style: str) -> None:
    assert load_system_template(style)[1] == SYSTEM_SHA256[style]


def test_numeric_citations_are_superscript_and_listed() -> None:
    out = assemble_prompt("What is this about?", THREE, headroom_tokens=100000)
    assert out == assemble_prompt(
        "What is this about?", THREE, headroom_tokens=100000, citation_style="numeric"
    )
    assert out.prompt.user.endswith("\n\nYou may reference [¹]…[³].")
    one = assemble_prompt("What is this about?", THREE[:1])
    assert one.prompt.user.endswith("\n\nYou may reference [¹].")


def test_footnote_citations() -> None:
    out = assemble_prompt("Q?", THREE, headroom_tokens=100000, citation_style="footnote")
    assert [c.marker for c in out.citations] == ["[^1]", "[^2]", "[^3]"]
    assert out.prompt.user.endswith("You may reference [^1]…[^3].")
    assert "\n[^2]\nDoc: corpus:abc123\n" in out.prompt.user and "[^1]" in out.prompt.system


def test_context_block_format_exact_bytes_multi_span() -> None:
    p = pack("p1", 1.0, ("<paragraph text here>", "<more paragraphs if multi-span pack>"))
    out = assemble_prompt("Q?", [p], headroom_tokens=100000)
    assert out.prompt.user == (
        "Q?\n\n"
        "[¹]\n"
        "Doc: corpus:abc123\n"
        "Path: Chapter 3 > Section 3.2\n"
        "---\n"
        "<paragraph text here>\n\n<more paragraphs if multi-span pack>\n\n"
        "You may reference [¹]."
    )
    assert out.citations[0].span_offsets == [(0, 21), (23, 59)]


def test_missing_heading_path_omits_the_path_line() -> None:
    out = assemble_prompt("Q?", [pack("p1", 1.0, ("<text content>",), path=())])
    assert out.prompt.user == (
        "Q?\n\n[¹]\nDoc: corpus:abc123\n---\n<text content>\n\nYou may reference [¹]."
    )
    assert out.citations[0].heading_path == []
    blank = assemble_prompt("Q?", [pack("p1", 1.0, ("t",), path=("", " "))])
    assert "Path:" not in blank.prompt.user
    raw = {
        "id": "p1",
        "docId": "corpus:abc123",
        "headingPath": None,
        "score": 1.0,
        "spans": [{"chunkId": "p1", "text": "<text content>", "start": 0, "end": 14}],
    }
    assert assemble_prompt("Q?", [raw]).prompt.user == out.prompt.user


def test_empty_packs_give_question_only() -> None:
    out = assemble_prompt("What is this?", [])
    assert out.citations == []
    assert out.prompt.user == "What is this?"
    assert out.tokens_estimated == len(out.prompt.system) + len("What is this?")


def test_non_ascii_is_preserved() -> None:
    texts = ("机器学习是人工智能的一个分支。", "Ünïcödé — ﬁ ligature and e\u0301 kept as is.")
    out = assemble_prompt("What is 机器学习?", [pack("p1", 1.0, texts, path=("第一章",))])
    user = out.prompt.user
    assert user.startswith("What is 机器学习?\n\n[¹]\n")
    assert "Path: 第一章\n" in user and texts[0] in user and texts[1] in user  # no normalisation
    assert out.model_dump_json(by_alias=True).count("机器学习") == 2  # UTF-8, not \u escapes


def test_markers_past_nine_stay_superscript() -> None:
    packs = [pack(f"p{i}", 1.0 - i / 100, (f"t{i}",), order=i) for i in range(12)]
    out = assemble_prompt("Q?", packs, headroom_tokens=100000)
    assert [c.marker for c in out.citations][8:] == ["[⁹]", "[¹⁰]", "[¹¹]", "[¹²]"]
    assert out.prompt.user.endswith("You may reference [¹]…[¹²].")


def test_tight_budget_drops_lowest_scoring_packs() -> None:
    question = "What does this discuss?"
    packs = [pack(f"p{i}", 1.0 - i / 20, ("x" * 20,), order=i) for i in range(20)]
    out = assemble_prompt(question, packs, headroom_tokens=300)
    n = len(out.citations)
    assert 0 < n < len(packs)
    assert [c.pack_id for c in out.citations] == [f"p{i}" for i in range(n)]
    assert len(out.prompt.user) - len(question) <= 300
    # The next pack would have exceeded the headroom (stop *before* exceeding): its exact
    # cost is what n + 1 packs add to the user message.
    cost = len(assemble_prompt(question, packs[: n + 1], 100000).prompt.user) - len(question)
    assert cost > 300
    assert len(assemble_prompt(question, packs, headroom_tokens=cost).citations) == n + 1
    assert len(assemble_prompt(question, packs, headroom_tokens=cost - 1).citations) == n


def test_budget_strategy_lower_headroom_drops_more_and_100000_is_no_budget() -> None:
    packs = [pack(f"p{i}", 1.0 - i / 40, ("y" * 50,), order=i) for i in range(40)]
    kept = [
        len(assemble_prompt("Q?", packs, headroom_tokens=h).citations)
        for h in (0, 50, 100, 300, 1000, 3000, 100000)
    ]
    assert kept == sorted(kept) and kept[0] == 0 and kept[-1] == 40
    assert kept[3] == len(assemble_prompt("Q?", packs).citations)  # default is 300
    assert 0 < kept[3] < 40


def test_pack_larger_than_headroom_is_dropped_not_truncated() -> None:
    out = assemble_prompt("Q?", [pack("big", 1.0, ("z" * 500,))], headroom_tokens=300)
    assert out.citations == [] and out.prompt.user == "Q?"


def test_determinism_and_order_score_desc_then_order_asc() -> None:
    packs = [
        pack("a", 0.5, ("A.",), order=2),
        pack("b", 0.9, ("B.",), order=5),
        pack("c", 0.5, ("C.",), order=1),
        pack("d", 0.7, ("D.",), order=0),
    ]
    first = assemble_prompt("Q?", packs, headroom_tokens=100000)
    assert [c.pack_id for c in first.citations] == ["b", "d", "c", "a"]
    for perm in itertools.permutations(packs):
        again = assemble_prompt("Q?", list(perm), headroom_tokens=100000)
        assert again.model_dump_json(by_alias=True) == first.model_dump_json(by_alias=True)


def test_duplicate_pack_ids_are_cited_once() -> None:
    out = assemble_prompt("Q?", [THREE[0], THREE[0], THREE[1]], headroom_tokens=100000)
    assert [c.pack_id for c in out.citations] == ["p1", "p2"]


def test_tokens_estimated_is_character_count() -> None:
    out = assemble_prompt("Explain neural networks", THREE, headroom_tokens=200)
    assert out.tokens_estimated == len(out.prompt.system) + len(out.prompt.user)
    tok = assemble_prompt("Explain neural networks", THREE, estimator="cl100k_base")
    assert tok.tokens_estimated < len(tok.prompt.system) + len(tok.prompt.user)


def test_camel_case_json_packs_are_accepted() -> None:
    raw: list[dict[str, Any]] = [json.loads(p.model_dump_json(by_alias=True)) for p in THREE]
    assert "docId" in raw[0] and "chunkId" in raw[0]["spans"][0]
    assert assemble_prompt("Q?", raw) == assemble_prompt("Q?", THREE)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"question": "  "}, "question"),
        ({"style": "chat"}, "style"),
        ({"citation_style": "decimal"}, "citation_style"),
        ({"headroom_tokens": -1}, "headroom_tokens"),
        ({"headroom_tokens": 1.5}, "headroom_tokens"),
        ({"packs": [{"id": "x", "docId": "d", "spans": [], "score": 1.0}]}, "packs[0].spans"),
        (
            {
                "packs": [
                    {
                        "id": "x",
                        "docId": "d",
                        "spans": [{"chunkId": "c", "text": "t", "start": 5, "end": 1}],
                        "score": 1.0,
                    }
                ]
            },
            "packs[0].spans",
        ),
    ],
)
def test_bad_input_is_a_clear_contract_error(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"question": "Q?", "packs": THREE, **kwargs}
    with pytest.raises(ContractError, match=message.replace("[", r"\[")):
        assemble_prompt(**args)
