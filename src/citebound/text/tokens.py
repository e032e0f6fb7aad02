"""Token counting behind one protocol: exact offline BPE (quicktok) or the packs' estimator
(one token per character, docs/assemble_prompt.md).

cl100k_base (the default policies' tokenizer) starts on an exact Python counter and moves to
quicktok after `PY_COUNT_BUDGET_CHARS` (`HybridCl100k`): same counts, no 0.3-0.5 s table load
for a process that counts a few pages (a cold `citebound ask`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
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


# Characters a process counts with the Python cl100k counter before it loads quicktok. Measured
# on 40 F´ Markdown files (173,000 characters; 2-core EPYC, busy host): the Python counter takes
# ~100 ms of CPU for them, quicktok's table load 0.35-0.45 s, so past ~500,000 characters loading
# quicktok is cheaper. A cold `ask` on the demo store counts ~30,000.
PY_COUNT_BUDGET_CHARS = 500_000


class HybridCl100k:
    """cl100k_base counts that start in Python and move to quicktok after a budget.

    Both count exactly the same (`text/bpe_py.py`; tests compare them), so when the switch
    happens never changes a result: a one-question process never pays quicktok's 0.3-0.5 s table
    load (which holds the GIL), a bulk job (ingest, a server) soon runs on quicktok.
    `encode`/`decode` always use quicktok.
    """

    name = "cl100k_base"

    def __init__(self, fast: Callable[[str], int]) -> None:
        self._fast: Callable[[str], int] | None = fast
        self._budget = PY_COUNT_BUDGET_CHARS
        self._exact: QuicktokTokenizer | None = None
        self._lock = threading.Lock()
        self._count = lru_cache(maxsize=COUNT_CACHE_SIZE)(self._uncached)

    def _quicktok(self) -> QuicktokTokenizer:
        with self._lock:
            if self._exact is None:
                self._exact = QuicktokTokenizer(self.name)
                self._fast = None
            return self._exact

    def _uncached(self, text: str) -> int:
        fast = self._fast
        if fast is not None and self._budget >= len(text):
            self._budget -= len(text)
            return fast(text)
        return self._quicktok().count(text)

    def count(self, text: str) -> int:
        return int(self._count(text))

    def encode(self, text: str) -> list[int]:
        return self._quicktok().encode(text)

    def decode(self, ids: list[int]) -> str:
        return self._quicktok().decode(ids)


def _python_cl100k() -> Callable[[str], int] | None:
    """The Python counter when its rank table is cached on this machine (else None: reading
    quicktok's vocabulary in Python is slower than loading quicktok)."""
    # Lazy: cache_dir (hashlib, shutil, tempfile) costs ~11 ms, paid only by the Python counter.
    from citebound.cache_dir import cache_root

    if cache_root() is None:
        return None
    try:
        from citebound.text.bpe_py import PyCl100k

        return PyCl100k().count
    except Exception:  # no quicktok data, unreadable cache: quicktok reports it
        return None


class CharTokenizer:
    """The packs' estimator: tokens ≈ character count (conservative for English)."""

    name = "chars"

    def count(self, text: str) -> int:
        return len(text)


_LOAD_LOCK = threading.Lock()


@lru_cache(maxsize=8)
def _load_tokenizer(name: str) -> Tokenizer:
    if name == "chars":
        return CharTokenizer()
    if name == HybridCl100k.name:
        fast = _python_cl100k()
        if fast is not None:
            return HybridCl100k(fast)
    return QuicktokTokenizer(name)


def get_tokenizer(name: str) -> Tokenizer:
    """Return a cached tokenizer by policy name: cl100k_base, o200k_base, llama3, qwen3, chars.

    Thread-safe (one instance per name): loading a BPE table takes 0.3-0.8 s, so the CLI starts
    it on a background thread (`citebound.cli._warm`) and the request waits for that load.
    """
    with _LOAD_LOCK:
        return _load_tokenizer(name)
