"""The default embedder's window: what one chunk may hold so that all of it is embedded.

all-MiniLM-L6-v2 reads `WINDOW_TOKENS` WordPiece tokens, `[CLS]` and `[SEP]` included, and
drops the rest. What it reads of a chunk is `index_text` (document title and heading path as a
first line, then the chunk text), so the chunker checks that text with the embedder's own
tokenizer (`window_tokens`): a chunk past the window would be searched by its first part only.

The tokenizer is the one the package ships for the embedder (`index/minilm/tokenizer.json`),
read with `tokenizers` (extra `retrieval`); without that package `window_tokens` is None and
the chunker keeps to `chunk_tokens` alone (no dense index can be built without it either).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

# all-MiniLM-L6-v2 was trained with max_seq_length 256 (its sentence_bert_config); the
# embedder truncates there (`citebound.index.embedder.MAX_TOKENS`).
WINDOW_TOKENS = 256
TOKENIZER_FILE = Path(__file__).resolve().parent.parent / "index" / "minilm" / "tokenizer.json"

_LOCK = threading.Lock()


def index_head(title: str, heading_path: tuple[str, ...]) -> str:
    """The first line both indexes see: title and headings joined by ` > ` ("" for none)."""
    head = [title] if title else []
    head += [h for h in heading_path if h and h != title]
    return " > ".join(head)


class _Indexed(Protocol):
    """What `index_text` reads of a `contracts.documents.Chunk`; text/ is a word layer below the
    contracts, so it names only these fields."""

    @property
    def title(self) -> str: ...
    @property
    def heading_path(self) -> tuple[str, ...]: ...
    @property
    def text(self) -> str: ...


def index_text(chunk: _Indexed) -> str:
    """What both indexes see: title and heading path as a first line, then the chunk text."""
    head = index_head(chunk.title, chunk.heading_path)
    return (head + "\n" + chunk.text) if head else chunk.text


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:  # extra `retrieval` absent
        return None
    if not TOKENIZER_FILE.is_file():
        return None
    tok = Tokenizer.from_file(str(TOKENIZER_FILE))
    tok.no_truncation()
    tok.no_padding()
    return tok


def window_tokens(text: str) -> int | None:
    """The embedder's tokens in `text`, special tokens included; None without `tokenizers`.

    >>> window_tokens("minimum_cruise_ratio: 0.5")  # doctest: +SKIP
    11
    """
    with _LOCK:
        tok = _tokenizer()
    if tok is None:
        return None
    return len(tok.encode(text).ids)


__all__ = ["TOKENIZER_FILE", "WINDOW_TOKENS", "index_head", "index_text", "window_tokens"]
