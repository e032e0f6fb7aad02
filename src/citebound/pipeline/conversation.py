"""Follow-up questions: the deterministic retrieval rewrite and the Recent conversation block.

A follow-up such as "How often does it send them?" cannot be retrieved on its own words. The
rewrite carries the *entities* of the last user questions (identifiers such as `TlmChan`,
`HP-220`, `ESD`, numbers with units are not entities) into the retrieval query, but only when the
question reads as a follow-up: it refers back ("it", "they", "that", "what about ...") or names
no entity of its own. A question with its own entity and no reference back is standalone, so a
topic change is never searched with the old topic's names.

Rules, in order (recorded in the trace as `followup_rewrite`):
1. no earlier turns (or N4 = 0) -> the query is unchanged (`no_history`);
2. the question refers back (a cue word) -> `followup:reference`;
   the question names no entity -> `followup:no_entity`; otherwise -> `standalone`, unchanged;
3. candidate terms: entities of the last `rewrite_turns` user questions, newest question first,
   each question's entities in order of appearance; only when those questions name no entity,
   the content words (>= 4 letters, not stopwords) of the newest one. (Carrying content words
   next to entities was tried on the sample corpus: "the seal interval for it?" after a torque
   question then retrieved and answered with torque sentences instead of refusing.)
4. a term already in the question (case-insensitive) is skipped, duplicates too; at most
   `rewrite_max_terms` terms are appended to the last sentence, before its end punctuation
   ("How many litres does it hold GB-7?"), so the query keeps its number of pieces: a
   separate "GB-7" piece would cost one more embedding and dilute the aggregation.

The answers of earlier turns never feed the rewrite: they are model output, not the user's words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import Field

from citebound.contracts.base import Contract
from citebound.contracts.conversation import MAX_HISTORY_TURNS, ConversationTurn
from citebound.policy import Policy

# Words that make a question depend on an earlier turn.
REFERENCE_CUES = frozenset(
    [
        "it",
        "its",
        "it's",
        "they",
        "them",
        "their",
        "theirs",
        "this",
        "that",
        "these",
        "those",
        "there",
        "he",
        "she",
        "him",
        "her",
        "his",
        "same",
        "former",
        "latter",
        "above",
        "previous",
        "aforementioned",
        "one",
        "ones",
    ]
)
# Openings of a question that continues the last one ("And the seal?", "What about GB7?").
CONTINUATION = re.compile(r"^\s*(and|also|what about|how about|same for|then)\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-./]*[A-Za-z0-9]|[A-Za-z0-9]")
# Common words never carried as content terms (question words, auxiliaries, fillers).
STOPWORDS = frozenset(
    [
        "about",
        "above",
        "after",
        "again",
        "against",
        "also",
        "another",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "cannot",
        "could",
        "does",
        "doing",
        "done",
        "down",
        "during",
        "each",
        "either",
        "else",
        "even",
        "every",
        "from",
        "further",
        "have",
        "having",
        "here",
        "into",
        "just",
        "many",
        "more",
        "most",
        "much",
        "must",
        "need",
        "only",
        "other",
        "over",
        "same",
        "should",
        "some",
        "such",
        "than",
        "that",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "under",
        "until",
        "upon",
        "very",
        "what",
        "when",
        "where",
        "which",
        "while",
        "will",
        "with",
        "would",
        "your",
        "yours",
        "shall",
        "might",
        "make",
        "made",
        "tell",
        "give",
        "show",
        "explain",
        "describe",
        "please",
        "know",
    ]
)


class FollowupRewrite(Contract):
    """How the retrieval query of a request was derived from the question and earlier turns."""

    original: str = Field(description="Retrieval query from the question alone.")
    query: str = Field(description="Query actually searched.")
    carried: list[str] = Field(default_factory=list, description="Terms appended, in order.")
    rule: str = Field(
        description="no_history, standalone, followup:reference, followup:no_entity or llm."
    )
    turns_used: int = Field(default=0, ge=0, description="Earlier turn pairs considered (≤ N4).")


def is_entity(word: str) -> bool:
    """An identifier-like word: mixed letters and digits (HP-220, GB7), inner capitals
    (TlmChan), or an acronym of 2+ capitals (ESD). Plain numbers are not entities."""
    letters = [c for c in word if c.isalpha()]
    if not letters:
        return False
    if any(c.isdigit() for c in word):
        return True
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return True
    return any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)


def entities(text: str) -> list[str]:
    """Entity words of `text`, in order of appearance, without duplicates."""
    out: list[str] = []
    for w in _WORD.findall(text):
        if is_entity(w) and w not in out:
            out.append(w)
    return out


def content_words(text: str) -> list[str]:
    out: list[str] = []
    for w in _WORD.findall(text):
        low = w.lower()
        if len(low) >= 4 and low.isalpha() and low not in STOPWORDS and low not in out:
            out.append(low)
    return out


def refers_back(question: str) -> bool:
    words = {w.lower().strip("'") for w in re.findall(r"[A-Za-z']+", question)}
    return bool(words & REFERENCE_CUES) or bool(CONTINUATION.match(question))


def recent_turns(history: Sequence[ConversationTurn], policy: Policy) -> list[ConversationTurn]:
    """The last N4 turn pairs (N4 = `superprompt.n4_recent_conv_max_pairs`, set by
    `[limits]`; 0 = none), never more than MAX_HISTORY_TURNS."""
    n4 = min(policy.superprompt.n4_recent_conv_max_pairs, MAX_HISTORY_TURNS)
    return list(history[-n4:]) if n4 else []


_END = re.compile(r"^(.*?)([.?!]*)\s*$", re.DOTALL)


def _append(query: str, terms: Sequence[str]) -> str:
    m = _END.match(query)
    assert m is not None  # the pattern matches any string
    return f"{m.group(1).rstrip()} {' '.join(terms)}{m.group(2)}"


def rewrite_query(
    query: str, question: str, history: Sequence[ConversationTurn], policy: Policy
) -> FollowupRewrite:
    """The retrieval query for `question` after `history` (rules in the module docstring)."""
    turns = recent_turns(history, policy)
    if not turns:
        return FollowupRewrite(original=query, query=query, rule="no_history")
    if refers_back(question):
        rule = "followup:reference"
    elif not entities(question):
        rule = "followup:no_entity"
    else:
        return FollowupRewrite(
            original=query, query=query, rule="standalone", turns_used=len(turns)
        )
    conv = policy.conversation
    window = [t.question for t in reversed(turns)][: conv.rewrite_turns]
    candidates = [e for q in window for e in entities(q)]
    if not candidates and window:
        candidates = content_words(window[0])
    present = {w.lower() for w in _WORD.findall(question)}
    carried: list[str] = []
    for term in candidates:
        if len(carried) >= conv.rewrite_max_terms:
            break
        if term.lower() not in present and term.lower() not in {c.lower() for c in carried}:
            carried.append(term)
    rewritten = _append(query, carried) if carried else query
    return FollowupRewrite(
        original=query, query=rewritten, carried=carried, rule=rule, turns_used=len(turns)
    )


# The optional LLM rewrite (`[stages] llm_rewrite`): a frozen prompt file, hash-pinned in the
# tests like every template; the reply must be one JSON object {"query": "..."}.
REWRITE_TEMPLATE = "followup_rewrite_v1.txt"
MAX_REWRITE_CHARS = 1000


def rewrite_prompt(question: str, turns: Sequence[ConversationTurn]) -> str:
    """The exact user message of the LLM rewrite (earlier questions only, oldest first)."""
    from importlib import resources

    text = (
        resources.files("citebound.prompt")
        .joinpath("templates", REWRITE_TEMPLATE)
        .read_text("utf-8")
    )
    values = {
        "earlier_questions": "\n".join(f"- {' '.join(t.question.split())}" for t in turns),
        "question": " ".join(question.split()),
    }
    # One pass: substituted text is never re-scanned, so braces in questions are data.
    return re.sub(r"\{(earlier_questions|question)\}", lambda m: values[m.group(1)], text)


def parse_rewrite(data: dict[str, object]) -> str:
    """The rewritten query of an LLM reply; ValueError when it is not one usable line."""
    query = data.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError('the reply has no non-empty "query" string')
    if "\n" in query.strip() or len(query) > MAX_REWRITE_CHARS:
        raise ValueError(f'"query" must be one line of at most {MAX_REWRITE_CHARS} characters')
    return " ".join(query.split())
