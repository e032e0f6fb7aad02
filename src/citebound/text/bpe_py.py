"""Exact cl100k_base token counts in Python, for processes that count a few pages of text.

quicktok builds its tables in C++ while holding the GIL (0.3-0.5 s of CPU per process), so in a
cold `citebound ask` it can neither overlap with the imports nor be skipped: it was the largest
single item of a cold ask. A question counts ~30 texts (~30,000 characters), which plain Python
counts in tens of ms with the same algorithm, given the rank table (100,256 entries) as a dict:

- pre-tokenisation: quicktok's cl100k grammar (tiktoken's pattern with possessive quantifiers,
  `'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+|...`) as a Python 3.11
  `re` pattern over ASCII. Other characters are first replaced by a stand-in of their class
  (letter, number, space, other: `ClassMap`, from quicktok's own `uniclass.bin`), and the
  original text is cut where the stand-in text is cut: the grammar only ever tests the class of
  a non-ASCII character, and it folds the contraction letters' case in ASCII only, as quicktok
  does, so the pieces are quicktok's by construction;
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

import bisect
import marshal
import re
import struct
from pathlib import Path

from citebound.cache_dir import KEY_PATTERN, cache_root, entry_key, prune, touch, write_atomic

ENCODING = "cl100k_base"
# The rank table's cache file name (`load_ranks`): what `prune` may remove from its folder.
_TABLE_NAME = re.compile(rf"cl100k-{KEY_PATTERN}\.marshal")


def _owned_table(path: Path) -> bool:
    return _TABLE_NAME.fullmatch(path.name) is not None and path.is_file()


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


Ranges = list[tuple[int, int]]


def read_classes(data_dir: Path) -> tuple[Ranges, Ranges, Ranges]:
    """quicktok's \\p{L}, \\p{N} and \\s code point ranges (sorted, disjoint)."""
    blob = (data_dir / "uniclass.bin").read_bytes()
    letters, at = _ranges(blob, 0)
    numbers, at = _ranges(blob, at)
    spaces, _ = _ranges(blob, at)
    return letters, numbers, spaces


def _ascii_class(ranges: Ranges) -> str:
    return "".join(
        re.escape(chr(lo))
        if lo == min(hi, 127)
        else f"{re.escape(chr(lo))}-{re.escape(chr(min(hi, 127)))}"
        for lo, hi in ranges
        if lo < 128
    )


# What every non-ASCII character becomes before the pattern runs: a character of the same class
# whose identity the grammar never tests (only ASCII letters of contractions, ' ', \\r, \\n and
# the apostrophe are tested one by one).
LETTER, NUMBER, SPACE, OTHER = "A", "0", "\t", "!"


class ClassMap(dict[int, int]):
    """A `str.translate` table: ASCII stays, any other character becomes its class's stand-in.

    Filled lazily (a binary search over quicktok's ranges per new character), so a process pays
    only for the characters it meets.
    """

    def __init__(self, letters: Ranges, numbers: Ranges, spaces: Ranges) -> None:
        super().__init__((c, c) for c in range(128))
        self._classes = [
            ([lo for lo, _ in r], [hi for _, hi in r], ord(stand_in))
            for r, stand_in in ((letters, LETTER), (numbers, NUMBER), (spaces, SPACE))
        ]

    def __missing__(self, cp: int) -> int:
        stand_in = ord(OTHER)
        for lows, highs, rep in self._classes:
            i = bisect.bisect_right(lows, cp) - 1
            if i >= 0 and cp <= highs[i]:
                stand_in = rep
                break
        self[cp] = stand_in
        return stand_in


def pattern(letters: Ranges, numbers: Ranges, spaces: Ranges) -> re.Pattern[str]:
    """quicktok's cl100k pre-tokeniser for ASCII text (what `ClassMap` makes of any text)."""
    L, N, S = _ascii_class(letters), _ascii_class(numbers), _ascii_class(spaces)
    # The stand-ins must be in their class and must not be a character the grammar tests.
    ok = all(re.fullmatch(f"[{c}]", x) for x, c in ((LETTER, L), (NUMBER, N), (SPACE, S)))
    if not ok or re.fullmatch(f"[{L}{N}{S}'sdmtlver\\r\\n ]", OTHER):
        raise ValueError("quicktok's character classes changed: the stand-ins no longer fit")
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
    key = entry_key(f"{vocab.resolve()}|{st.st_size}|{st.st_mtime_ns}|{marshal.version}")
    root = cache_root()
    cached = root / "bpe" / f"cl100k-{key}.marshal" if root is not None else None
    if cached is not None:
        try:
            ranks = marshal.loads(cached.read_bytes())
            if isinstance(ranks, dict) and len(ranks) == struct.unpack("<I", _head(vocab))[0]:
                touch(cached)  # most recently used: the last table `prune` removes
                prune(cached.parent, cached, _owned_table)  # temporaries of killed writers
                return ranks
        except (OSError, ValueError, EOFError, TypeError):
            pass
    ranks = _read_vocab(vocab)
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(cached, marshal.dumps(ranks))  # whole or absent, never partial
            prune(cached.parent, cached, _owned_table)  # tables of older quicktok/Python
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
        directory = data_dir or _data_dir()
        self._ranks = load_ranks(directory)
        classes = read_classes(directory)
        self._findall = pattern(*classes).findall
        self._classes = ClassMap(*classes)
        # Pieces that are not one token, with their counts: the same evidence is counted as an
        # entry, in its block and in the whole prompt.
        self._merged: dict[bytes, int] = {}

    def pieces(self, text: str) -> list[str]:
        """The pre-tokens of `text`, in order; they tile the text."""
        if text.isascii():
            return self._findall(text)
        # Run the ASCII pattern on the class stand-ins, cut the original at the same places
        # (one character each way, and every character starts or continues a piece).
        out, at = [], 0
        for part in self._findall(text.translate(self._classes)):
            out.append(text[at : at + len(part)])
            at += len(part)
        return out

    def count(self, text: str) -> int:
        ranks, merged = self._ranks, self._merged
        total = 0
        for piece in self.pieces(text):
            raw = piece.encode("utf-8")
            if raw in ranks:
                total += 1
                continue
            n = merged.get(raw)
            if n is None:
                n = merged[raw] = merge_count(raw, ranks)
            total += n
        return total
