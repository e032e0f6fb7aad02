"""What follows the lead in its evidence: the steps or rows of a list, the neighbouring
sentences, the sentence right after it.

Pure functions of the candidates (`candidates.py`) in evidence, line, sentence order; the
provider (`provider.py`) decides when each applies.
"""

from __future__ import annotations

from citebound.policy import AnswererPolicy

from .candidates import Candidate
from .scoring import anaphoric, entry, redundant

__all__ = [
    "antecedent",
    "follower",
    "negating_intro",
    "neighbours",
    "steps",
    "with_negating_intros",
]


def steps(lead: Candidate, cands: list[Candidate], max_steps: int) -> list[Candidate]:
    """The list items / table rows / steps that follow `lead` in its evidence, in order."""
    after = [c for c in cands if c.ev == lead.ev and (c.line, c.pos) > (lead.line, lead.pos)]
    out: list[Candidate] = []
    expected_line = lead.line
    for c in after:
        if len(out) >= max_steps:
            break
        if c.line == lead.line and not lead.intro:
            continue  # rest of the lead's own line: only steps on their own lines follow
        # A gap (dropped markup or another block) ends the list; one blank line before the
        # next item of a list whose items we are taking does not ("1. Poll: ..." / "" /
        # "2. Push: ..."): Markdown's loose list, so 2 lines, not a fitted value.
        gap = 2 if c.loose and out and out[-1].kind == "item" else 1
        if c.line > expected_line + gap and out:
            break
        if c.nested and out and c.line == expected_line + 1:
            # An indented line right under an item goes on with that item ("1. Poll: ..."
            # then "   In this configuration, ..."): not a step, and not the list's end.
            expected_line = c.line
            continue
        if c.kind == "prose" and not (lead.intro or lead.kind != "prose"):
            break
        if not lead.intro and c.kind == "item" and entry(c):
            # A reference list's next entry ("`coverage`: Similar to check ...") is about
            # another term, not the next step of the lead's.
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


def neighbours(
    lead: Candidate, after: Candidate | None, cands: list[Candidate], p: AnswererPolicy
) -> list[Candidate]:
    """Sentences next to the lead that hold a question term it lacks: the lead matched the
    question's words, its neighbour often finishes the answer ("... Ethelred fled to Normandy
    in 1013. He was forced out by Sweyn Forkbeard."). `after`: the lead's `follower`."""
    near = [after]
    if p.neighbours == "both":
        near.insert(
            0,
            next(
                (
                    c
                    for c in cands
                    if c.ev == lead.ev and c.line == lead.line and c.pos == lead.pos - 1
                ),
                None,
            ),
        )
    out: list[Candidate] = []
    for c in near:
        if c is None or c.intro or len(out) + 1 >= p.max_sentences:
            continue  # an intro without its items only announces
        new = {t for t in c.shared - lead.shared if len(t) > 1 or t.isdigit()}
        if new and not redundant(c, [lead, *out], p.redundant_share):
            out.append(c)
    return out


def follower(lead: Candidate, cands: list[Candidate]) -> Candidate | None:
    """The candidate right after `lead` in its evidence (same unit, or the next unit's first)."""
    for c in cands:
        if c.ev != lead.ev:
            continue
        if (c.line == lead.line and c.pos == lead.pos + 1) or (c.line == lead.line + 1 and c.first):
            return c
    return None


def antecedent(lead: Candidate, cands: list[Candidate]) -> Candidate | None:
    """The sentence right before `lead` in its paragraph when `lead` points back at it ("It
    allows ...", "This only happens when ...": `scoring.anaphoric`) and speaks of the question
    itself (a question term: a sentence the reader needs, not padding); else None.

    Only within one unit: a paragraph's first sentence pointing back at the previous paragraph
    (or a heading) has no antecedent a quote can bring along. Not a list intro (it announces
    items the answer would not quote) nor a lower-case item (quoted only under its intro)."""
    if lead.pos == 0 or not anaphoric(lead):
        return None
    for c in cands:
        if c.ev == lead.ev and c.line == lead.line and c.pos == lead.pos - 1:
            return c if c.shared and not c.intro and not c.lower else None
    return None


def negating_intro(c: Candidate, cands: list[Candidate]) -> Candidate | None:
    """The quotable intro that negates the list `c` belongs to ("It does not:"), or None when
    `c` is not under one or that intro is not quotable (then `c` is never quoted)."""
    if c.negated_by < 0:
        return None
    found = [x for x in cands if x.ev == c.ev and x.line == c.negated_by and x.intro]
    return found[-1] if found else None


def with_negating_intros(chosen: list[Candidate], cands: list[Candidate]) -> list[Candidate]:
    """`chosen` with the negating intro of each item quoted under one ("It does not:" /
    "Sort the data products"), right before the item: alone, the item reads as its opposite."""
    out: list[Candidate] = []
    for c in chosen:
        intro = negating_intro(c, cands)
        if intro is not None and intro not in chosen and intro not in out:
            out.append(intro)
        out.append(c)
    return out
