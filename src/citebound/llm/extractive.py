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

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from citebound.contracts.assembly import AnswerBundle
from citebound.contracts.base import sha256_hex
from citebound.contracts.enums import CitationStyle, ReasonCode
from citebound.contracts.provider import ProviderReply, ProviderRequest
from citebound.errors import ConfigError, ProviderError
from citebound.prompt.anchors import SUPERSCRIPT_DIGITS, citation_format
from citebound.text import split_sentences
from citebound.text.injection import tainted_lines

__all__ = ["EXTRACTIVE_MODEL", "ExtractiveProvider", "citation_marker", "marker_pattern"]

EXTRACTIVE_MODEL = "extractive-v1"

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


class ExtractiveProvider:
    """Deterministic extractive answerer; see the module docstring for its rules.

    Args:
        floor: A sentence is a candidate only when its score (share of question terms it
            contains) is strictly above this. Default 0.2.
        min_matches: ... and when it shares at least this many distinct terms with the
            question (fewer if the question has fewer terms). Default 2, so one shared word
            ("painted") does not answer "Who painted the Mona Lisa?".
        max_sentences: Most sentences in one answer. Default 3.
        relative_floor: A sentence must also score at least this share of the best sentence's
            score, so a precise answer is not padded with loosely related sentences. Default 0.6.
        max_sentence_chars: Longer "sentences" (tables, run-on text) are never emitted.

    Example:
        >>> p = ExtractiveProvider(floor=0.25)
        >>> (p.name, p.model)
        ('extractive', 'extractive-v1')
    """

    def __init__(
        self,
        *,
        floor: float = 0.2,
        min_matches: int = 2,
        max_sentences: int = 3,
        max_sentence_chars: int = 600,
        relative_floor: float = 0.6,
    ) -> None:
        if not 0.0 <= floor < 1.0:
            raise ConfigError(f"floor must be in [0, 1), got {floor}", field="floor")
        if max_sentences < 1:
            raise ConfigError("max_sentences must be at least 1", field="max_sentences")
        self.floor = floor
        self.min_matches = max(1, min_matches)
        self.max_sentences = max_sentences
        self.max_sentence_chars = max_sentence_chars
        if not 0.0 <= relative_floor <= 1.0:
            raise ConfigError(
                f"relative_floor must be in [0, 1], got {relative_floor}", field="relative_floor"
            )
        self.relative_floor = relative_floor

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
        over = _count_tokens(text) > request.max_output_tokens
        return ProviderReply(
            text=text,
            finish_reason="length" if over else "stop",
            response_id="extractive-" + sha256_hex(request.prompt_sha256 + "\n" + text)[:24],
            reported_model=self.model,
        )

    def answer(
        self,
        bundle: AnswerBundle,
        refusal_text: str,
        *,
        extra_terms: str = "",
        max_tokens: int | None = None,
    ) -> str:
        """The answer text for `bundle`, or exactly `refusal_text`.

        `extra_terms` (a follow-up rewrite's carried entities) count as question terms.
        With `max_tokens`, trailing sentences are left out while the answer is longer (a
        single sentence is never cut: it comes back whole and the caller sees the length)."""
        own = terms(bundle.user_question)
        # Carried entities help rank, but a sentence must still share a word with the
        # question itself: "How many litres does it hold?" must not quote every GB-7 line.
        question = own | terms(extra_terms)
        if not question:
            return refusal_text
        forbidden = self._forbidden(bundle, refusal_text)
        needed = min(self.min_matches, len(question))
        scored: list[tuple[float, int, int, str, str]] = []
        for ev_index, evidence in enumerate(bundle.selected_evidence):
            sentences = [
                s for para in paragraphs(evidence.sanitized_text) for s in split_sentences(para)
            ]
            # A section title kept in the text (HTML, PDF, plain text) says where, not what.
            titles = _titles(evidence.source.heading_path if evidence.source else ())
            for s_index, sentence in enumerate(sentences):
                folded = _folded(sentence)
                if (
                    not self._eligible(sentence, forbidden)
                    or folded in titles
                    or _SECTION_NUMBER.sub("", folded) in titles
                    or _bare_table_row(sentence)
                ):
                    continue
                words = terms(sentence)
                shared = len(question & words)
                score = shared / len(question)
                if score > self.floor and shared >= needed and (own & words or not own):
                    scored.append((score, ev_index, s_index, sentence, evidence.citation_anchor))
        # Tie-break: score desc, then evidence order, then sentence order (fully deterministic).
        scored.sort(key=lambda t: (-t[0], t[1], t[2]))
        chosen: list[tuple[int, int, str, str]] = []
        seen: set[str] = set()
        best = scored[0][0] if scored else 0.0
        for score, ev_index, s_index, sentence, anchor in scored:
            if score < self.relative_floor * best:
                break
            if sentence in seen:
                continue
            seen.add(sentence)
            chosen.append((ev_index, s_index, sentence, anchor))
            if len(chosen) == self.max_sentences:
                break
        if not chosen:
            return refusal_text
        chosen.sort()
        pieces = [f"{sentence} {citation_marker(anchor)}" for _, _, sentence, anchor in chosen]
        pattern = marker_pattern(bundle.citation_style)
        while max_tokens is not None and len(pieces) > 1:
            if _count_tokens(_join(pieces, pattern) or "") <= max_tokens:
                break
            pieces.pop()
        return _join(pieces, pattern) or refusal_text

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


# A line that starts a block of its own (list item, heading, table row, quote, code fence,
# markup) is never the continuation of a hard-wrapped line before it.
_BLOCK_START = re.compile(r"[-*+\u2022\u2023\u25e6\u25aa]\s|\d+[.)]\s|#{1,6}(?:\s|$)|[|><]|```|~~~")
# Lines after which nothing continues: headings, table rows, quotes, markup and fences.
_CLOSED_LINE = ("#", "|", ">", "<", "```", "~~~")
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
        if takes_more and stripped and _BLOCK_START.match(stripped) is None:
            out[-1] = f"{out[-1]} {stripped}"
        else:
            out.append(line)
        takes_more = (
            not fenced
            and len(stripped) >= _MIN_WRAPPED_CHARS
            and stripped[-1] not in ".!?:;"
            and not stripped.startswith(_CLOSED_LINE)
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
