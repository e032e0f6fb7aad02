"""Deterministic sentence splitting (the R5 rule: every answer sentence must be grounded).

The validator requires a citation in every factual sentence, so the splitter is a security
boundary: a sentence it fails to cut off hides from that rule ("The pump never needs
maintenance.The pump runs at 45 bar [C0]." must be two sentences, the first uncited). Rules:

- Every line is a boundary: `str.splitlines` breaks (`\\n`, `\\r`, `\\u2028`, `\\x85`, ...),
  and so is an inline bullet (` • `).
- `.`, `?`, `!`, `…` (and runs of them, with closing quotes/brackets and citation markers
  right after) end a sentence when followed by whitespace, a zero-width character or the end.
- CJK and other full-width terminators (`。`, `！`, `？`, `｡`, `．`) always end a sentence.
- A terminator glued to the next word ends a sentence when that word is a plain capitalised
  word (`maintenance.The`, `done?Then`, `stop…It`) and the token before it is an ordinary word:
  all lowercase letters, or any letters when the next word is a sentence-opening function word
  (`The`, `This`, `It`). Qualified names (`Fw.BufferSend`, `Command Dispatcher.Instance`,
  `history.History()`), decimals (`3.5`) and versions (`v1.2.0`) stay whole.
- After a known abbreviation (`e.g.`, `etc.`, `Fig.`) or a single-capital initial (`J. Smith`)
  a `.` does not end the sentence, unless the next word opens a sentence (`The`, `It`, ...),
  or, for abbreviations that also end sentences (`etc.`, `Inc.`), any capitalised word follows
  (`by J. R. R. Tolkien` stays whole, `needs grade A. The pump` splits).
- Citation markers that follow a terminator (`... 40 Nm. [C0]`) stay with the sentence they
  cite.
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
# Abbreviations that commonly end a sentence too: a capitalised word after them starts one.
_FINAL_ABBREVIATIONS = frozenset({"etc", "inc", "ltd", "jr", "sr", "al", "approx"})
# Capitalised function words that open sentences and never continue a name or a reference.
_OPENER_TEXT = """the this that these those it its there they their he she we you an in on at
    for if when then but and or so as to of by with from after before all each every
    some no not our his her my your what which who how why where while although because
    however also thus hence therefore"""
_OPENERS = frozenset(_OPENER_TEXT.split())
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
_CLOSERS = "\"'”’»)]}"
# A run of terminators, then closing quotes/brackets.
_TERMINATOR = re.compile(rf"[.?!…]+[{re.escape(_CLOSERS)}]*|[。！？｡．]+")
_WIDE = frozenset("。！？｡．")
_NEXT_WORD = re.compile(rf"[{_ZERO_WIDTH}\s]*([^\W\d_][\w'’-]*)(.?)")
_PLAIN_CAPITALISED = re.compile(r"[^\W\d_][^\W\d_]*")
# An inline bullet (`… fails • The pump …`) starts a list item, like a line break.
_INLINE_BULLET = re.compile(r"\s+(?=[•◦▪‣●]\s)")


def _is_space(ch: str) -> bool:
    return ch.isspace() or ch in _ZERO_WIDTH


def _next_word(line: str, pos: int) -> tuple[str, str]:
    """The word starting at or after `pos` (after spaces) and the character following it."""
    m = _NEXT_WORD.match(line, pos)
    return (m.group(1), m.group(2)) if m else ("", "")


def _capitalised(word: str) -> bool:
    """A plain capitalised word: `The`, `Pumps` (not `SVC`, not `RateGroup`, not `x`)."""
    return (
        len(word) >= 1
        and word[0].isupper()
        and (len(word) == 1 or word[1:].islower())
        and _PLAIN_CAPITALISED.fullmatch(word) is not None
    )


def _glued_boundary(line: str, start: int, term_start: int, term_end: int) -> bool:
    """Whether a terminator followed directly by a word (no space) ends a sentence."""
    word, after = _next_word(line, term_end)
    if not word or line[term_end : term_end + 1].isspace():
        return False
    if not _capitalised(word) or after in (".", "(", ":", "_", "<"):
        return False
    before = line[start:term_start].rsplit(None, 1)
    token = before[-1] if before else ""
    token = token.lstrip("\"'“‘([{*_`").rstrip(_CLOSERS)
    if not token or not token.isalpha():
        return False
    if line[term_start] in "?!…":
        return True
    return token.islower() or word.casefold() in _OPENERS


def _abbreviation_holds(line: str, start: int, term_start: int, term_end: int) -> bool:
    """Whether a `.` after an abbreviation or an initial does NOT end the sentence."""
    before = line[start:term_start].rsplit(None, 1)
    if not before:
        return False
    raw = before[-1]
    last = raw.lower().lstrip("([\"'“")
    initial = len(last) == 1 and raw[-1:].isupper()
    if not initial and last not in _ABBREVIATIONS:
        return False
    word, _ = _next_word(line, term_end)
    if word.casefold() in _OPENERS and _capitalised(word):
        return False
    return not (last in _FINAL_ABBREVIATIONS and _capitalised(word))


def _split_line(line: str, trailing: re.Pattern[str] | None) -> list[str]:
    out: list[str] = []
    start = 0
    for m in _TERMINATOR.finditer(line):
        if m.start() < start:
            continue
        end = m.end()
        if trailing is not None:
            t = trailing.match(line, end)
            if t is not None:
                end = t.end()
        wide = m.group()[0] in _WIDE
        spaced = end >= len(line) or _is_space(line[end])
        single_dot = m.group().rstrip(_CLOSERS) == "."
        if wide:
            pass
        elif spaced:
            if single_dot and _abbreviation_holds(line, start, m.start(), end):
                continue
        elif not _glued_boundary(line, start, m.start(), end):
            continue
        piece = line[start:end].strip(" \t" + _ZERO_WIDTH)
        if piece.strip():
            out.append(piece)
        start = end
    rest = line[start:].strip(" \t" + _ZERO_WIDTH)
    if rest.strip():
        out.append(rest)
    return out


def split_sentences(text: str, *, marker: str | None = None) -> list[str]:
    """Split `text` into non-empty sentences.

    `marker` is a regex for citation markers; markers right after a terminator are kept with
    the preceding sentence. Lines are also boundaries (lists, headings).

    >>> split_sentences("Torque to 40 Nm. [C0] Then stop! Why?", marker=r"\\[C\\d+\\]")
    ['Torque to 40 Nm. [C0]', 'Then stop!', 'Why?']
    >>> split_sentences("It never fails.The pump runs [C0].", marker=r"\\[C\\d+\\]")
    ['It never fails.', 'The pump runs [C0].']
    """
    trailing = re.compile(r"(?:\s*" + marker + r")+") if marker else None
    out: list[str] = []
    for line in text.splitlines():
        for item in _INLINE_BULLET.split(line):
            out.extend(p.strip() for p in _split_line(item, trailing))
    return [p for p in out if p]
