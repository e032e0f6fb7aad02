"""Token counting behind one protocol: exact offline BPE (quicktok) or seed 004's estimator."""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Protocol, runtime_checkable

from citebound.errors import ConfigError

# Counts are memoized per tokenizer: the same evidence chunks come back across questions, and
# assembly, the prompt budget and packaging count them again; BPE is the costly part.
COUNT_CACHE_SIZE = 16_384


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens. `name` is recorded in traces so counts can be reproduced."""

    name: str

    def count(self, text: str) -> int: ...


class QuicktokTokenizer:
    """Exact BPE counts identical to tiktoken's `encode_ordinary`, offline (quicktok-v1).

    Special-token strings in evidence are counted as plain text, never as specials.
    """

    def __init__(self, encoding: str) -> None:
        import quicktok

        try:
            self._enc = quicktok.Tokenizer(encoding)
        except Exception as err:  # the extension raises plain RuntimeError/ValueError
            raise ConfigError(f"unknown tokenizer encoding '{encoding}': {err}") from None
        self.name = encoding
        self._count = lru_cache(maxsize=COUNT_CACHE_SIZE)(self._enc.count)

    def count(self, text: str) -> int:
        return int(self._count(text))

    def encode(self, text: str) -> list[int]:
        return list(self._enc.encode_ordinary(text))

    def decode(self, ids: list[int]) -> str:
        return str(self._enc.decode(ids))


class CharTokenizer:
    """Seed 004's estimator: tokens ≈ character count (conservative for English)."""

    name = "chars"

    def count(self, text: str) -> int:
        return len(text)


_LOAD_LOCK = threading.Lock()


@lru_cache(maxsize=8)
def _load_tokenizer(name: str) -> Tokenizer:
    if name == "chars":
        return CharTokenizer()
    return QuicktokTokenizer(name)


def get_tokenizer(name: str) -> Tokenizer:
    """Return a cached tokenizer by policy name: cl100k_base, o200k_base, llama3, qwen3, chars.

    Thread-safe (one instance per name): loading a BPE table takes 0.3-0.8 s, so the CLI starts
    it on a background thread (`citebound.cli._warm`) and the request waits for that load.
    """
    with _LOAD_LOCK:
        return _load_tokenizer(name)
