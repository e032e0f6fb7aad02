"""Which evidence sentences may be quoted at all: units as a reader sees them, no fragments.

Content terms (`terms`: stopwords out, stemmed) come from `citebound.text.terms`, which the
retrieval gate shares.

A candidate is a sentence exactly as `split_sentences` cut it from one rendered unit of one
evidence text (hard-wrapped lines joined first, see `paragraphs`). Never a candidate: anything
anchor-like (brackets, superscript digits, `(C0)`), evidence metadata (`chunk_id`,
`knowledge_id`, `source=`, any id of the bundle), refusal or meta-commentary phrases, headings
and section titles, fragments cut mid-sentence, and filler that announces instead of stating.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from citebound.contracts.assembly import AnswerBundle
from citebound.policy import AnswererPolicy
from citebound.prompt.anchors import SUPERSCRIPT_DIGITS
from citebound.text import split_sentences
from citebound.text.injection import tainted_lines
from citebound.text.lexicon import UNFINISHED_END_WORDS
from citebound.text.markup import is_table_row, render_units, starts_block, table_header
from citebound.text.terms import terms
from citebound.validate.markers import scan_markers

from .joining import cited, marker_pattern


@dataclass(frozen=True)
class Candidate:
    ev: int  # evidence index (= rank order)
    line: int  # unit line within the evidence
    pos: int  # sentence position within the unit
    text: str
    anchor: str
    kind: str  # prose, item, row
    intro: bool
    first: bool  # the unit's first sentence
    shared: frozenset[str]  # question terms in the sentence
    context: frozenset[str]  # further question terms in its document title / heading path
    nested: bool = False  # an indented prose line: the continuation of the list item above
    overview: bool = False  # in an introduction / overview section (where definitions live)
    loose: bool = False  # a list item after one blank line (a "loose" Markdown list goes on)
    after: int = -1  # code: the unit line of the prose / item that introduces the block
    # A list item whose first sentence starts in lower case ("- a torque wrench", "opcode: a
    # numerical value ..."): quotable as an item of the list its intro announces, never as a
    # sentence that answers on its own (provider.py keeps it from leading or joining alone).
    lower: bool = False
    # An intro whose evidence goes on with list items or table rows: without quotable items it
    # only announces (provider.py). One that ends its chunk may stand over a dropped diagram
    # ("`X` dispatches commands to other components:" + mermaid), so it is not one.
    listing: bool = False
    # The first sentence under a document's title that leaves its subject to the title
    # ("# components::SeqDispatcher" / "Dispatches command sequences to available command
    # sequencers, ...", "This pattern (and component) is used to ..."): the title's question
    # terms are in `shared`, and the sentence says what the titled subject is or does.
    titled: bool = False
    # An item or row of a list whose intro negates or withholds ("It does not:" / "1. Sort the
    # data products"): alone it says the opposite of the document, so it is quoted only with
    # that intro (`following.negating_intro`; blind F´ set 7, m15): the intro's unit line.
    negated_by: int = -1
    # A table row quoted whole though the validator's splitter cuts it ("...; Jul. 2020" at
    # "Jul.", a cell of two sentences): its sentences as cut, each cited when quoted
    # (joining.cited); empty for one sentence, which `text` is.
    parts: tuple[str, ...] = ()
    # Such a row's column names (its table's header row, stemmed terms): what its cells are.
    columns: frozenset[str] = frozenset()


_ANCHOR_LIKE = re.compile(
    r"[\[\]" + SUPERSCRIPT_DIGITS + r"]|\(\s*[CcSs]\s*\d+\s*\)|\b[CS]\d+\b", re.UNICODE
)
_LETTER = re.compile(r"[^\W\d_]")
_META = (
    "chunk_id",
    "knowledge_id",
    "source=",
    "no_evidence",
    "provided evidence",
    "evidence provided",
    "evidence block",
    "as an ai",
    "language model",
    "indexed documentation",
)
_META_RE = re.compile("|".join(re.escape(m) for m in _META))
# Markdown ATX headings are structure, not statements: never quoted as an answer sentence.
_HEADING = re.compile(r"#{1,6}\s")

# Sentences that announce, point elsewhere or address the reader instead of stating a fact.
_FILLER = re.compile(
    r"^(this|the following|in this|these|the next|this next)\s+(\w+\s+)?(tutorial|guide|"
    r"document|section|page|chapter|example|article|walkthrough|procedure|manual|report|note)s?\b|"
    r"\b(we will|we'll|you will|"
    r"you'll|let's|will (show|walk|describe|cover|explain|discuss|teach|introduce))\b|"
    r"^(see|refer to|for more|more information|please)\b|\b(below|above) (shows?|illustrates?|"
    r"depicts?|is|are)\b|^(the|this) (diagram|figure|image|picture|table)\b|"
    r"^the following (\w+\s+)?(diagram|figure|image|picture|table|chart|example)s? "
    r"(shows?|illustrates?|depicts?|describes?)\b",
    re.IGNORECASE,
)
# A sentence that starts in lower case after a cut ("passed to the component, and ...") is a
# fragment; code (`x`), identifiers (cmdSeq) and numbers may start a sentence.
_MID_SENTENCE = re.compile(r"^[a-z][a-z]*[\s,;:)]")
# An intro that announces what something does not do, or must not be done ("It does not:",
# "The following are not supported:", "Never use:", "None of the following ...:", "It lacks:"),
# or what is not there yet ("Planned:"): its items state the opposite alone. Either apostrophe
# ("doesn’t"). Too wide costs little: the intro comes along ("Do not forget to:").
_NEGATING = re.compile(
    r"\b(not|never|no|none|nothing|neither|nor|no longer|cannot|(?:can|don|doesn|isn|aren|won|"
    r"shouldn|mustn|didn|wasn|weren|hasn|haven)['’]t|without|except|excluding|unsupported|"
    r"deprecated|avoid|prohibited|forbidden|lacks?|lacking|missing|removed|dropped|disabled|"
    r"unavailable|planned|future)\b",
    re.IGNORECASE,
)
# ... and one that ends on a function word was cut at the chunk's end ("documented in the").
_CUT_END = re.compile(r"\s(the|a|an|of|in|to|and|or|for|with|by|on|at|from|is|are|be)$", re.I)


# A sentence whose subject is left to the title above it: a verb opening it ("Dispatches
# command sequences ...", "Tracks versions ...": a capitalised word in -s not followed by a
# verb or auxiliary) or a pointer back ("This pattern ...", "It ...").
_IMPLICIT_SUBJECT = re.compile(
    r"^(?:[A-Z][a-z]{2,}s\s+(?!(?:is|are|was|were|has|have|had|can|could|may|might|must|shall|"
    r"should|will|would|do|does|did|and|or|of|in|for|to|with|on|at|by)\b)[a-z`]|"
    r"(?:This|These|It)\s)"
)
_TITLE_LINE = re.compile(r"^#\s+(?P<title>\S.*)$")

# A section whose title says it introduces the subject: where a document defines what it is
# about ("## 1. Introduction", "Overview", "Description", "Purpose").
_OVERVIEW = re.compile(r"\b(introduction|overview|description|purpose|summary|about)\b", re.I)


@lru_cache(maxsize=4096)
def _id_pattern(folded_id: str) -> re.Pattern[str]:
    """An evidence id as a whole token (compiled once per id, not per request)."""
    return re.compile(r"(?<!\w)" + re.escape(folded_id) + r"(?!\w)")


def candidates(
    bundle: AnswerBundle, question: frozenset[str], refusal_text: str, policy: AnswererPolicy
) -> list[Candidate]:
    """Every quotable sentence of the bundle's evidence, in evidence, line, sentence order."""
    forbidden = forbidden_text(bundle, refusal_text)
    allowed = tuple(bundle.allowed_anchors)
    marker = marker_pattern(bundle.citation_style)
    out: list[Candidate] = []
    for ev_index, evidence in enumerate(bundle.selected_evidence):
        # A section title kept in the text (HTML, PDF, plain text) says where, not what.
        heading = evidence.source.heading_path if evidence.source else ()
        titles = _titles(heading)
        document = evidence.source.document if evidence.source else ""
        about = question & terms(" ".join([document, *heading]))
        overview = bool(heading) and _OVERVIEW.search(heading[-1]) is not None
        lines = paragraphs(evidence.sanitized_text)
        in_item = False  # the last unit was a list item or its continuation
        negating = -1  # the line of the negating intro of the list the units belong to
        units = list(render_units(lines))
        # The document's opening: its title heading is the evidence's first line and the
        # first unit under it is prose (`titled` below).
        top = _TITLE_LINE.match(lines[0].strip()) if lines and len(heading) == 1 else None
        below = [u for u in units if u.line > 0][:1] if top is not None else []
        opening = below[0].line if below and below[0].kind == "prose" else None
        title_terms = question & terms(top["title"]) if top is not None else frozenset()
        for index, unit in enumerate(units):
            following = units[index + 1].kind if index + 1 < len(units) else None
            # A prose line right under a list item, no blank line between, goes on with that
            # item (Markdown's lazy continuation: "1. Poll: ..." / "In this configuration,
            # ..."); so does an indented one.
            follows = unit.line > 0 and bool(lines[unit.line - 1].strip())
            nested = unit.kind == "prose" and (
                (in_item and follows) or lines[unit.line][:1].isspace()
            )
            in_item = unit.kind == "item" or nested
            if unit.kind == "prose" and not nested:
                negating = unit.line if unit.intro and _NEGATING.search(unit.text) else -1
            elif index and not _same_list(lines, units[index - 1].line, unit.line):
                negating = -1  # a heading or another block came between: another list
            negated_by = negating if unit.kind != "prose" or nested else -1
            loose = unit.kind == "item" and unit.line > 0 and not lines[unit.line - 1].strip()
            sentences = split_sentences(without_editorial_notes(unit.text))
            parts: tuple[str, ...] = ()
            if (
                unit.kind == "row"
                and len(sentences) > 1
                and len(" ".join(sentences)) <= policy.max_sentence_chars
            ):
                # (A longer row stays cut, sentence by sentence, as any long text.)
                sentences, parts = _whole_row(sentences, evidence.citation_anchor, marker)
            # A list item is about what its first sentence names ("`-j JOBS`: set the number
            # of parallel jobs while compiling. Defaults to 1, ..."): its later sentences take
            # those terms as context, as a section's sentences take its heading's.
            entry = question & terms(sentences[0]) if unit.kind == "item" and sentences else None
            # A list item's first sentence is not cut from a sentence before it: "- a torque
            # wrench" starts in lower case as an item, not as a fragment.
            item_head = unit.kind == "item"
            for pos, sentence in enumerate(sentences):
                folded = _folded(sentence)
                titled = (
                    unit.line == opening
                    and pos == 0
                    and bool(title_terms)
                    and _IMPLICIT_SUBJECT.match(sentence) is not None
                )
                own = question & terms(sentence)
                if (
                    not eligible(sentence, forbidden, policy.max_sentence_chars)
                    # What the validator would read as a (malformed) citation, e.g. the set
                    # "{0,1}": quoting it would fail the answer, never a candidate.
                    or marker_like(sentence, bundle, allowed)
                    or folded in titles
                    or _SECTION_NUMBER.sub("", folded) in titles
                    or (_MID_SENTENCE.match(sentence) is not None and not (item_head and not pos))
                    or _CUT_END.search(sentence) is not None
                    or _FILLER.search(sentence) is not None  # announces, states nothing
                ):
                    continue
                out.append(
                    Candidate(
                        ev_index,
                        unit.line,
                        pos,
                        sentence,
                        evidence.citation_anchor,
                        unit.kind,
                        unit.intro and pos == len(sentences) - 1,
                        pos == 0,
                        own | title_terms if titled else own,
                        (about | (entry if entry is not None and pos else frozenset()))
                        - terms(sentence)
                        - (title_terms if titled else frozenset()),
                        nested,
                        overview or titled,
                        loose,
                        lower=_MID_SENTENCE.match(sentence) is not None,
                        listing=following in ("item", "row"),
                        titled=titled,
                        negated_by=negated_by,
                        parts=parts,
                        columns=terms(table_header(lines, unit.line)) if parts else frozenset(),
                    )
                )
    return out


def _whole_row(sentences: list[str], anchor: str, marker: str) -> tuple[list[str], tuple[str, ...]]:
    """A row the splitter cuts, as one quote: `([row], its sentences)`, or the sentences
    unchanged when the cited pieces would not come back whole (fail closed: then each
    sentence is a candidate of its own, as any cut text).

    A row is a record ("ISS-RapidScat: Instrument; NASA's JPL; Sep. 21, 2014; ..."): its name
    says what its cells are about, and a cut at a month abbreviation ("Sep.") or between a
    cell's sentences leaves halves that answer nothing or drop the name (blind F´ set 8: p01,
    p07, q04). The validator's splitter is frozen, so the row is quoted with a citation on
    each piece it cuts ("...; Sep. [C0] 21, 2014 [C0]").
    """
    parts = tuple(sentences)
    pieces = list(cited(parts, anchor))
    if split_sentences(" ".join(pieces), marker=marker) != pieces:
        return sentences, ()
    return [" ".join(parts)], parts


# Wikipedia-style editorial notes and reference numbers glued to the text ("... Energy Act of
# 1978.[citation needed] On November 28, 1995, ...", "... in 1685.[12]") are markup, not
# evidence. Left in, the note hides the sentence boundary (no space after the stop) and its
# brackets make both sentences look like citations: neither could ever be quoted. A note is
# one of the known editorial phrases right after a word or stop, or a run of reference numbers
# / letters right after a sentence stop or closing quote; either must be followed by a space,
# the end of the text or a stop, as a note is. Everything else is text and kept: code such as
# `buf[0]`, `f(x)[0]` (a closing parenthesis is not a stop), `cfg[update_rate]` or
# `table[whole]` (the phrase must end at a word boundary, and only a short space- or colon-led
# tail such as "[dubious – discuss]" may follow it).
_NOTE_PHRASES = (
    r"citation needed|clarification needed|better source needed|"
    r"dubious|disputed|discuss|when|who|which|by whom|according to whom|where|why|"
    r"not in citation given|verification needed|failed verification|original research|"
    r"page needed|year needed|needs update|update|full citation needed|"
    r"non-primary source needed|specify|vague|examples needed|citation not found"
)
# Reference numbers have at most 3 digits: a page's notes rarely pass 999, and a longer
# bracketed number ("[2020]", "[12345]") is more likely a year or a value, i.e. text.
_REFERENCE = r"\[(?:\d{1,3}|[a-z]|note \d{1,3}|nb \d{1,3})\]"
_NOTE_END = r"(?=\s|$|[.,;:!?])"
_EDITORIAL_NOTE = re.compile(
    rf"(?<=[^\s\[])\[(?:{_NOTE_PHRASES})\b\??(?:[\s:][^\[\]]{{0,40}})?\]{_NOTE_END}"
    rf"|(?<=[.,;:!?\"'’”])(?:{_REFERENCE})+{_NOTE_END}",
    re.IGNORECASE,
)


def without_editorial_notes(text: str) -> str:
    """`text` without glued editorial notes and reference marks (see `_EDITORIAL_NOTE`).

    Only removes characters, so every word of a sentence cut from the result is in the
    evidence, in the same order, as the validator reads it.
    """
    return _EDITORIAL_NOTE.sub("", text)


def forbidden_text(bundle: AnswerBundle, refusal_text: str) -> Callable[[str], bool]:
    """Whether a case-folded sentence holds meta phrases, evidence ids or the refusal."""
    ids = {e.chunk_id for e in bundle.selected_evidence}
    ids |= {e.knowledge_id for e in bundle.selected_evidence}
    folded_ids = sorted(i.casefold() for i in ids if i)
    refusal = refusal_text.casefold()

    def hit(folded: str) -> bool:
        return (
            _META_RE.search(folded) is not None
            or refusal in folded
            or any(i in folded and _id_pattern(i).search(folded) for i in folded_ids)
        )

    return hit


def marker_like(sentence: str, bundle: AnswerBundle, allowed: tuple[str, ...]) -> bool:
    scan = scan_markers(sentence, bundle.citation_style, allowed)
    return bool(scan.labels or scan.malformed)


def _same_list(lines: list[str], before: int, line: int) -> bool:
    """Whether nothing but blank lines and table header / separator rows lies between two
    units: a Markdown list or table goes on over one blank line ("loose" lists), not over a
    heading, a fence or a second blank line."""
    between = lines[before + 1 : line]
    blanks = sum(1 for x in between if not x.strip())
    return blanks <= 1 and all(not x.strip() or "|" in x for x in between)


def eligible(sentence: str, forbidden: Callable[[str], bool], max_chars: int) -> bool:
    return (
        len(sentence) <= max_chars
        and _LETTER.search(sentence) is not None
        and _HEADING.match(sentence) is None
        and _ANCHOR_LIKE.search(sentence) is None
        and not forbidden(sentence.casefold())
    )


# Lines after which nothing continues: headings, table rows, quotes, markup, fences and
# Doxygen directives; and a table-of-contents entry (a list item that is only a link).
_CLOSED_LINE = ("#", "|", ">", "<", "```", "~~~", "\\", "@")
_TOC_ENTRY = re.compile(r"^(?:[-*+]|\d+[.)])\s+\[[^\]]*\]\([^)]*\)$")
# Wrapped lines are long; a short line without end punctuation is a title or a label.
_MIN_WRAPPED_CHARS = 40


def paragraphs(text: str) -> list[str]:
    """`text` as the units sentences are cut from: lines, with hard-wrapped lines joined.

    Documentation is often wrapped at 80-120 columns, so one sentence spans lines; cutting
    per line quoted fragments such as "rate group driver these components are attached to."
    A line is joined to the one before it (with one space) when the unit so far is long or
    already joined, or ends on a comma or a word no sentence ends with (`_GOES_ON`: "in each",
    "like"), does not end on `.!?:;`, is neither a heading, table row nor code, and this line
    does not start a block of its own (`starts_block`: list item, heading, table row, quote,
    fence, markup); a unit that ends inside an inline code span always goes on, and a line led
    by a link always joins a unit that ends on no stop.
    Lines that address a model are dropped and never join anything (text/injection.py).
    """
    tainted = tainted_lines(text)
    out: list[str] = []
    takes_more = False  # the last unit may continue on the next line
    open_end = False  # ... when that line is led by a link: it ends on no stop
    fenced = False
    for i, line in enumerate(text.split("\n")):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        if i in tainted:
            takes_more = open_end = False
            continue
        joined = (
            (takes_more or (open_end and _LINK_LED.match(stripped) is not None))
            and bool(stripped)
            and not starts_block(stripped)
        )
        if joined:
            out[-1] = f"{out[-1]} {stripped}"
        else:
            out.append(line)
        unit = out[-1].strip()
        open_end = (
            not fenced
            and bool(unit)
            and not unit.startswith(_CLOSED_LINE)
            and _TOC_ENTRY.match(unit) is None
            and not is_table_row(unit)
        )
        takes_more = open_end and (
            _open_code_span(unit)
            or (
                unit[-1] not in ".!?:;"
                and (joined or len(unit) >= _MIN_WRAPPED_CHARS or _GOES_ON.search(unit) is not None)
            )
        )
        open_end = open_end and unit[-1] not in ".!?:;"
    return out


# A line led by a link ("[the PID guide](pid.md) for the values.") goes on with the sentence
# of the line before it, however short that one is ("See").
_LINK_LED = re.compile(r"\[[^\]]+\]\(")


# A line that ends on a word a sentence cannot end with ("... one per line in each", "written
# as a comment, like") or on a comma goes on, however short: a label or title never does.
_GOES_ON = re.compile(r"(?:,|\s(?:" + "|".join(UNFINISHED_END_WORDS) + r"))$", re.IGNORECASE)


def _open_code_span(unit: str) -> bool:
    """Whether `unit` ends inside an inline code span (an odd number of single backticks):
    Markdown runs a code span over a line break, so the next line is the same sentence."""
    return unit.count("`") % 2 == 1 and "```" not in unit


# Section numbers ("3.2.", "1", "A.1)") that a heading path keeps and the text may not.
_SECTION_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*[.)]?|[a-z](?:\.\d+)*[.)])\s+")


def _folded(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".:")


def _titles(heading_path: Sequence[str]) -> frozenset[str]:
    folded = [_folded(h) for h in heading_path if h.strip()]
    return frozenset([*folded, *(_SECTION_NUMBER.sub("", f) for f in folded)])
