"""`extractive` provider: the built-in, deterministic, offline answerer (no model, no network).

It is the honest baseline every LLM is compared with. It reads the `AnswerBundle` carried in
the request, scores every evidence sentence by lexical overlap with the question, and emits
the best ones *verbatim*, each followed by its own citation marker::

    The pump runs at 40 bar. [C0] Relief valves open at 45 bar. [C1]

Rules that keep every answer valid for the post-generation validator:

* a sentence is emitted exactly as `split_sentences` cut it from one evidence text (whose
  hard-wrapped lines are first joined with one space, see `paragraphs`), and cites that
  evidence, so every number, date and code in it appears in the evidence it cites;
* sentences that hold anything anchor-like (brackets, superscript digits, `(C0)`), evidence
  metadata (`chunk_id`, `knowledge_id`, `source=`, any id of the bundle) or refusal or
  meta-commentary phrases are never candidates;
* the answer is re-split with the validator's splitter and must give back exactly the emitted
  pieces, or the exact refusal is returned instead (fail closed);
* when no sentence scores above `floor`, the policy's exact `refusal.model_text` is returned.

Scoring: question and sentence are lower-cased into word tokens; stopwords (question words
and function words) are dropped and a light plural stem is applied. The score of a sentence
is the share of distinct question terms it contains; it must be above `floor` and share at
least `min_matches` terms. The best `max_sentences` are kept
(score desc, then evidence order, then sentence order) and emitted in evidence order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from citebound.contracts.assembly import AnswerBundle
from citebound.contracts.base import sha256_hex
from citebound.contracts.enums import CitationStyle, ReasonCode
from citebound.contracts.provider import ProviderReply, ProviderRequest
from citebound.errors import ConfigError, ProviderError
from citebound.prompt.anchors import SUPERSCRIPT_DIGITS, citation_format
from citebound.text import split_sentences
from citebound.text.injection import tainted_lines
from citebound.text.markup import (
    QuestionType,
    is_table_row,
    question_type,
    render_units,
    starts_block,
)

__all__ = ["EXTRACTIVE_MODEL", "ExtractiveProvider", "citation_marker", "marker_pattern"]

EXTRACTIVE_MODEL = "extractive-v2"

_SUPERSCRIPT_DIGITS = SUPERSCRIPT_DIGITS

# Words that say what kind of question it is, not what it is about.
_STOPWORD_TEXT = """
    a about above after all also an and any are as at be been before being between both
    but by can could describe did do does during each explain for from give had has have
    he her his how i if in into is it its list many may me might more most much must my
    no not of on or our per please shall she should so some such tell than that the
    their them then there these they this those to under up was we were what when where
    which while who whom whose why will with would you your
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD = re.compile(r"\w+")
_ANCHOR_LIKE = re.compile(
    r"[\[\]" + _SUPERSCRIPT_DIGITS + r"]|\(\s*[CcSs]\s*\d+\s*\)|\b[CS]\d+\b", re.UNICODE
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


# Markdown ATX headings are structure, not statements: never quoted as an answer sentence.
_HEADING = re.compile(r"#{1,6}\s")


_META_RE = re.compile("|".join(re.escape(m) for m in _META))


@lru_cache(maxsize=4096)
def _id_pattern(folded_id: str) -> re.Pattern[str]:
    """An evidence id as a whole token (compiled once per id, not per request)."""
    return re.compile(r"(?<!\w)" + re.escape(folded_id) + r"(?!\w)")


def citation_marker(anchor: str) -> str:
    """The marker for an anchor label: `C0` -> `[C0]`, `¹` -> `[¹]`."""
    return f"[{anchor}]"


def marker_pattern(style: CitationStyle) -> str:
    """Regex matching one well-formed marker of `style` (for `split_sentences(marker=...)`)."""
    return citation_format(style).marker_pattern


def _stem(word: str) -> str:
    # Light plural folding only: "pumps" ~ "pump", "valves" ~ "valve", "batteries" ~ "battery".
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=16_384)  # evidence sentences recur across questions
def terms(text: str) -> frozenset[str]:
    """Content terms of `text`: lower-cased words minus stopwords, plural-folded."""
    return frozenset(_stem(w) for w in _WORD.findall(text.casefold()) if w not in STOPWORDS)


@dataclass(frozen=True)
class _Candidate:
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


# Sentences that announce, point elsewhere or address the reader instead of stating a fact.
_FILLER = re.compile(
    r"^(this|the following|in this|these|the next|this next)\s+(\w+\s+)?(tutorial|guide|"
    r"document|section|page|chapter|example|article|walkthrough)s?\b|\b(we will|we'll|you will|"
    r"you'll|let's|will (show|walk|describe|cover|explain|discuss|teach|introduce))\b|"
    r"^(see|refer to|for more|more information|please)\b|\b(below|above) (shows?|illustrates?|"
    r"depicts?|is|are)\b|^(the|this) (diagram|figure|image|picture|table)\b",
    re.IGNORECASE,
)
_DEFINING = re.compile(
    r"^[\w`´' -]{1,40}:\s+\S|"  # glossary style: "Queued component: has no thread ..."
    r"\b(is|are)\s+(a|an|the|one|used|responsible|made|called|defined)\b|\bmeans\b|"
    r"\brefers? to\b|\brepresents?\b|\bprovides?\b|\bdefines?\b|\bconsists? of\b",
    re.IGNORECASE,
)
_DIGIT = re.compile(r"\d")
_REASONING = re.compile(
    r"\b(because|due to|caused|causes|so that|in order to|reason|root cause|since|therefore)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    r"^(run|use|add|create|type|call|set|install|open|execute|navigate|build|define|edit|make|"
    r"copy|enter|change|remove|update|check|ensure|generate|configure|start|stop|tighten|"
    r"torque|inspect|replace|drain|fill|close|connect|disconnect|apply|clean|verify|select|"
    r"click|include|write|implement|register|invoke|send|place|mount|lock|unlock|measure)\b",
    re.IGNORECASE,
)


class ExtractiveProvider:
    """Deterministic extractive answerer; see the module docstring for its rules.

    Args:
        floor: A sentence is a candidate only when the share of distinct question terms it
            contains is strictly above this. Default 0.2.
        min_matches: ... and when it shares at least this many distinct terms with the
            question; a question of two content terms needs one. Default 2.
        max_sentences: Most sentences in one answer outside lists and procedures. Default 3.
        relative_floor: A further sentence must score at least this share of the lead
            sentence's score, and add a question term the answer lacks. Default 0.6.
        max_sentence_chars: Longer "sentences" (tables, run-on text) are never emitted.
        rank_tolerance: The lead sentence comes from the best-ranked evidence whose best
            sentence scores at least this share of the best sentence overall. Default 0.5
            (SQuAD tune split: gold answer in 79.6% of answers, against 77.0% at 0.85).
        max_steps: Most list items or procedure steps quoted after the lead. Default 8.

    Example:
        >>> p = ExtractiveProvider(floor=0.25)
        >>> (p.name, p.model)
        ('extractive', 'extractive-v2')
    """

    def __init__(
        self,
        *,
        floor: float = 0.2,
        min_matches: int = 2,
        max_sentences: int = 3,
        max_sentence_chars: int = 600,
        relative_floor: float = 0.6,
        rank_tolerance: float = 0.5,
        max_steps: int = 8,
    ) -> None:
        if not 0.0 <= floor < 1.0:
            raise ConfigError(f"floor must be in [0, 1), got {floor}", field="floor")
        if max_sentences < 1:
            raise ConfigError("max_sentences must be at least 1", field="max_sentences")
        for name, value in (("relative_floor", relative_floor), ("rank_tolerance", rank_tolerance)):
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"{name} must be in [0, 1], got {value}", field=name)
        self.floor = floor
        self.min_matches = max(1, min_matches)
        self.max_sentences = max_sentences
        self.max_sentence_chars = max_sentence_chars
        self.relative_floor = relative_floor
        self.rank_tolerance = rank_tolerance
        self.max_steps = max(0, max_steps)

    @property
    def name(self) -> str:
        return "extractive"

    @property
    def model(self) -> str:
        return EXTRACTIVE_MODEL

    def complete(self, request: ProviderRequest) -> ProviderReply:
        bundle = request.answer_bundle
        if bundle is None:
            raise ProviderError(
                "the extractive provider answers from the AnswerBundle; none was given",
                reason_code=ReasonCode.LLM_CONFIG,
                provider=self.name,
            )
        text = self.answer(
            bundle,
            request.refusal_text,
            extra_terms=request.followup_terms,
            max_tokens=request.max_output_tokens,
        )
        # The exact refusal is never "too long": only an answer can exceed the cap.
        over = text != request.refusal_text and _count_tokens(text) > request.max_output_tokens
        return ProviderReply(
            text=text,
            finish_reason="length" if over else "stop",
            response_id="extractive-" + sha256_hex(request.prompt_sha256 + "\n" + text)[:24],
            reported_model=self.model,
        )

    def _candidates(
        self, bundle: AnswerBundle, question: frozenset[str], refusal_text: str
    ) -> list[_Candidate]:
        forbidden = self._forbidden(bundle, refusal_text)
        out: list[_Candidate] = []
        for ev_index, evidence in enumerate(bundle.selected_evidence):
            # A section title kept in the text (HTML, PDF, plain text) says where, not what.
            heading = evidence.source.heading_path if evidence.source else ()
            titles = _titles(heading)
            document = evidence.source.document if evidence.source else ""
            about = question & terms(" ".join([document, *heading]))
            for unit in render_units(paragraphs(evidence.sanitized_text)):
                for pos, sentence in enumerate(split_sentences(unit.text)):
                    folded = _folded(sentence)
                    if (
                        not self._eligible(sentence, forbidden)
                        or folded in titles
                        or _SECTION_NUMBER.sub("", folded) in titles
                        or _MID_SENTENCE.match(sentence) is not None
                        or _CUT_END.search(sentence) is not None
                        or _FILLER.search(sentence) is not None  # announces, states nothing
                    ):
                        continue
                    out.append(
                        _Candidate(
                            ev_index,
                            unit.line,
                            pos,
                            sentence,
                            evidence.citation_anchor,
                            unit.kind,
                            unit.intro and pos == len(split_sentences(unit.text)) - 1,
                            pos == 0,
                            question & terms(sentence),
                            about - terms(sentence),
                        )
                    )
        return out

    def answer(
        self,
        bundle: AnswerBundle,
        refusal_text: str,
        *,
        extra_terms: str = "",
        max_tokens: int | None = None,
    ) -> str:
        """The answer text for `bundle`, or exactly `refusal_text`.

        `extra_terms` (a follow-up rewrite's carried entities) count as question terms, but a
        sentence must still share a term with the question itself ("How many litres does it
        hold?" must not quote every GB-7 line). With `max_tokens`, trailing sentences are left
        out while the answer is longer (one sentence is never cut: the caller sees the length).
        """
        own = terms(bundle.user_question)
        question = own | terms(extra_terms)
        if not question:
            return refusal_text
        # A one-letter term ("F" of "F´", "L" of "L and P") counts when matched but is never
        # required: min_matches and floor count the other terms (all, if there are no others).
        core = frozenset(t for t in question if len(t) > 1 or t.isdigit()) or question
        qtype = question_type(bundle.user_question)
        cands = self._candidates(bundle, question, refusal_text)
        weight = _weights(question, cands)
        total = sum(weight.values())
        # A two-term question ("What is a topology in F´?") needs one match, a longer one
        # `min_matches`, so one shared word ("painted") does not answer "Who painted the Mona
        # Lisa?". SQuAD tune split (gate 0.76): answerable refused 7.8% -> 4.8%, out-of-corpus
        # refused 99.0% -> 98.8% against requiring min(min_matches, terms) (docs/answers.md).
        # Carried terms (a follow-up's entities) rank sentences but never lower the bar: the
        # thresholds count the question's own terms, as for the same question asked alone, so
        # "the boiling point of the diesel fuel?" after a GB-7 question is still refused.
        bar = frozenset(t for t in own if len(t) > 1 or t.isdigit()) or own or core
        needed = min(self.min_matches, max(1, len(bar) - 1))
        scored: list[tuple[float, _Candidate]] = []
        for c in cands:
            # The section a sentence sits in says what it is about ("CmdSequencer" in the
            # heading): such terms count toward a match, at half weight, never alone.
            matched = len(c.shared & bar) + len(c.context & bar)
            if not c.shared or matched < needed or min(1.0, matched / len(bar)) <= self.floor:
                continue
            if own and not (c.shared & own):
                continue  # only carried terms matched
            coverage = (
                sum(weight[t] for t in c.shared)
                + _CONTEXT_WEIGHT * sum(weight[t] for t in c.context)
            ) / total
            scored.append((coverage + _type_bonus(qtype, c), c))
        if not scored:
            return refusal_text
        # Tie-break everywhere: score desc, then evidence order (rank), line, sentence order.
        scored.sort(key=lambda sc: (-sc[0], sc[1].ev, sc[1].line, sc[1].pos))
        best = scored[0][0]
        # The lead comes from the best-ranked evidence that answers nearly as well as the best.
        lead_score, lead = min(
            (sc for sc in scored if sc[0] >= self.rank_tolerance * best),
            key=lambda sc: (sc[1].ev, -sc[0], sc[1].line, sc[1].pos),
        )
        chosen = [lead]
        # "X downlinks information. This information includes:" + items: the intro right
        # after the lead announces the list that answers, so it and its items come along.
        intro = next(
            (
                c
                for c in cands
                if c.ev == lead.ev and c.line == lead.line and c.pos == lead.pos + 1 and c.intro
            ),
            None,
        )
        if intro is not None:
            chosen.append(intro)
            chosen.extend(self._steps(intro, cands))
        elif qtype in ("procedure", "list") or lead.intro:
            chosen.extend(self._steps(lead, cands))
        if len(chosen) == 1:
            covered = set(lead.shared)
            for score, c in scored:
                if len(chosen) >= self.max_sentences or score < self.relative_floor * lead_score:
                    break
                if c.text in {x.text for x in chosen} or not (c.shared - covered):
                    continue  # stop when answered: a sentence must add a question term
                chosen.append(c)
                covered |= c.shared
        # The lead's evidence first (its sentences in reading order), then the others by rank.
        chosen.sort(key=lambda c: (c.ev != lead.ev, c.ev, c.line, c.pos))
        pieces = [f"{c.text} {citation_marker(c.anchor)}" for c in chosen]
        pattern = marker_pattern(bundle.citation_style)
        while max_tokens is not None and len(pieces) > 1:
            if _count_tokens(_join(pieces, pattern) or "") <= max_tokens:
                break
            pieces.pop()
        return _join(pieces, pattern) or refusal_text

    def _steps(self, lead: _Candidate, cands: list[_Candidate]) -> list[_Candidate]:
        """The list items / table rows / steps that follow `lead` in its evidence, in order."""
        after = [c for c in cands if c.ev == lead.ev and (c.line, c.pos) > (lead.line, lead.pos)]
        out: list[_Candidate] = []
        expected_line = lead.line
        for c in after:
            if len(out) >= self.max_steps:
                break
            if c.line == lead.line and not lead.intro:
                continue  # rest of the lead's own line: only steps on their own lines follow
            if c.line > expected_line + 1 and out:
                break  # a gap (dropped markup or another block) ends the list
            if c.kind == "prose" and not (lead.intro or lead.kind != "prose"):
                break
            if c.kind == "prose" and (out or lead.kind != "prose") and not c.first:
                continue
            if c.kind == "prose" and lead.intro and c.line > lead.line + 1:
                break
            if not c.first:
                continue  # one sentence per step keeps a step list short
            out.append(c)
            expected_line = c.line
        return out

    def _forbidden(self, bundle: AnswerBundle, refusal_text: str) -> Callable[[str], bool]:
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

    def _eligible(self, sentence: str, forbidden: Callable[[str], bool]) -> bool:
        return (
            len(sentence) <= self.max_sentence_chars
            and _LETTER.search(sentence) is not None
            and _HEADING.match(sentence) is None
            and _ANCHOR_LIKE.search(sentence) is None
            and not forbidden(sentence.casefold())
        )


# A sentence that starts in lower case after a cut ("passed to the component, and ...") is a
# fragment; code (`x`), identifiers (cmdSeq) and numbers may start a sentence.
_MID_SENTENCE = re.compile(r"^[a-z][a-z]*[\s,;:)]")
# ... and one that ends on a function word was cut at the chunk's end ("documented in the").
_CUT_END = re.compile(r"\s(the|a|an|of|in|to|and|or|for|with|by|on|at|from|is|are|be)$", re.I)


_CONTEXT_WEIGHT = 0.5


def _is_step(qtype: QuestionType, c: _Candidate) -> bool:
    """An item, row or list intro; for procedures also a command or an imperative."""
    if c.intro or c.kind != "prose":
        return True
    return qtype == "procedure" and (_IMPERATIVE.match(c.text) is not None or "`" in c.text)


def _weights(question: frozenset[str], cands: list[_Candidate]) -> dict[str, float]:
    """Inverse document frequency of each question term over the candidate sentences.

    A term every sentence shares ("component" in component docs) says little about which
    sentence answers; a rare one ("round robin") says much. Smoothed so every weight > 0.
    """
    n = len(cands)
    df = dict.fromkeys(question, 0)
    for c in cands:
        for t in c.shared:
            df[t] += 1
    return {t: math.log(1.0 + (n + 1) / (df[t] + 0.5)) for t in sorted(question)}


def _type_bonus(qtype: QuestionType, c: _Candidate) -> float:
    """Small score shifts for what the question asks for (coverage stays the main signal)."""
    bonus = 0.0
    if c.intro and qtype not in ("procedure", "list"):
        bonus -= 0.15  # "... the following rules:" announces; an item states
    if qtype == "definition" and _DEFINING.search(c.text):
        bonus += 0.15
    elif qtype == "quantity":
        bonus += 0.15 if _DIGIT.search(c.text) else -0.1
    elif qtype == "reason" and _REASONING.search(c.text):
        bonus += 0.15
    elif qtype in ("procedure", "list") and _is_step(qtype, c):
        bonus += 0.1
    return bonus


# A line that starts a block of its own (`starts_block`: list item, heading, table row, quote,
# code fence, markup) is never the continuation of a hard-wrapped line before it.
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
    A line is joined to the one before it (with one space) when that one is long, does not
    end on `.!?:;`, is neither a heading, table row nor code, and this line does not start a
    block of its own. Lines that address a model are dropped and never join anything
    (text/injection.py).
    """
    tainted = tainted_lines(text)
    out: list[str] = []
    takes_more = False  # the last unit may continue on the next line
    fenced = False
    for i, line in enumerate(text.split("\n")):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        if i in tainted:
            takes_more = False
            continue
        if takes_more and stripped and not starts_block(stripped):
            out[-1] = f"{out[-1]} {stripped}"
        else:
            out.append(line)
        takes_more = (
            not fenced
            and len(stripped) >= _MIN_WRAPPED_CHARS
            and stripped[-1] not in ".!?:;"
            and not stripped.startswith(_CLOSED_LINE)
            and _TOC_ENTRY.match(stripped) is None
            and not is_table_row(stripped)
        )
    return out


# Section numbers ("3.2.", "1", "A.1)") that a heading path keeps and the text may not.
_SECTION_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*[.)]?|[a-z](?:\.\d+)*[.)])\s+")


def _folded(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".:")


def _titles(heading_path: Sequence[str]) -> frozenset[str]:
    folded = [_folded(h) for h in heading_path if h.strip()]
    return frozenset([*folded, *(_SECTION_NUMBER.sub("", f) for f in folded)])


def _bare_table_row(sentence: str) -> bool:
    """A table row with fewer than two filled cells (`| FPP Documentation |`) states nothing."""
    if not sentence.lstrip().startswith("|"):
        return False
    return sum(1 for cell in sentence.split("|") if cell.strip()) < 2


def _join(pieces: list[str], marker: str) -> str | None:
    """Join cited sentences so the validator's splitter gives back exactly `pieces`.

    One space reads best; a sentence that does not end on a terminator the splitter accepts
    (a heading, a list item, `etc.`) would merge with the next one, so then lines are used.
    Returns None when neither form round-trips (never expected; fail closed).
    """
    for separator in (" ", "\n"):
        text = separator.join(pieces)
        if split_sentences(text, marker=marker) == pieces:
            return text
    return None


def _count_tokens(text: str) -> int:
    """Output tokens as the default policy counts them (cl100k_base, offline)."""
    from citebound.text.tokens import get_tokenizer

    return get_tokenizer("cl100k_base").count(text)
