"""Exact cl100k_base token counts in Python, for processes that count a few pages of text.

quicktok builds its tables in C++ while holding the GIL (0.3-0.5 s of CPU per process), so in a
cold `citebound ask` it can neither overlap with the imports nor be skipped: it was the largest
single item of a cold ask. A question counts ~30 texts (~30,000 characters), which plain Python
counts in tens of ms with the same algorithm, given the rank table (100,256 entries) as a dict:

- pre-tokenisation: quicktok's cl100k grammar (tiktoken's pattern with possessive quantifiers,
  `'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+|...`) as a Python 3.11
  `re` pattern. The letter/number/space classes are built from quicktok's own `uniclass.bin`,
  and the contraction letters fold ASCII case only, as quicktok does, so the pieces are
  quicktok's by construction;
- merging: tiktoken's byte-pair merge (a piece that is itself a token counts 1; otherwise merge
  the adjacent pair whose concatenation has the lowest rank, leftmost first, until none is a
  token);
- the rank table: read once from quicktok's `cl100k.vocab` and kept as a marshal file in the
  cache directory (`citebound.cache_dir`), which loads in ~30 ms.

`tests/core/test_core_bpe_py.py` checks counts against quicktok on the sample corpus, the shared
data sets and generated Unicode text. `HybridCl100k` (text/tokens.py) uses this only for the
first `PY_COUNT_BUDGET_CHARS` characters of a process, then loads quicktok.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import re
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path

from citebound.cache_dir import cache_root

ENCODING = "cl100k_base"


def _data_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("quicktok")
    if spec is None or spec.origin is None:
        raise ImportError("quicktok is not installed")
    return Path(spec.origin).parent / "data"


def _ranges(blob: bytes, at: int) -> tuple[list[tuple[int, int]], int]:
    (n,) = struct.unpack_from("<I", blob, at)
    vals = struct.unpack_from(f"<{2 * n}I", blob, at + 4)
    return [(vals[2 * i], vals[2 * i + 1]) for i in range(n)], at + 4 + 8 * n


def _char_class(ranges: list[tuple[int, int]]) -> str:
    def esc(cp: int) -> str:
        return f"\\U{cp:08x}"

    return "".join(esc(lo) if lo == hi else f"{esc(lo)}-{esc(hi)}" for lo, hi in ranges)


ASTRAL = 0x10000


def _clip(ranges: list[tuple[int, int]], limit: int) -> list[tuple[int, int]]:
    return [(lo, min(hi, limit - 1)) for lo, hi in ranges if lo < limit]


def pattern(data_dir: Path, *, astral: bool = True) -> re.Pattern[str]:
    """quicktok's cl100k pre-tokeniser as a Python regular expression.

    With `astral=False` the classes stop at U+FFFF, which is only correct for text without
    characters beyond the BMP but runs ~10x faster: `re` keeps BMP ranges as a bitmap and scans
    the astral ones one by one on every failed class test.
    """
    blob = (data_dir / "uniclass.bin").read_bytes()
    letters, at = _ranges(blob, 0)
    numbers, at = _ranges(blob, at)
    spaces, _ = _ranges(blob, at)
    if not astral:
        letters, numbers, spaces = (_clip(r, ASTRAL) for r in (letters, numbers, spaces))
    L, N, S = _char_class(letters), _char_class(numbers), _char_class(spaces)
    return re.compile(
        "'(?:[sdmtSDMT]|[lL][lL]|[vV][eE]|[rR][eE])"
        f"|[^\\r\\n{L}{N}]?+[{L}]++"
        f"|[{N}]{{1,3}}+"
        f"| ?[^{S}{L}{N}]++[\\r\\n]*+"
        f"|[{S}]++\\Z"
        f"|[{S}]*[\\r\\n]"
        f"|[{S}]+(?![^{S}])"
        f"|[{S}]"
    )


def _read_vocab(path: Path) -> dict[bytes, int]:
    blob = path.read_bytes()
    (n,) = struct.unpack_from("<I", blob, 0)
    ranks: dict[bytes, int] = {}
    at = 4
    for _ in range(n):
        (size,) = struct.unpack_from("<H", blob, at)
        end = at + 2 + size
        (ranks[blob[at + 2 : end]],) = struct.unpack_from("<I", blob, end)
        at = end + 4
    return ranks


def load_ranks(data_dir: Path) -> dict[bytes, int]:
    """The cl100k rank table, from the marshal cache when there is one (else read and cached)."""
    vocab = data_dir / "cl100k.vocab"
    st = vocab.stat()
    key = hashlib.sha256(
        f"{vocab.resolve()}|{st.st_size}|{st.st_mtime_ns}|{marshal.version}".encode()
    ).hexdigest()[:24]
    root = cache_root()
    cached = root / "bpe" / f"cl100k-{key}.marshal" if root is not None else None
    if cached is not None:
        try:
            ranks = marshal.loads(cached.read_bytes())
            if isinstance(ranks, dict) and len(ranks) == struct.unpack("<I", _head(vocab))[0]:
                return ranks
        except (OSError, ValueError, EOFError, TypeError):
            pass
    ranks = _read_vocab(vocab)
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=cached.parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(marshal.dumps(ranks))
            os.replace(tmp, cached)
        except OSError:
            pass
    return ranks


def _head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(4)


def merge_count(piece: bytes, ranks: dict[bytes, int]) -> int:
    """Tokens of one pre-token: tiktoken's byte-pair merge (lowest rank first, leftmost on ties)."""
    if piece in ranks:
        return 1
    missing = 1 << 32
    # bounds[i] starts part i; rank[i] is the rank of parts i and i+1 joined (missing if none).
    bounds = list(range(len(piece) + 1))
    rank = [ranks.get(piece[i : i + 2], missing) for i in range(len(piece) - 1)]
    while rank:
        best = min(rank)
        if best == missing:
            break
        i = rank.index(best)  # leftmost lowest
        del bounds[i + 1]
        del rank[i]
        if i < len(rank):
            rank[i] = ranks.get(piece[bounds[i] : bounds[i + 2]], missing)
        if i > 0:
            rank[i - 1] = ranks.get(piece[bounds[i - 1] : bounds[i + 1]], missing)
    return len(bounds) - 1


class PyCl100k:
    """Exact cl100k_base counts (`encode_ordinary` length) in plain Python."""

    name = ENCODING

    def __init__(self, data_dir: Path | None = None) -> None:
        self._dir = data_dir or _data_dir()
        self._ranks = load_ranks(self._dir)
        self._bmp = pattern(self._dir, astral=False).findall
        self._full: Callable[[str], list[str]] | None = None
        # Pieces that are not one token, with their counts: the same evidence is counted as an
        # entry, in its block and in the whole prompt.
        self._merged: dict[bytes, int] = {}

    def _pieces(self, text: str) -> list[str]:
        if text.isascii() or max(text) < "\U00010000":
            return self._bmp(text)
        if self._full is None:
            self._full = pattern(self._dir).findall
        return self._full(text)

    def count(self, text: str) -> int:
        ranks, merged = self._ranks, self._merged
        total = 0
        for piece in self._pieces(text):
            raw = piece.encode("utf-8")
            if raw in ranks:
                total += 1
                continue
            n = merged.get(raw)
            if n is None:
                n = merged[raw] = merge_count(raw, ranks)
            total += n
        return total
