"""Command blocks in extractive answers: which sentence introduces a quotable fenced block,
and how a block stays with that sentence.

"How do I run the GDS?" is answered by the sentence announcing a command and the command
("To run the GDS from the deployment directory, run:" + "`fprime-gds -d . -n`"). Rules:

* a block is quotable when short and whole (`code_blocks`: `max_code_lines`, the validator's
  splitter gives it back as one sentence, it quotes its evidence);
* only a procedure question quotes a block (`blocks`), and only right after the sentence that
  introduces it (`block_of`). When the block's introducing line ends in ":", that is its last
  sentence: another sentence of the line ("You can reset the configuration with the reset
  tool. To erase the disk, run:") does not announce the block, and the block's words do not
  count for it. A line not ending in ":" introduces the block as a whole ("... run the GDS
  without the HTML/browser UI loading. This can be done using the `-g none` flag. ..." +
  "$ fprime-gds -g none", F´ c03): a sentence of it sharing a question term brings the block
  when the block shares one too;
* a sentence ending in ":" with nothing quotable after it (its block filtered: too long, a
  backtick, a marker, markup) promises what the answer would not give: it never leads a
  procedure answer (`dangling`);
* the token budget drops a block together with the sentence introducing it (`groups`).
"""

from __future__ import annotations

from citebound.contracts.assembly import AnswerBundle
from citebound.policy import AnswererPolicy
from citebound.text import split_sentences
from citebound.text.markup import question_type, render_units
from citebound.text.terms import terms
from citebound.validate.evidence import plain_numbers
from citebound.validate.support import is_quotation

from .candidates import Candidate, eligible, forbidden_text, marker_like, paragraphs

Blocks = dict[tuple[int, int], Candidate]


def blocks(
    bundle: AnswerBundle, refusal_text: str, question: frozenset[str], policy: AnswererPolicy
) -> Blocks:
    """Quotable code blocks by (evidence, line of the unit introducing them); only for a
    question asking how to do something (`procedure`), never for others."""
    if question_type(bundle.user_question) != "procedure":
        return {}
    found = code_blocks(bundle, question, refusal_text, policy)
    return {(b.ev, b.after): b for b in found}


def block_of(c: Candidate, found: Blocks) -> Candidate | None:
    """The block `c` introduces (module docstring): when the line ends in ":", only its last
    sentence (`Candidate.intro`); otherwise a sentence sharing a question term, for a block
    sharing one."""
    block = found.get((c.ev, c.line))
    if block is None:
        return None
    if block.intro:
        return block if c.intro else None
    return block if c.shared and block.shared else None


def dangling(c: Candidate, found: Blocks, follows: list[Candidate]) -> bool:
    """A sentence ending in ":" (`c.intro`) with neither a quotable block nor steps
    (`follows`) after it: alone it only announces."""
    return c.intro and block_of(c, found) is None and not follows


def groups(chosen: list[Candidate]) -> list[list[int]]:
    """Indices of `chosen` in the units the token budget drops whole: a block with the
    sentence before it (the one introducing it), every other sentence alone."""
    out: list[list[int]] = []
    for i, c in enumerate(chosen):
        if c.kind == "code" and out:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def code_blocks(
    bundle: AnswerBundle, question: frozenset[str], refusal_text: str, policy: AnswererPolicy
) -> list[Candidate]:
    """Short fenced code blocks that a prose line or list item introduces (`render_units`
    with `policy.max_code_lines`), one candidate per block, in evidence and line order.

    Kept apart from `candidates`: a block is never a sentence of its own (it is not weighed,
    never leads, never a step or a neighbour); the answerer quotes it only right after a
    sentence of the line that introduces it (procedure questions, provider.py). The same
    filters as for sentences apply (length, anchors, evidence ids, markers), and the block
    must come back whole from the validator's splitter ("fprime-gds -d . -n" would be cut at
    " . ": never quoted, rather than failing the answer) and read as a quotation of its
    evidence (`validate.support.is_quotation`: a block whose lines a blank line splits in two
    evidence sentences would be quoted across that sentence end).
    """
    if policy.max_code_lines <= 0:
        return []
    forbidden = forbidden_text(bundle, refusal_text)
    allowed = tuple(bundle.allowed_anchors)
    out: list[Candidate] = []
    for ev_index, evidence in enumerate(bundle.selected_evidence):
        lines = paragraphs(evidence.sanitized_text)
        for unit in render_units(lines, max_code_lines=policy.max_code_lines):
            if unit.kind != "code":
                continue
            text = unit.text
            if (
                not eligible(text, forbidden, policy.max_sentence_chars)
                or marker_like(text, bundle, allowed)
                or split_sentences(text) != [text]
                or not is_quotation(plain_numbers(text), plain_numbers(evidence.sanitized_text))
            ):
                continue
            shared = question & terms(text)
            out.append(
                Candidate(
                    ev_index,
                    unit.line,
                    0,
                    text,
                    evidence.citation_anchor,
                    "code",
                    unit.intro,  # its introducing line ends with ":"
                    True,
                    shared,
                    frozenset(),
                    after=unit.after,
                )
            )
    return out
