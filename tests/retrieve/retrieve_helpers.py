"""Helpers shared by the retrieval tests: a small corpus, chunk builder, policy variants.

A uniquely named module (not conftest) so that imports never collide with other areas.
"""

from __future__ import annotations

from citebound.contracts.base import sha256_hex
from citebound.contracts.documents import Chunk, Document
from citebound.contracts.retrieval import RetrievalRow
from citebound.policy import GatePolicy, Policy, load_policy

Doc = dict[str, object]

CORPUS: list[Doc] = [
    {
        "id": "pump-manual",
        "title": "Pump P-100 manual",
        "equipment_id": "P-100",
        "knowledge_type": "manual",
        "event_date": "2023-05-01",
        "chunks": [
            "Safety: isolate the pump electrically before any maintenance work.",
            "Torque the impeller bolts of pump P-100 to 40 Nm in a star pattern.",
            "Check the mechanical seal for leaks after restarting the pump.",
        ],
    },
    {
        "id": "valve-report",
        "title": "Valve V-7 maintenance report",
        "equipment_id": "V-7",
        "knowledge_type": "maintenance_report",
        "event_date": "2024-02-10",
        "chunks": [
            "The valve V-7 actuator was replaced after it failed to close fully.",
            "Valve stem packing was tightened to stop a small steam leak.",
        ],
    },
    {
        "id": "general-faq",
        "title": "Plant FAQ",
        "equipment_id": None,
        "knowledge_type": "faq",
        "event_date": None,
        "chunks": [
            "Bolts on rotating equipment are usually torqued with a calibrated wrench.",
            "Visitors must wear a hard hat and safety glasses on the plant floor.",
        ],
    },
    {
        "id": "astronomy",
        "title": "Notes on astronomy",
        "equipment_id": None,
        "knowledge_type": "document",
        "event_date": "2020-01-01",
        "chunks": ["Jupiter is the largest planet of the solar system and has many moons."],
    },
]


def make_docs(spec: Doc, collection: str = "default") -> tuple[Document, list[Chunk]]:
    """A Document and its chunks from a compact spec (chunk_id = content hash)."""
    kid = str(spec["id"])
    texts = list(spec["chunks"])  # type: ignore[call-overload]
    full = "\n\n".join(texts)
    chunks, pos = [], 0
    for i, text in enumerate(texts):
        start = full.index(text, pos)
        pos = start + len(text)
        chunks.append(
            Chunk(
                chunk_id=sha256_hex(f"{kid}\n{i}\n{text}")[:24],
                knowledge_id=kid,
                collection=collection,
                text=text,
                chunk_index=i,
                heading_path=(f"Section {i + 1}",),
                char_start=start,
                char_end=pos,
                token_count=len(text.split()),
                title=str(spec["title"]),
                source_path=f"{kid}.md",
                knowledge_type=str(spec["knowledge_type"]),
                equipment_id=spec["equipment_id"],  # type: ignore[arg-type]
                event_date=spec["event_date"],  # type: ignore[arg-type]
            )
        )
    doc = Document(
        knowledge_id=kid,
        source_path=f"{kid}.md",
        title=str(spec["title"]),
        text=full,
        content_sha256=sha256_hex(full),
        knowledge_type=str(spec["knowledge_type"]),
        equipment_id=spec["equipment_id"],  # type: ignore[arg-type]
        event_date=spec["event_date"],  # type: ignore[arg-type]
        collection=collection,
    )
    return doc, chunks


def policy_with(
    base: str = "hybridrag",
    *,
    min_score: float | None = None,
    min_chunks: int | None = None,
    **retrieval: object,
) -> Policy:
    """A preset with the gate and retrieval knobs replaced."""
    pol = load_policy(base)
    gate = GatePolicy(
        min_score=pol.gate.min_score if min_score is None else min_score,
        min_chunks=pol.gate.min_chunks if min_chunks is None else min_chunks,
    )
    return pol.model_copy(
        update={"gate": gate, "retrieval": pol.retrieval.model_copy(update=retrieval)}
    )


def row(rank: int, similarity: float, text: str) -> RetrievalRow:
    """A bare ranked row (no source) for the gate and promotion rules."""
    return RetrievalRow(
        chunk_id=f"c{rank}",
        knowledge_id=f"k{rank}",
        rank=rank,
        similarity=similarity,
        chunk_text=text,
        knowledge_type_effective="document",
    )
