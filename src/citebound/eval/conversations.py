"""Multi-turn checks: conversations whose follow-ups only make sense after the earlier turns.

A check file (JSONL, e.g. `benchmarks/data/conversation_checks.jsonl`, written by hand from the
documents) holds one conversation per line: `{id, corpus, what, turns}`. Each turn gives the
question, the expected public status (`OK` or `NO_EVIDENCE`) and optionally:
- `facts`: groups of alternatives an OK answer must state (case-folded, one per group);
- `rule`: the follow-up rule the deterministic rewrite must apply (`standalone` for a topic
  switch, `followup:reference`, ...);
- `carries` / `never_carries`: terms the rewrite must / must not append to the query (a topic
  switch must not drag the old entities in).

Turns are asked in order; each later turn gets the earlier turns *as they were answered* as
history (the way a chat client sends them), so a wrong early answer shows in the next turn.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from citebound.contracts.base import Contract
from citebound.contracts.conversation import ConversationTurn
from citebound.pipeline import Pipeline

__all__ = ["ConversationCheck", "TurnCheck", "TurnOutcome", "load_checks", "run_check"]


class TurnCheck(Contract):
    """One turn of a check conversation and what must happen to it."""

    q: str = Field(min_length=1, description="The question as the user types it.")
    status: str = Field(description="Expected public status: OK or NO_EVIDENCE.")
    facts: list[list[str]] = Field(default_factory=list, description="Key facts of an OK answer.")
    rule: str | None = Field(default=None, description="Expected follow-up rewrite rule.")
    carries: list[str] = Field(default_factory=list, description="Terms that must be carried.")
    never_carries: list[str] = Field(
        default_factory=list, description="Terms that must not be carried."
    )


class ConversationCheck(Contract):
    """A conversation of two or more turns over one corpus."""

    id: str = Field(description="Stable id.")
    corpus: str = Field(description="sample (the bundled demo corpus) or fprime.")
    what: str = Field(description="What the conversation checks.")
    turns: list[TurnCheck] = Field(min_length=2, description="The turns, in order.")


class TurnOutcome(Contract):
    """What one turn got, and what was wrong with it ([] = passed)."""

    id: str = Field(description="Check id and turn number, e.g. s01.2.")
    question: str = Field(description="The question.")
    status: str = Field(description="Public status returned.")
    answer: str = Field(description="Answer text returned.")
    rule: str | None = Field(description="Follow-up rule applied (None on a first turn).")
    carried: list[str] = Field(description="Terms the rewrite carried.")
    problems: list[str] = Field(description="Why the turn failed its check; [] = passed.")


def load_checks(path: Path) -> list[ConversationCheck]:
    lines = path.read_text("utf-8").splitlines()
    return [ConversationCheck.model_validate(json.loads(x)) for x in lines if x.strip()]


def _problems(
    t: TurnCheck, status: str, answer: str, rule: str | None, carried: Sequence[str]
) -> list[str]:
    out: list[str] = []
    if status != t.status:
        out.append(f"status {status}, expected {t.status}")
    folded = " ".join(answer.replace("`", "").split()).casefold()
    if status == "OK":
        out += [f"missing fact {g}" for g in t.facts if not any(a.casefold() in folded for a in g)]
    if t.rule is not None and rule != t.rule:
        out.append(f"rule {rule}, expected {t.rule}")
    out += [f"{c} not carried" for c in t.carries if c not in carried]
    out += [f"{c} carried" for c in t.never_carries if c in carried]
    return out


def run_check(pipe: Pipeline, check: ConversationCheck) -> list[TurnOutcome]:
    """Ask the turns of `check` in order, each with the earlier turns as answered."""
    history: list[ConversationTurn] = []
    out: list[TurnOutcome] = []
    for n, t in enumerate(check.turns, 1):
        state = pipe.run(t.q, history=history, request_id=f"{check.id}.{n}")
        r = state.response
        status, answer = (r.status.value, r.answer) if r is not None else ("FAILED", "")
        rewrite = state.extras.get("followup_rewrite") or {}
        rule, carried = rewrite.get("rule"), list(rewrite.get("carried", []))
        out.append(
            TurnOutcome(
                id=f"{check.id}.{n}",
                question=t.q,
                status=status,
                answer=answer,
                rule=rule,
                carried=carried,
                problems=_problems(t, status, answer, rule, carried),
            )
        )
        history.append(ConversationTurn(question=t.q, answer=answer))
    return out
