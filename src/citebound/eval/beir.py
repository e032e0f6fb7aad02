"""BEIR-layout data sets (corpus.jsonl, queries.jsonl, qrels/*.tsv) for retrieval evaluation.

Each corpus line `{_id, title, text}` becomes one `Document` with exactly one `Chunk` (BEIR
judges whole documents), so `knowledge_id == _id` and qrels apply to retrieved knowledge_ids.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

from citebound.contracts.base import sha256_hex
from citebound.contracts.documents import Chunk, Document
from citebound.store.memory import MemoryStore


def iter_corpus(path: Path, collection: str = "default") -> Iterator[tuple[Document, Chunk]]:
    """One (Document, Chunk) per corpus line, in file order."""
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            rec = json.loads(line)
            kid, title, text = str(rec["_id"]), rec.get("title") or "", rec.get("text") or ""
            doc = Document(
                knowledge_id=kid,
                source_path=Path(path).name,
                title=title,
                text=text,
                content_sha256=sha256_hex(line.rstrip("\n")),
                collection=collection,
            )
            chunk = Chunk(
                chunk_id=sha256_hex(f"{kid}\n0\n{text}")[:32],
                knowledge_id=kid,
                collection=collection,
                text=text,
                chunk_index=0,
                char_start=0,
                char_end=len(text),
                token_count=len(text.split()),
                title=title,
                source_path=Path(path).name,
            )
            yield doc, chunk


def load_store(dataset: Path, root: Path, collection: str = "default") -> MemoryStore:
    """A `MemoryStore` holding the data set's corpus (index files go under `root`)."""
    store = MemoryStore(root)
    for doc, chunk in iter_corpus(Path(dataset) / "corpus.jsonl", collection):
        store.upsert_document(doc, [chunk])
    return store


def load_queries(dataset: Path) -> dict[str, str]:
    """query id -> text."""
    out: dict[str, str] = {}
    with (Path(dataset) / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                out[str(rec["_id"])] = rec["text"]
    return out


def load_qrels(dataset: Path, split: str = "train") -> dict[str, dict[str, int]]:
    """query id -> {doc id: relevance} from `qrels/<split>.tsv` (header line skipped)."""
    out: dict[str, dict[str, int]] = {}
    with (Path(dataset) / "qrels" / f"{split}.tsv").open(encoding="utf-8") as fh:
        reader = csv.reader(fh, delimiter="\t")
        next(reader, None)
        for row in reader:
            if len(row) >= 3:
                out.setdefault(row[0], {})[row[1]] = int(row[2])
    return out
