"""Lexical BM25 over tantivy, with a stated tie order and a query-normalized score.

Ranking: BM25 score desc, then chunk_id asc. tantivy orders equal scores by segment layout, so
`search` over-fetches until the score at the cut-off is settled and sorts itself.

`normalized` scores divide BM25 by the query's *reference score* Σ idf(t) over the analyzed
query terms (with multiplicity): the BM25 of an average-length chunk that contains every query
term exactly once. It is clipped to [0, 1], so 1.0 means "covers all query terms at least as
well as that reference chunk"; it is query-independent in scale, unlike max-normalization.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import tantivy

from citebound.errors import StoreError

ANALYZERS = ("en_stem", "default")
_TOKENIZER = "cb_text"


def _analyzer(name: str) -> tantivy.TextAnalyzer:
    if name not in ANALYZERS:
        raise StoreError(f"unknown lexical analyzer '{name}' (use one of {ANALYZERS})")
    builder = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
    )
    if name == "en_stem":
        builder = builder.filter(tantivy.Filter.stemmer("english"))
    return builder.build()


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("body", stored=False, tokenizer_name=_TOKENIZER, index_option="freq")
    sb.add_unsigned_field("row", stored=False, indexed=False, fast=True)
    sb.add_text_field("equipment_id", stored=False, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("knowledge_type", stored=False, tokenizer_name="raw", index_option="basic")
    sb.add_integer_field("event_day", stored=False, indexed=True, fast=True)
    return sb.build()


@dataclass(frozen=True)
class LexicalDoc:
    """One indexed row. `row` is the chunk's position in the index's chunk_id-sorted order."""

    row: int
    text: str
    equipment_id: str | None
    knowledge_type: str
    event_day: int | None  # YYYYMMDD, None when the chunk has no parseable date


@dataclass(frozen=True)
class LexicalFilter:
    """Filters applied inside the BM25 query (rows lacking a filtered field never match)."""

    equipment_id: str | None = None
    knowledge_type: str | None = None
    day_from: int | None = None
    day_to: int | None = None


def build_lexical(path: Path, docs: Sequence[LexicalDoc], analyzer: str) -> None:
    """(Re)build the index at `path` atomically (written to a sibling dir, then renamed)."""
    tmp = path.with_name(path.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    index = tantivy.Index(_schema(), path=str(tmp), reuse=False)
    index.register_tokenizer(_TOKENIZER, _analyzer(analyzer))
    writer = index.writer(heap_size=128_000_000, num_threads=1)
    for d in docs:
        doc = tantivy.Document()
        doc.add_text("body", d.text)
        doc.add_unsigned("row", d.row)
        doc.add_text("knowledge_type", d.knowledge_type)
        if d.equipment_id is not None:
            doc.add_text("equipment_id", d.equipment_id)
        if d.event_day is not None:
            doc.add_integer("event_day", d.event_day)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    shutil.rmtree(path, ignore_errors=True)
    tmp.rename(path)


class LexicalIndex:
    """A read-only BM25 index opened from disk.

    Args:
        path: Directory written by `build_lexical`.
        analyzer: The analyzer the index was built with (recorded in the manifest).
    """

    def __init__(self, path: Path, analyzer: str) -> None:
        try:
            self._index = tantivy.Index.open(str(path))
        except (OSError, ValueError) as err:
            raise StoreError(f"cannot open lexical index {path}: {err}") from None
        self._analyzer = _analyzer(analyzer)
        self._index.register_tokenizer(_TOKENIZER, self._analyzer)
        self._schema = self._index.schema
        self._searcher = self._index.searcher()
        self.num_docs = int(self._searcher.num_docs)

    def terms(self, text: str) -> list[str]:
        """The query's analyzed terms, in order, with repeats."""
        return [t for t in self._analyzer.analyze(text) if t]

    def reference_score(self, terms: Sequence[str]) -> float:
        """Σ idf(t) over the terms the collection holds (`_bm25_idf`)."""
        return sum((self._bm25_idf(df) for df in map(self._doc_freq, terms) if df), 0.0)

    def idf(self, word: str) -> float:
        """How rare `word` is in the collection: the idf of its rarest analyzed token (a word
        absent from every chunk is the rarest of all); 0.0 for no token. The gate weighs a
        question's words by it (`gate.measures.top_coverage`)."""
        return max((self._bm25_idf(self._doc_freq(t)) for t in self.terms(word)), default=0.0)

    def _doc_freq(self, term: str) -> int:
        return int(self._searcher.doc_freq("body", term))

    def _bm25_idf(self, df: int) -> float:
        """tantivy's BM25 idf of a term in `df` chunks: ln(1 + (N - n + 0.5) / (n + 0.5))."""
        n_docs = max(self.num_docs, 1)
        return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))

    def _query(self, terms: Sequence[str], flt: LexicalFilter) -> tantivy.Query:
        should = [
            (tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "body", t)) for t in terms
        ]
        clauses = [(tantivy.Occur.Must, tantivy.Query.boolean_query(should))]
        filters: list[tantivy.Query] = []
        if flt.equipment_id is not None:
            filters.append(tantivy.Query.term_query(self._schema, "equipment_id", flt.equipment_id))
        if flt.knowledge_type is not None:
            filters.append(
                tantivy.Query.term_query(self._schema, "knowledge_type", flt.knowledge_type)
            )
        if flt.day_from is not None or flt.day_to is not None:
            filters.append(
                tantivy.Query.range_query(
                    self._schema, "event_day", tantivy.FieldType.Integer, flt.day_from, flt.day_to
                )
            )
        # Filters must not change BM25: they match with a constant score of 0.
        clauses += [(tantivy.Occur.Must, tantivy.Query.const_score_query(f, 0.0)) for f in filters]
        return tantivy.Query.boolean_query(clauses)

    def search(
        self, text: str, limit: int, flt: LexicalFilter | None = None
    ) -> list[tuple[int, float]]:
        """Top `limit` (row, bm25) pairs, ordered by score desc then row asc (= chunk_id asc)."""
        terms = self.terms(text)
        if not terms or limit <= 0 or self.num_docs == 0:
            return []
        query = self._query(terms, flt or LexicalFilter())
        fetch = limit + 16
        while True:
            result = self._searcher.search(query, limit=fetch, count=False)
            hits = result.hits
            rows = self._searcher.fast_field_values("row", [addr for _, addr in hits])
            if any(r is None for r in rows):
                raise StoreError("lexical index lacks row numbers: rebuild it")
            pairs = sorted(
                ((int(r or 0), float(s)) for (s, _), r in zip(hits, rows, strict=True)),
                key=lambda p: (-p[1], p[0]),
            )
            # Settled when fewer hits than asked exist, or the last fetched score is strictly
            # below the score at the cut-off (so no unseen row can tie into the top `limit`).
            if len(hits) < fetch or len(pairs) <= limit or pairs[-1][1] < pairs[limit - 1][1]:
                return pairs[:limit]
            fetch *= 2
