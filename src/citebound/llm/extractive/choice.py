"""Which sentence leads an extractive answer, and which near-ties join it.

Split from `provider.ExtractiveProvider.choose` (the rules are unchanged): `lead_pool` keeps
the ranked sentences that may open an answer, `pick_lead` picks the lead among them, and
`join_near_ties` adds the sentences whose scores the lexical ranking cannot tell apart from
the lead's, each adding a question term ("stop when answered").
"""

from __future__ import annotations

from citebound.policy import AnswererPolicy
from citebound.text.markup import QuestionType
from citebound.text.subject import defines, subject_in_setting

from . import commands
from .candidates import Candidate
from .following import follower, steps
from .scoring import redundant, weak_lead

Scored = tuple[float, Candidate]


def lead_pool(
    scored: list[Scored],
    cands: list[Candidate],
    blocks: commands.Blocks,
    question: str,
    qtype: QuestionType,
    named: bool,
    p: AnswererPolicy,
) -> tuple[list[Scored], bool]:
    """The ranked sentences that may lead (empty: refuse), and whether they define the
    subject of a "What is X?" question."""
    pool = scored
    if blocks or qtype == "procedure":
        # "To reset it, run:" whose block is not quotable would answer with a promise.
        pool = [
            sc
            for sc in pool
            if not commands.dangling(sc[1], blocks, steps(sc[1], cands, p.max_steps))
        ]
        if not pool:
            return [], False
    # An intro over a list none of whose items is quotable ("The following tools are
    # needed:" + items cut mid-phrase) only announces: it does not lead (v9: "an intro
    # only with its items").
    pool = [
        sc
        for sc in pool
        if not (sc[1].intro and sc[1].listing)
        or commands.block_of(sc[1], blocks) is not None
        or steps(sc[1], cands, p.max_steps)
    ]
    if not pool:
        return [], False
    defined = False  # the lead defines the subject of "What is X?"
    if p.weak_lead:
        # A sentence that leans on the one before it ("In this case, this component ...")
        # or only announces a list ("X has the following ports:") does not answer alone.
        # A document's opening sentence leaves its subject to the title (`titled`).
        pool = [
            sc for sc in pool if sc[1].titled or not weak_lead(qtype, sc[1], named=named)
        ] or pool
    if qtype == "definition" and p.prefer_defining:
        # "What is a queued component?": a sentence that defines the subject answers it;
        # one that mentions it in passing ("This class is used by queued components.")
        # does not, whatever its evidence's rank. Subject = the question's key terms.
        # "What is a hub in the hub pattern?": the hub, not the pattern (`setting`). A list
        # intro ("The class C `TesterBase` provides the following histories:") announces
        # what X has; it does not say what X is.
        subject, setting = subject_in_setting(question)
        defining = [
            sc
            for sc in pool
            if not sc[1].intro
            and (
                defines(subject, sc[1].text, p.subject_qualifiers, setting)
                # "# components::SeqDispatcher" / "Dispatches command sequences to ...":
                # the title names the subject the sentence leaves out.
                or (sc[1].titled and subject <= sc[1].shared)
            )
        ]
        # A document says what its subject is in its introduction / overview section:
        # such a definition comes before one from its design notes.
        overview = [sc for sc in defining if sc[1].overview] if p.prefer_overview else []
        pool = overview or defining or pool
        defined = bool(defining)
    return pool, defined


def pick_lead(pool: list[Scored], blocks: commands.Blocks, p: AnswererPolicy) -> Scored:
    """The lead: from the best-ranked evidence that answers nearly as well as the best."""
    best = pool[0][0]
    # The lead comes from the best-ranked evidence that answers nearly as well as the best.
    # A penalty can make every score negative; the best sentence then still qualifies (a
    # bare `rank_tolerance * best` would exceed it and leave nothing to choose).
    bar = min(best, p.rank_tolerance * best)
    # Tie-break: on equal scores within a line that introduces a command block, the
    # sentence introducing it ("... you would just run the following:") leads. Otherwise
    # the earlier sentence.
    return min(
        (sc for sc in pool if sc[0] >= bar),
        key=lambda sc: (
            sc[1].ev,
            -sc[0],
            sc[1].line,
            commands.block_of(sc[1], blocks) is None,
            sc[1].pos,
        ),
    )


def join_near_ties(
    chosen: list[Candidate],
    covered: set[str],
    scored: list[Scored],
    cands: list[Candidate],
    lead_score: float,
    ties: bool,
    qtype: QuestionType,
    named: bool,
    p: AnswererPolicy,
) -> None:
    """Add to `chosen` (and their terms to `covered`) the ranked sentences that still add a
    question term, or tie with the lead when `ties` (the lexical score cannot tell which of
    them answers), up to `max_sentences` and above `relative_floor` of the lead's score."""
    for score, c in scored:
        if len(chosen) >= p.max_sentences or score < p.relative_floor * lead_score:
            break
        tied = ties and score >= p.tie_share * lead_score and len(chosen) < p.max_tied
        if c.text in {x.text for x in chosen} or not (c.shared - covered or tied):
            continue  # stop when answered: a sentence must add a question term
        if (
            p.weak_lead
            and weak_lead(qtype, c, named=named)
            and all(follower(x, cands) != c for x in chosen)
        ):
            continue  # leans on a sentence not quoted, or announces what is not asked
        if c.intro:
            # A list intro joins with the items it announces, or not at all: alone
            # it promises an answer it does not give ("... has the following values:").
            items = steps(c, cands, p.max_steps)
            if not items or qtype not in ("procedure", "list"):
                continue
            chosen.extend([c, *items])
            covered |= c.shared.union(*(x.shared for x in items))
            continue
        if redundant(c, chosen, p.redundant_share):
            # It says again what is quoted; its question terms are as good as covered,
            # so a weaker sentence does not join for them instead.
            covered |= c.shared
            continue
        chosen.append(c)
        covered |= c.shared
