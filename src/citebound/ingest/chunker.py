"""Heading-aware, token-sized chunker.

Rules, in order:

1. A heading, a change of heading path (e.g. a new PDF outline entry) or a new PDF page starts
   a new chunk, so every PDF chunk cites exactly one page.
   A section holding only headings is merged into the next one, so `# A` directly followed by
   `## B` gives one chunk with heading path (A, B).
2. A section that fits `chunk_tokens` is one chunk. A longer one is cut into sentences
   (hard-wrapped lines are joined; list items, rows and other block starts are boundaries) and
   packed into chunks of about equal size, never above chunk_tokens.
   A sentence longer than chunk_tokens is cut between words.
3. Table rows are atomic: never split, even when one alone exceeds chunk_tokens (that chunk
   is then larger than asked, and a short lead-in of at most a quarter chunk stays with it).
   A code block that fits chunk_tokens stays whole; a longer one is cut at blank lines and
   where a comment ends (`_code_pieces`: the next entry of a config reference starts), a piece
   still longer between lines. Its first piece leaves a quarter chunk for a lead-in ("Usage:");
   a chunk starting with a later piece adds the block's first line (`[printer]`) to its
   heading path, unless the last heading already says it.
4. A block is read with the line that introduces it: a code block with the prose sentence
   right before it, and a list or table with a sentence ending in ':' ("... the following
   properties:"). When a cut would fall inside such an introduced run, the chunk ends before
   the introducing sentence instead, so the next chunk starts with the intro and its items
   (`_joins`); only when the whole run fits in chunk_tokens (a longer list is cut anyway) and
   the chunk left behind holds more than headings and the previous chunk's overlap.
5. Consecutive chunks of one section share up to `overlap_tokens` of whole sentences/rows.
6. Text blocks that are only metadata (Doxygen `\\page`, HTML comments, a table of contents)
   are dropped before sectioning (`citebound.text.markup.is_metadata`).
7. Every chunk fits the embedder's window (`citebound.text.window`): its index text (title,
   heading path, text) counted with the embedder's own tokenizer; a group past it is halved
   between units, a single unit between words (`_fit`). Checked after packing, so it holds for
   long table rows and any chunk_tokens too.

Every chunk satisfies ``chunk.text == document.text[chunk.char_start:chunk.char_end]``.

chunk_id (a contract): ``sha256(f"{knowledge_id}\\x00{occurrence}\\x00{text}")[:20]`` where
`occurrence` counts earlier chunks of the same document with identical text (0 for almost all).
Positions are left out on purpose: editing one section keeps the ids (and so the cached
vectors) of chunks elsewhere in the document.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from dataclasses import dataclass

from citebound.contracts.base import sha256_hex
from citebound.contracts.documents import Chunk
from citebound.contracts.ingest import Block, ChunkerConfig, ParsedDocument
from citebound.text import Tokenizer, get_tokenizer, split_sentences
from citebound.text.markup import is_metadata, is_table_row, starts_block
from citebound.text.window import WINDOW_TOKENS, index_head, window_tokens

_WORD = re.compile(r"\S+\s*")
_LIST_ITEM = re.compile(r"\s*(?:[-*+\u2013\u2022]\s|\d{1,3}\\?[.)](?:\s|$))")


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    tokens: int
    page: int | None
    path: tuple[str, ...]
    atomic: bool = False
    kind: str = "text"
    joins: bool = False  # read with the unit before it (rule 4): no cut between them
    context: str = ""  # a piece of a cut code block: the block's first line (rule 3)
    lead: bool = False  # ... the piece that holds that line


def chunk_id(knowledge_id: str, occurrence: int, text: str) -> str:
    """The chunk_id formula (see the module docstring)."""
    return sha256_hex(f"{knowledge_id}\x00{occurrence}\x00{text}")[:20]


def _sections(blocks: tuple[Block, ...]) -> list[list[Block]]:
    sections: list[list[Block]] = []
    current: list[Block] = []
    for blk in blocks:
        starts_new = blk.kind == "heading" or (
            current
            and (blk.heading_path != current[-1].heading_path or blk.page != current[-1].page)
        )
        if current and starts_new and any(b.kind != "heading" for b in current):
            sections.append(current)
            current = []
        current.append(blk)
    if current:
        sections.append(current)
    return sections


def _split_long(text: str, unit: _Unit, limit: int, tok: Tokenizer) -> list[_Unit]:
    """Cut an over-long sentence between words (or, for a giant word, between characters)."""
    out: list[_Unit] = []
    start = unit.start
    count = 0
    pos = unit.start
    for m in _WORD.finditer(text, unit.start, unit.end):
        n = tok.count(m.group())
        if count and count + n > limit:
            out.append(_Unit(start, pos, count, unit.page, unit.path))
            start, count = m.start(), 0
        if n > limit:  # one "word" beyond the limit: cut by characters
            step = max(1, limit * 2)
            for s in range(m.start(), m.end(), step):
                e = min(m.end(), s + step)
                out.append(_Unit(s, e, tok.count(text[s:e]), unit.page, unit.path))
            start, count, pos = m.end(), 0, m.end()
            continue
        count += n
        pos = m.end()
    if pos > start:
        out.append(_Unit(start, pos, count, unit.page, unit.path))
    return [_trim(text, u, tok) for u in out if text[u.start : u.end].strip()]


def _trim(text: str, u: _Unit, tok: Tokenizer) -> _Unit:
    s, e = u.start, u.end
    while e > s and text[e - 1].isspace():
        e -= 1
    return u if e == u.end else _Unit(s, e, tok.count(text[s:e]), u.page, u.path)


def unwrap(span: str) -> str:
    """`span` with each line break inside wrapped prose replaced by a space (same length).

    A line break is kept where the next line starts a block of its own (list item, table
    row, heading, quote, fence), so list items and rows stay units; everywhere else it is
    the author's hard wrap and a sentence runs on. Keeping the length keeps offsets exact.
    """
    lines = span.split("\n")
    out = [lines[0]]
    for line in lines[1:]:
        out.append(("\n" if starts_block(line) or not out[-1].strip() else " ") + line)
    return "".join(out)


def _sentences(text: str, blk: Block, tok: Tokenizer, limit: int) -> list[_Unit]:
    """Sentence units of a text block with their offsets (found in order, so exact).

    Hard-wrapped lines are joined first (`unwrap`), so a chunk never starts in the middle of
    a sentence that merely continued on the next line.
    """
    out: list[_Unit] = []
    cursor = 0
    span = unwrap(text[blk.start : blk.end])
    for sentence in split_sentences(span):
        rel = span.find(sentence, cursor)
        if rel < 0:  # cannot happen for stripped substrings; keep the block whole if it does
            return [_Unit(blk.start, blk.end, tok.count(span), blk.page, blk.heading_path)]
        at = blk.start + rel
        end = at + len(sentence)
        sentence = text[at:end]
        unit = _Unit(at, end, tok.count(sentence), blk.page, blk.heading_path)
        out.extend(_split_long(text, unit, limit, tok) if unit.tokens > limit else [unit])
        cursor = rel + len(sentence)
    return out


def _units(text: str, section: list[Block], tok: Tokenizer, limit: int) -> list[_Unit]:
    whole = [
        _Unit(
            b.start,
            b.end,
            tok.count(text[b.start : b.end]),
            b.page,
            b.heading_path,
            b.kind in ("code", "table_row"),
            b.kind,
        )
        for b in section
    ]
    if sum(u.tokens + 1 for u in whole) <= limit:
        return whole
    out: list[_Unit] = []
    for blk, unit in zip(section, whole, strict=True):
        if blk.kind == "text" and unit.tokens > 0:
            out.extend(_sentences(text, blk, tok, limit))
        elif blk.kind == "code" and unit.tokens > limit:
            out.extend(_code_pieces(text, blk, tok, limit))
        else:
            out.append(unit)  # headings, code that fits and table rows stay whole
    return _joins(text, out)


# A comment line of a code block: `#`, `//`, `;` or `--` then a space (`#   The highest speed`;
# not `#max_z_accel: 100`, an option commented out, which starts the next entry).
_CODE_COMMENT = re.compile(r"\s*(?:#|//|;|--)(?:\s|$)")
_FENCE_LINE = re.compile(r"\s*(?:`{3,}|~{3,})")
_CONTEXT_CHARS = 80
_LETTER = re.compile(r"[^\W\d_]")


def _code_pieces(text: str, blk: Block, tok: Tokenizer, limit: int) -> list[_Unit]:
    """A code block longer than `limit`, cut into pieces at blank lines and where a comment
    ends (the next entry of a config reference starts), each at most `limit`; a piece still
    longer is cut between lines, a line longer between words (rule 3).

    Every piece carries the block's first line (`[printer]`, `def run(args):`) as `context`:
    the chunk of a later piece names it after its heading path.
    """
    lines: list[tuple[int, int]] = []  # (start, end) of each line, end without its "\n"
    at = blk.start
    for line in text[blk.start : blk.end].split("\n"):
        lines.append((at, at + len(line)))
        at += len(line) + 1
    body = [text[a:b] for a, b in lines]
    # Its first line that says something: not the fence, not a banner ("####", "/*****").
    said = (x.strip() for x in body if _LETTER.search(x) and _FENCE_LINE.match(x) is None)
    first = next(said, "")[:_CONTEXT_CHARS]
    runs: list[list[tuple[int, int]]] = [[]]
    for i, (span, line) in enumerate(zip(lines, body, strict=True)):
        prev = body[i - 1] if i else ""
        cut = bool(runs[-1]) and (
            (not prev.strip() and bool(line.strip()))
            or (
                _CODE_COMMENT.match(prev) is not None
                and bool(line.strip())
                and _CODE_COMMENT.match(line) is None
            )
        )
        if cut and _FENCE_LINE.match(line) is None:  # a closing fence stays with its piece
            runs.append([])
        runs[-1].append(span)
    pieces: list[_Unit] = []
    for run in runs:
        start, end = run[0][0], run[-1][1]
        start += len(text[start:end]) - len(text[start:end].lstrip())  # a chunk starts on text
        whole = _Unit(start, end, tok.count(text[start:end]), blk.page, blk.heading_path)
        unit = _trim(text, whole, tok)
        if not text[unit.start : unit.end].strip():
            continue
        # The first piece leaves room for a short lead-in ("Usage:") read with the block.
        budget = limit if pieces else limit - limit // 4
        fits = unit.tokens <= budget
        parts = [unit] if fits else _line_pieces(text, run, unit, tok, limit, budget)
        pieces.extend(parts)
    return [
        dataclasses.replace(p, kind="code", context=first, lead=i == 0)
        for i, p in enumerate(pieces)
    ]


def _line_pieces(
    text: str, run: list[tuple[int, int]], unit: _Unit, tok: Tokenizer, limit: int, first: int
) -> list[_Unit]:
    """A run of code lines over `limit` (`first` for its first piece), cut between lines (a
    longer line between words)."""
    out: list[_Unit] = []
    start, count, prev_end = -1, 0, -1
    for a, b in run:
        n = tok.count(text[a:b]) + 1
        if start >= 0 and count + n > (limit if out else first):
            out.append(_Unit(start, prev_end, count, unit.page, unit.path))
            start, count = -1, 0
        if n > limit:
            whole = _Unit(a, b, n, unit.page, unit.path)
            out.extend(_split_long(text, whole, limit, tok))
            continue
        if start < 0:
            start = a + len(text[a:b]) - len(text[a:b].lstrip())
        count += n
        prev_end = b
    if start >= 0:
        out.append(_Unit(start, prev_end, count, unit.page, unit.path))
    return [_trim(text, u, tok) for u in out if text[u.start : u.end].strip()]


def _joins(text: str, units: list[_Unit]) -> list[_Unit]:
    """Mark each unit that is read with the one before it (rule 4).

    A code block joins the text right before it ("run the following command"); a list item
    or table row joins a prose sentence ending in ':', then each next item (and the next
    sentence of an item, on the same line) joins the run, so a whole introduced list is one
    run. Quotes, headings and unintroduced lists join nothing.
    """
    out = units[:1]
    listing = False  # the previous unit is in an introduced list or table
    for prev, u in itertools.pairwise(units):
        before = text[prev.start : prev.end]
        item = u.kind == "table_row" or (u.kind == "text" and _is_item(text[u.start : u.end]))
        if u.kind == "code":
            joins, listing = prev.kind == "text", False
        elif item:
            intro = prev.kind == "text" and not _is_item(before) and before.rstrip().endswith(":")
            joins = listing = listing or intro
        else:
            joins = listing = listing and u.kind == "text" and "\n" not in text[prev.end : u.start]
        out.append(dataclasses.replace(u, joins=joins))
    return out


def _is_item(span: str) -> bool:
    return _LIST_ITEM.match(span) is not None or is_table_row(span.split("\n", 1)[0])


def _pack(units: list[_Unit], limit: int, overlap: int) -> list[list[_Unit]]:
    """Greedy packing toward an equal share of the section, capped at `limit`.

    Each unit costs its tokens + 1 for the whitespace that joins it to the previous one, so
    packed sums stay close to the exact count of the joined text.
    """
    total = sum(u.tokens + 1 for u in units)
    if total <= limit:
        return [units]
    k = max(1, math.ceil((total - overlap) / max(1, limit - overlap)))
    target = min(limit, math.ceil((total + (k - 1) * overlap) / k))
    groups: list[list[_Unit]] = []
    current: list[_Unit] = []
    size = 0
    repeated = 0  # units at the start of `current` that the previous chunk already holds
    whole_run = _run_costs(units)
    for u, run_cost in zip(units, whole_run, strict=True):
        cost = u.tokens + 1
        full = size + cost > limit or size + cost / 2 > target
        if full and u.atomic and u.tokens >= limit and size <= limit // 4:
            full = False  # keep a short lead-in ("Usage:") with the oversized block it introduces
        if current and full:
            # Move only a run that then fits whole: a list longer than a chunk is cut anyway.
            run = _run_start(current) if u.joins and run_cost <= limit else len(current)
            kept = current[run:]  # the intro and its items so far move to the next chunk
            kept_size = sum(k.tokens + 1 for k in kept)
            left = current[:run]
            fresh = left[repeated:]  # what `left` adds beyond the previous chunk's overlap
            if all(k.kind == "heading" for k in fresh) or kept_size + cost > limit:
                left, kept, kept_size = current, [], 0  # cannot move: cut here as before
            groups.append(left)
            tail: list[_Unit] = []
            tail_size = 0
            for prev in reversed(left[1:]):  # never repeat a whole chunk
                if tail_size + prev.tokens + 1 > overlap:
                    break
                tail.insert(0, prev)
                tail_size += prev.tokens + 1
            while tail and tail_size + kept_size + cost > limit:
                tail_size -= tail.pop(0).tokens + 1
            current, size = tail + kept, tail_size + kept_size
            repeated = len(tail)
        current.append(u)
        size += cost
    if current:
        groups.append(current)
    return groups


def _run_costs(units: list[_Unit]) -> list[int]:
    """Per unit: the cost of the whole run it belongs to (intro and every joined unit)."""
    costs: list[int] = []
    start = 0
    for i in range(1, len(units) + 1):
        if i == len(units) or not units[i].joins:  # the run units[start:i] ends here
            total = sum(v.tokens + 1 for v in units[start:i])
            costs.extend([total] * (i - start))
            start = i
    return costs


def _run_start(current: list[_Unit]) -> int:
    """Index in `current` of the unit that introduces the run its last units belong to."""
    i = len(current)
    while i > 0 and current[i - 1].joins:
        i -= 1
    return max(0, i - 1)


def chunk_document(parsed: ParsedDocument, config: ChunkerConfig | None = None) -> list[Chunk]:
    """Chunk one parsed document. Deterministic: same input and config, same chunks and ids.

    Example:
        >>> chunks = chunk_document(parsed, ChunkerConfig(chunk_tokens=200, overlap_tokens=30))
    """
    config = config or ChunkerConfig()
    tok = get_tokenizer(config.tokenizer)
    doc = parsed.document
    text = doc.text
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    # Doxygen directives, HTML comments and tables of contents are metadata, not evidence: a
    # block of nothing else never starts, ends or makes a chunk.
    blocks = tuple(
        b for b in parsed.blocks if b.kind != "text" or not is_metadata(text[b.start : b.end])
    )
    for section in _sections(blocks):
        units = _units(text, section, tok, config.chunk_tokens)
        groups = _pack(units, config.chunk_tokens, config.overlap_tokens)
        for group in (g for packed in groups for g in _fit(text, doc.title, packed, tok)):
            start, end = group[0].start, group[-1].end
            body = text[start:end]
            pages = [u.page for u in group if u.page is not None]
            occurrence = seen.get(body, 0)
            seen[body] = occurrence + 1
            chunks.append(
                Chunk(
                    chunk_id=chunk_id(doc.knowledge_id, occurrence, body),
                    knowledge_id=doc.knowledge_id,
                    collection=doc.collection,
                    text=body,
                    chunk_index=len(chunks),
                    heading_path=_heading_path(group),
                    page=min(pages) if pages else None,
                    page_end=max(pages) if pages else None,
                    char_start=start,
                    char_end=end,
                    token_count=tok.count(body),
                    title=doc.title,
                    source_path=doc.source_path,
                    knowledge_type=doc.knowledge_type,
                    equipment_id=doc.equipment_id,
                    event_date=doc.event_date,
                    ocr=bool(pages) and min(pages) in parsed.ocr_pages,
                )
            )
    return chunks


def _heading_path(group: list[_Unit]) -> tuple[str, ...]:
    """The chunk's heading path; a chunk cut from a code block without its first line adds
    that line (`[printer]`) after the headings, unless the last heading already says it."""
    path = group[-1].path
    piece = next((u for u in group if u.context), None)
    if piece is None or piece.lead or (path and path[-1] == piece.context):
        return path
    return (*path, piece.context)


def _fit(text: str, title: str, group: list[_Unit], tok: Tokenizer) -> list[list[_Unit]]:
    """`group` as chunks the embedder reads whole: at most `WINDOW_TOKENS` of its own tokens
    in `index_text` (title and heading path, then the text). A group past it keeps its longest
    head of units that fits (an intro with as many of its items as fit) and the rest is fitted
    the same way; a single unit is cut between words until each part fits (one word that still
    does not fit stays: nothing smaller can be cut)."""
    if _fits(text, title, group):
        return [group]
    if len(group) > 1:
        fitting = [k for k in range(len(group) - 1, 1, -1) if _fits(text, title, group[:k])]
        # Rather not right after a table's header row or inside an introduced run (rule 4).
        cut = next((k for k in fitting if _clean_cut(text, group, k)), fitting[0] if fitting else 1)
        return _fit(text, title, group[:cut], tok) + _fit(text, title, group[cut:], tok)
    (unit,) = group
    n = _window(text, title, group)
    limit = max(1, min(unit.tokens - 1, unit.tokens * WINDOW_TOKENS // n))
    parts = _split_long(text, unit, limit, tok)
    if len(parts) < 2:
        return [group]
    parts = [
        dataclasses.replace(
            p, kind=unit.kind, context=unit.context, lead=unit.lead and i == 0, atomic=unit.atomic
        )
        for i, p in enumerate(parts)
    ]
    return [g for p in parts for g in _fit(text, title, [p], tok)]


def _clean_cut(text: str, group: list[_Unit], k: int) -> bool:
    """Whether a cut before `group[k]` leaves a table header with its rows and a run whole."""
    before = group[k - 1]
    header = before.kind == "table_row" and "\n" in text[before.start : before.end].strip()
    return not header and not group[k].joins


def _window(text: str, title: str, group: list[_Unit]) -> int:
    """The embedder's tokens in the index text of `group`'s chunk (0: cannot count)."""
    head = index_head(title, _heading_path(group))
    body = text[group[0].start : group[-1].end]
    return window_tokens((head + "\n" + body) if head else body) or 0


def _fits(text: str, title: str, group: list[_Unit]) -> bool:
    return _window(text, title, group) <= WINDOW_TOKENS
