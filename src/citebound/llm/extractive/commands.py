"""Command blocks in extractive answers: which sentence introduces a quotable fenced block,
and how a block stays with that sentence.

"How do I run the GDS?" is answered by the sentence announcing a command and the command
("To run the GDS from the deployment directory, run:" + "`fprime-gds -d . -n`"). Rules:

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
from citebound.text.markup import question_type

from .candidates import Candidate, code_blocks

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
