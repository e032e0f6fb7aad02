"""Follow-up questions: the deterministic retrieval rewrite and the Recent conversation block.

A follow-up such as "How often does it send them?" cannot be retrieved on its own words. The
rewrite carries what "it" and "them" stand for into the retrieval query: the *entities*
(identifiers such as `TlmChan`, `HP-220`, `ESD`; numbers with units are not entities) of the last
questions and of the last answer, and for a plural reference ("they", "them", ...) the noun phrase
of the last answer it most likely names ("telemetry values"). It does so only when the question
reads as a follow-up; a question with its own entity and no reference back is standalone, so a
topic change is never searched with the old topic's names.

Rules, in order (recorded in the trace as `followup_rewrite`):
1. no earlier turns (or N4 = 0) -> the query is unchanged (`no_history`);
2. the question opens with a continuation ("what about", "and", ...) and names an entity of its
   own -> `followup:substitution` ("What about the VT-40?" after a GB-7 question): the old
   question's content words are carried, its entities never (the new entity replaces them);
   the question refers back (a cue word) -> `followup:reference`;
   the question names no entity and is short (at most `rewrite_no_entity_max_words` content
   words: "What is the torque?") -> `followup:no_entity`; otherwise -> `standalone`, unchanged
   (a long question without an entity is a new topic, not an ellipsis);
3. candidate terms, in this order:
   a. the entities of the last `rewrite_turns` user questions, newest question first, each
      question's entities in order of appearance;
   b. only for `followup:reference` (an explicit reference back): from the last
      `rewrite_answer_turns` answers, newest first (refusals and empty answers skipped,
      citation markers removed), for a plural cue the first plural noun phrase of the answer
      (at most `rewrite_phrase_words` words), then the answer's entities; at most
      `rewrite_answer_max_terms` terms come from answers;
   c. only when (a) and (b) found no entity, the content words (>= 4 letters, not stopwords)
      of the newest question ("cooler core"), after a plural phrase of (b). (Carrying
      content words next to the questions' entities was tried on the sample corpus: "the seal
      interval for it?" after a torque question then retrieved and answered with torque
      sentences instead of refusing.)
4. a term already in the question (case-insensitive) is skipped, duplicates too; at most
   `rewrite_max_terms` terms are appended to the last sentence, before its end punctuation
   ("How many litres does it hold GB-7?"), so the query keeps its number of pieces: a
   separate "GB-7" piece would cost one more embedding and dilute the aggregation.

Earlier answers are model output: they only ever add retrieval terms (the gate, the evidence
and the validator decide as for any question), and the extractive answerer reads carried terms
as ranking hints, never as words a sentence may match instead of the question's own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib import resources

from citebound.contracts.conversation import MAX_HISTORY_TURNS, ConversationTurn

# The contract lives with the other conversation contracts (the audit record keeps it).
from citebound.contracts.conversation import FollowupRewrite as FollowupRewrite
from citebound.policy import Policy
from citebound.prompt.anchors import citation_format
from citebound.text.lexicon import FOLLOWUP_STOPWORDS


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that make a question depend on an earlier turn.
REFERENCE_CUES = _words(
    "it its it's they them their theirs this that these those there he she him her his same "
    "former latter above previous aforementioned one ones"
)
# Cues that stand for a plural noun phrase ("How often does it send them?").
PLURAL_CUES = _words("they them their theirs these those")
# Openings of a question that continues the last one ("And the seal?", "What about GB7?").
CONTINUATION = re.compile(r"^\s*(and|also|what about|how about|same for|then)\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-./]*[A-Za-z0-9]|[A-Za-z0-9]")


# Short function words: a "that" after one of these is a pronoun ("Is that right?"), after any
# other word a relative pronoun ("the component that stores telemetry") that refers to nothing.
FUNCTION_WORDS = _words(
    "a an the is are was were be am do did does can may will of to in on at by for and or not "
    "nor how why who what when it its so as if"
)
# Frequent third-person verbs of technical prose that end in -s like a plural noun ("the
# gearbox uses ...", "it stores ..."): never the noun phrase a plural reference names.
VERBS_S = _words(
    "uses needs requires contains provides includes means takes gives makes goes sends stores "
    "receives runs calls allows supports creates defines gets sets holds keeps reads writes "
    "checks shows drives applies starts stops opens closes returns handles manages controls "
    "reports remains becomes follows describes specifies states lists covers produces "
    "generates measures monitors protects prevents causes depends works exists occurs happens "
    "lasts equals"
)
_CLAUSE = re.compile(r"[,;:()\[\]`\"'!?]|\.(?:\s|$)")


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
    """Entity words of `text`, in order of appearance, without duplicates. A word right after
    a number is its unit ("55 kW", "20 mA"), not an entity."""
    out: list[str] = []
    before = ""
    for w in _WORD.findall(text):
        if is_entity(w) and w not in out and not _NUMBER.fullmatch(before):
            out.append(w)
        before = w
    return out


def content_words(text: str) -> list[str]:
    """Lower-cased words of >= 4 letters that are neither stopwords nor entities."""
    out: list[str] = []
    for w in _WORD.findall(text):
        low = w.lower()
        if (
            len(low) >= 4
            and low.isalpha()
            and low not in FOLLOWUP_STOPWORDS
            and not is_entity(w)
            and low not in out
        ):
            out.append(low)
    return out


def _cues(question: str) -> set[str]:
    """The reference cue words of `question`; a relative "that" (after a content word, as in
    "the component that stores telemetry") is not one."""
    words = [w.lower().strip("'") for w in re.findall(r"[A-Za-z']+", question)]
    found = set()
    for i, w in enumerate(words):
        if w not in REFERENCE_CUES:
            continue
        before = words[i - 1] if i else ""
        if w == "that" and before and before not in FUNCTION_WORDS | REFERENCE_CUES:
            continue
        found.add(w)
    return found


def refers_back(question: str) -> bool:
    return bool(_cues(question)) or bool(CONTINUATION.match(question))


def _modifier(word: str) -> bool:
    low = word.lower()
    return (
        low.isalpha()
        and len(low) >= 3
        and not is_entity(word)
        and low not in FOLLOWUP_STOPWORDS | FUNCTION_WORDS | REFERENCE_CUES | VERBS_S
        and not low.endswith("ly")
    )


def _plural(word: str) -> bool:
    low = word.lower()
    return (
        _modifier(word)
        and len(low) >= 4
        and low.endswith("s")
        and not low.endswith(("ss", "us", "is"))
    )


def plural_phrase(text: str, max_words: int) -> list[str]:
    """The first plural noun phrase of `text` (a word ending in -s that is no verb, stopword or
    entity, with up to `max_words` - 1 modifier words right before it in the same clause),
    e.g. ["telemetry", "values"]; [] when there is none."""
    for clause in _CLAUSE.split(text):
        words = _WORD.findall(clause)
        for i, w in enumerate(words):
            if not _plural(w):
                continue
            start = i
            while start > 0 and i - start + 1 < max_words and _modifier(words[start - 1]):
                start -= 1
            return [x.lower() for x in words[start : i + 1]]
    return []


def answer_text(turn: ConversationTurn, policy: Policy) -> str:
    """The earlier answer as the rewrite reads it: "" for a refusal (it names no evidence; its
    marker word such as NO_EVIDENCE is no entity), citation markers removed."""
    text = turn.answer.strip()
    for refusal in (policy.refusal.no_evidence_text, policy.refusal.model_text):
        head = refusal.split(":", 1)[0] + ":"
        if text == refusal or (":" in refusal and text.startswith(head)):
            return ""
    return re.sub(citation_format(policy.citation_style).marker_pattern, " ", text)


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


def _answer_terms(question: str, turns: Sequence[ConversationTurn], policy: Policy) -> list[str]:
    """Terms of the last `rewrite_answer_turns` answers, newest first: for a plural cue the
    answer's first plural noun phrase, then the answer's entities."""
    conv = policy.conversation
    plural = bool(_cues(question) & PLURAL_CUES)
    out: list[str] = []
    for t in list(reversed(turns))[: conv.rewrite_answer_turns]:
        text = answer_text(t, policy)
        if not text:
            continue
        if plural:
            out += plural_phrase(text, conv.rewrite_phrase_words)
        out += entities(text)
    return out


def rewrite_query(
    query: str, question: str, history: Sequence[ConversationTurn], policy: Policy
) -> FollowupRewrite:
    """The retrieval query for `question` after `history` (rules in the module docstring)."""
    turns = recent_turns(history, policy)
    if not turns:
        return FollowupRewrite(original=query, query=query, rule="no_history")
    own = entities(question)
    if own and CONTINUATION.match(question):
        rule = "followup:substitution"
    elif refers_back(question):
        rule = "followup:reference"
    elif (
        not own and len(content_words(question)) <= policy.conversation.rewrite_no_entity_max_words
    ):
        rule = "followup:no_entity"
    else:
        return FollowupRewrite(
            original=query, query=query, rule="standalone", turns_used=len(turns)
        )
    conv = policy.conversation
    window = [t.question for t in reversed(turns)][: conv.rewrite_turns]
    # (term, came from an answer), in the order of rule 3.
    candidates: list[tuple[str, bool]] = []
    if rule == "followup:substitution":
        # The new entity replaces the old ones; what was asked about them is carried.
        candidates = [(w, False) for w in content_words(window[0])] if window else []
    else:
        candidates = [(e, False) for q in window for e in entities(q)]
        if rule == "followup:reference":
            candidates += [(w, True) for w in _answer_terms(question, turns, policy)]
        if window and not any(is_entity(w) for w, _ in candidates):
            # Nothing named: what the newest question was about ("cooler core").
            candidates += [(w, False) for w in content_words(window[0])]
    seen = {w.lower() for w in _WORD.findall(question)}
    carried: list[str] = []
    answered: list[str] = []
    for term, from_answer in candidates:
        if len(carried) >= conv.rewrite_max_terms:
            break
        if term.lower() in seen:
            continue
        if from_answer:
            if len(answered) >= conv.rewrite_answer_max_terms:
                continue
            answered.append(term)
        seen.add(term.lower())
        carried.append(term)
    rewritten = _append(query, carried) if carried else query
    return FollowupRewrite(
        original=query,
        query=rewritten,
        carried=carried,
        rule=rule,
        turns_used=len(turns),
        from_answers=answered,
    )


# The optional LLM rewrite (`[stages] llm_rewrite`): a frozen prompt file, hash-pinned in the
# tests like every template; the reply must be one JSON object {"query": "..."}.
REWRITE_TEMPLATE = "followup_rewrite_v1.txt"
MAX_REWRITE_CHARS = 1000


def rewrite_prompt(question: str, turns: Sequence[ConversationTurn]) -> str:
    """The exact user message of the LLM rewrite (earlier questions only, oldest first)."""
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
