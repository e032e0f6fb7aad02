"""Where an extractive answer's gold misses come from (`benchmarks/tune_answerer.py misses`).

For an answered SQuAD question whose answer lacks every gold answer, `classify` names the
first place the gold is lost, in pipeline order:

* `not-in-evidence`: no selected evidence text holds a gold answer (retrieval / gate / assembly:
  no sentence choice can fix it; this bounds gold-in-answer);
* `not-quotable`: the evidence holds it, but in no candidate sentence (a cut, a filter);
* `too-few-terms`: in a candidate sharing too few question terms to qualify (paraphrase);
* `ranked-N`: in a qualifying sentence that ranked N-th (0 = best score) and was not chosen;
  `-lead-evidence` / `-other-evidence` says whether it is in the lead's evidence;
* `neighbour-of-lead`: added to `too-few-terms` / `ranked-N` when the gold sentence sits right
  before or after the lead (the neighbour rules' domain).
"""

from __future__ import annotations

from citebound.contracts.assembly import AnswerBundle
from citebound.eval.squad import contains_gold
from citebound.llm.extractive import ExtractiveProvider
from citebound.llm.extractive.candidates import Candidate

NOT_IN_EVIDENCE = "not-in-evidence"
NOT_QUOTABLE = "not-quotable"
TOO_FEW_TERMS = "too-few-terms"


def classify(
    provider: ExtractiveProvider, bundle: AnswerBundle, answers: list[str], refusal: str
) -> str | None:
    """Why the answer to `bundle` lacks the gold (None: it holds it, or it is a refusal)."""
    chosen = provider.choose(bundle, refusal)
    if not chosen or contains_gold(answers, [c.text for c in chosen]):
        return None
    if not contains_gold(answers, [e.sanitized_text for e in bundle.selected_evidence]):
        return NOT_IN_EVIDENCE
    scored, cands = provider.rank(bundle, refusal)
    holding = [c for c in cands if contains_gold(answers, [c.text])]
    if not holding:
        return NOT_QUOTABLE
    # The lead is the chosen sentence with the best score (the others follow it).
    # (`choose` ranks again: sentences are matched by position, not identity.)
    rank_of = {_key(c): i for i, (_, c) in enumerate(scored)}
    lead = min(chosen, key=lambda c: (rank_of.get(_key(c), len(scored)), _key(c)))
    gold = min(holding, key=lambda c: (rank_of.get(_key(c), len(scored)), _key(c)))
    rank = rank_of.get(_key(gold))
    if rank is None:
        label = TOO_FEW_TERMS
    else:
        label = f"ranked-{rank}" if rank < 3 else "ranked-3+"
        label += "-lead-evidence" if gold.ev == lead.ev else "-other-evidence"
    return label + ("/neighbour-of-lead" if _adjacent(gold, lead, cands) else "")


def _key(c: Candidate) -> tuple[int, int, int]:
    return (c.ev, c.line, c.pos)


def _adjacent(a: Candidate, b: Candidate, cands: list[Candidate]) -> bool:
    """Whether `a` is the candidate right before or after `b` in the same evidence."""
    if a.ev != b.ev:
        return False
    order = sorted(_key(c) for c in cands if c.ev == b.ev)
    return abs(order.index(_key(a)) - order.index(_key(b))) == 1
