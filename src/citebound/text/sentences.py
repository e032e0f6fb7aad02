"""Deterministic sentence splitting on `.`, `?`, `!` (seed 001 R5 sentence grounding rule).

Refinements that keep the rule honest on real text: a terminator only ends a sentence when
followed by whitespace or end of text (so `3.5`, `v1.2.0` and `e.g.x` stay whole), a short list
of abbreviations and single-capital initials (`J. Smith`) do not end a sentence, and citation
markers that follow a terminator (`... 40 Nm. [C0]`) stay with the sentence they cite.
"""

from __future__ import annotations

import re

_ABBREVIATIONS = frozenset(
    {
        "e.g",
        "i.e",
        "etc",
        "vs",
        "fig",
        "no",
        "dr",
        "mr",
        "mrs",
        "ms",
        "approx",
        "min",
        "max",
        "cf",
        "al",
        "ref",
        "sec",
        "eq",
        "vol",
        "p",
        "pp",
        "ch",
        "st",
        "jr",
        "sr",
        "inc",
        "ltd",
    }
)
_BOUNDARY = re.compile(r"[.?!]+(?=\s|$)")


def split_sentences(text: str, *, marker: str | None = None) -> list[str]:
    """Split `text` into non-empty sentences.

    `marker` is a regex for citation markers; markers right after a terminator are kept with
    the preceding sentence. Lines are also boundaries (lists, headings).

    >>> split_sentences("Torque to 40 Nm. [C0] Then stop! Why?", marker=r"\\[C\\d+\\]")
    ['Torque to 40 Nm. [C0]', 'Then stop!', 'Why?']
    """
    trailing = re.compile(r"(?:\s*" + marker + r")+") if marker else None
    out: list[str] = []
    for line in text.split("\n"):
        start = 0
        pos = 0
        while True:
            m = _BOUNDARY.search(line, pos)
            if m is None:
                break
            end = m.end()
            word = line[start : m.start()].rsplit(None, 1)
            last = word[-1].lower().lstrip("([") if word else ""
            # A single capital before "." is an initial (`Mark L. Lester`, `J. Smith`).
            initial = len(last) == 1 and word[-1][-1:].isupper()
            if m.group() == "." and (last in _ABBREVIATIONS or initial):
                pos = end
                continue
            if trailing is not None:
                t = trailing.match(line, end)
                if t is not None:
                    end = t.end()
            piece = line[start:end].strip()
            if piece:
                out.append(piece)
            start = pos = end
        rest = line[start:].strip()
        if rest:
            out.append(rest)
    return out
