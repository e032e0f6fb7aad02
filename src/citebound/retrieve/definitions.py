"""Definition promotion: "What is X?" brings the chunk that defines X to the front.

A question asking what a named subject is or does ("What is DpWriter?", "What does the
ActiveRateGroup component do?") is answered by the sentence that defines X ("`Svc::DpWriter`
is an active component for writing data products to disk."). Fused similarity alone often
ranks that chunk below others of the same document (its design, scenarios and requirement
sections repeat X's name more often), and assembly keeps at most
`max_chunks_per_knowledge_id` chunks per document, so the defining chunk was dropped (F´
questions f03, f18, d13 of issue #15).

The rule: among the rows retrieval selects anyway (the first `top_k` of the reranked
candidates), up to `promote_definitions` chunks holding a sentence that defines X
(`citebound.text.subject.defining_verb`, the rule the extractive answerer leads with) move to
the front: chunks whose defining sentence names X itself before those naming X with
qualifiers ("The parameters view consists of ..."), then in retrieval order. "What N kinds
...?" likewise brings the section titled "N Types" (`kinds_rank`). Questions of other forms
(SciFact claims, most SQuAD questions) are untouched.

What the gate and assembly's similarity checks see never changes (`promote_rows`, the one
helper both the `Retriever` and the pipeline's `reranked` stage call): the set of rows is the
same (nothing is pulled in from beyond `top_k`, so no row is pushed out), every similarity is
kept, and rows of equal similarity keep their relative order, so the highest-similarity row
of any subset (the one whose coverage the gate and assembly weigh, ties by rank) is the same
row. Only the order of rows of different similarity changes. A defining chunk ranked beyond
`top_k` is not brought in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from citebound.contracts.retrieval import RetrievalRow
from citebound.policy import Policy
from citebound.text import split_sentences
from citebound.text.markup import question_type, render_units
from citebound.text.subject import defining_verb, named_subject
from citebound.text.terms import terms

T = TypeVar("T")


# "X has the following ports" / "X has no state machines" name X before a verb too, but say
# what X holds, not what it is; the answerer may still quote them, retrieval does not promote
# them (F´ f03: the design chunk "The `Svc::ActiveRateGroup` component has ..." came first).
_POSSESSION = frozenset({"has", "have"})


# "The active component is required to respond ...", "X is not ...": a copula followed by a
# negation or a passive participle states a rule about X, not what X is; "X is used to /
# called / defined as ..." and "Parameters are values that ..." do say what X is.
_COPULA = frozenset({"is", "are"})
_RULE_AFTER_COPULA = re.compile(
    r"\s*(?!(used|called|defined|made|designed|intended|named|based|composed)\b)"
    r"(not\b|no\b|also\b|\w+ed\b)",
    re.I,
)

# "This active component is a ...": about an example named before, not the kind itself.
_POINTS_BACK = re.compile(r"\W*(this|these|that|those|such|its|their)\b", re.I)


def _verb_end(sentence: str, verb: str) -> int:
    m = re.search(rf"\b{re.escape(verb)}\b", sentence, re.IGNORECASE)
    return m.end() if m else len(sentence)


def _defining(subject: frozenset[str], sentence: str, qualifiers: int) -> str | None:
    verb = defining_verb(subject, sentence, qualifiers, genus=True)
    if verb is None or verb in _POSSESSION or _POINTS_BACK.match(sentence):
        return None
    if verb in _COPULA and _RULE_AFTER_COPULA.match(sentence, _verb_end(sentence, verb)):
        return None
    return verb


# A code name's namespace (`Svc::DpWriter`) does not qualify the subject "DpWriter".
_NAMESPACE = re.compile(r"\b\w+::")


def definition_rank(subject: frozenset[str], text: str, qualifiers: int) -> int | None:
    """How directly a prose or list sentence of `text` (markup rendered as the answerer reads
    it) defines X, best first: 0 when X itself (namespace aside) is the subject of a defining
    verb ("Parameters are values that ...", "`Svc::DpWriter` is an active component ..."); 1
    for X with a glossary colon ("Active component: has a thread ...") or X with up to
    `qualifiers` more terms ("The parameters view consists of ..."); 2 for a qualified glossary
    line; None when no sentence defines X. Not a table row ("SVC-DPWRITER-001: `Svc::DpWriter`
    shall ..." is a requirement about X), nor a sentence announcing a list ("X has the
    following ports:")."""
    if not subject:
        return None
    best: int | None = None
    for unit in render_units(text.split("\n")):
        if unit.kind == "row":
            continue
        for sentence in split_sentences(unit.text):
            if sentence.rstrip().endswith(":"):
                continue
            for exact, plain in ((0, _NAMESPACE.sub("", sentence)), (1, sentence)):
                verb = _defining(subject, plain, 0 if exact == 0 else qualifiers)
                if verb is not None:
                    rank = exact + (verb == ":")
                    best = rank if best is None else min(best, rank)
                    break
            if best == 0:
                return 0
    return best


def promote(
    items: Sequence[T],
    rank_of: Callable[[T], int | None],
    limit: int,
) -> list[T]:
    """`items` with up to `limit` of those `rank_of` ranks moved to the front, best rank first,
    ties in their order in `items`; the rest keep their order (deterministic)."""
    if limit <= 0:
        return list(items)
    ranked = [(r, pos) for pos, item in enumerate(items) if (r := rank_of(item)) is not None]
    front = [pos for _, pos in sorted(ranked)[:limit]]
    chosen = set(front)
    return [items[p] for p in front] + [it for p, it in enumerate(items) if p not in chosen]


# "What component kinds does F´ have?", "What kinds of ports exist?": N of a list question
# asking for the kinds of N. A section titled "Component Types" lists them; a question about F´
# ranked the README's chunks first (F´ f41), the section 41st.
_KIND_WORDS = terms("kinds types sorts categories varieties")
_KINDS_OF = (
    re.compile(r"\b(?:kinds|types|sorts|categories) of (\w+)"),
    re.compile(r"\b(\w+) (?:kinds|types|sorts|categories)\b"),
)
_HEADING_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*[.)]?|[a-z](?:\.\d+)*[.)])\s+", re.I)


def kinds_subject(question: str) -> frozenset[str]:
    """The terms of N in a list question asking for "kinds of N" / "N kinds", else empty."""
    if question_type(question) != "list":
        return frozenset()
    folded = " ".join(question.casefold().split())
    for pattern in _KINDS_OF:
        for m in pattern.finditer(folded):
            noun = terms(m.group(1)) - _KIND_WORDS
            if noun:
                return noun
    return frozenset()


def kinds_heading(noun: frozenset[str], heading_path: Sequence[str]) -> bool:
    """Whether the chunk's own section is titled "N Types" / "Kinds of N" (any kind word)."""
    if not heading_path or not noun:
        return False  # a bare "Types" section is about no N
    title = terms(_HEADING_NUMBER.sub("", heading_path[-1]))
    kinds = title & _KIND_WORDS
    return bool(kinds) and title - kinds == noun


def kinds_rank(noun: frozenset[str], heading_path: Sequence[str], text: str) -> int | None:
    """0 for the chunk that opens an "N Types" section (its first line is the heading: the
    list's introduction is there), 1 for a later chunk of that section, else None."""
    if not kinds_heading(noun, heading_path):
        return None
    return 0 if text.lstrip().startswith("#") else 1


def _ranker(
    question: str,
    text_of: Callable[[str], str],
    heading_of: Callable[[str], Sequence[str]],
    policy: Policy,
) -> Callable[[str], int | None] | None:
    if not policy.retrieval.promote_definitions:
        return None
    subject = named_subject(question, policy.answerer.max_subject_terms)
    if subject:
        qualifiers = policy.answerer.subject_qualifiers
        return lambda i: definition_rank(subject, text_of(i), qualifiers)
    noun = kinds_subject(question)
    if noun:
        return lambda i: kinds_rank(noun, heading_of(i), text_of(i))
    return None


def _ties_kept(
    order: list[str], before: Sequence[str], similarity: Mapping[str, float]
) -> list[str]:
    """`order` with the rows of each similarity value put back in their order in `before`
    (each value keeps the positions it holds in `order`): the first row of highest similarity
    of any subset is then the same before and after promotion."""
    was = {x: p for p, x in enumerate(before)}
    groups: dict[float, list[int]] = {}
    for p, x in enumerate(order):
        groups.setdefault(similarity[x], []).append(p)
    out = list(order)
    for positions in groups.values():
        members = sorted((order[p] for p in positions), key=was.__getitem__)
        for p, x in zip(positions, members, strict=True):
            out[p] = x
    return out


def promote_rows(
    question: str, rows: Sequence[RetrievalRow], policy: Policy
) -> tuple[list[RetrievalRow], int]:
    """`rows` (ranked, the reranker's order) with the first `policy.retrieval.top_k` reordered
    so the chunks defining the question's subject (or its "N Types" section) come first, and
    how many chunks moved up for that. The rows beyond `top_k` stay where they are; rows of
    equal similarity keep their relative order (module docstring: the gate's and assembly's
    inputs are unchanged). Ranks are renumbered in the new order."""
    window = [r.chunk_id for r in rows[: policy.retrieval.top_k]]
    by_id = {r.chunk_id: r for r in rows}
    rank_of = _ranker(question, lambda i: by_id[i].chunk_text, lambda i: _heading(by_id[i]), policy)
    if rank_of is None or not window:
        return list(rows), 0
    # Each chunk is rendered and split once: the ranks serve both the promotion and the count.
    ranks = {i: rank_of(i) for i in window}
    order = promote(window, ranks.__getitem__, policy.retrieval.promote_definitions)
    order = _ties_kept(order, window, {i: by_id[i].similarity for i in window})
    was = {x: p for p, x in enumerate(window)}
    moved = sum(1 for p, x in enumerate(order) if p < was[x] and ranks[x] is not None)
    if order == window:
        return list(rows), 0
    head = [by_id[i].model_copy(update={"rank": r}) for r, i in enumerate(order)]
    return head + list(rows[len(window) :]), moved


def _heading(row: RetrievalRow) -> tuple[str, ...]:
    return row.source.heading_path if row.source is not None else ()
