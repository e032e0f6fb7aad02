"""Which row a capped evidence selection should still let in (`[retrieval] extra_chunks`).

Selection keeps at most `max_chunks` rows and `max_chunks_per_knowledge_id` per document, in
rank order. On F´ (issue #15) that cut the one chunk that answers: the "Implementation Via
PyTest" section of the 2-chunk `cmake-uts.md` ranked 7th behind that document's overview and
five rows of other CMake documents (k10, `max_chunks` 6). Raising a cap was measured and lost
answers (docs/answers.md: per-document cap 3 displaced d09's chunk), because each extra chunk
of one document pushes out another document's row. An extra slot displaces nothing: the rows
selected anyway stay, and the one row admitted on top of them must be a section of the best
row's document (the highest-similarity row, ties by rank: the one the gate weighs) that holds
more of the question's key terms than the best row does, counted on the row as a reader meets
it (`row_text`: document, headings, chunk). The document that answers then has a section
closer to the question than its first-ranked one ("How do I run the tests of the CMake build
system itself?": the overview holds cmake, build, system, test; the PyTest section adds run).

Candidates are the rows the two caps dropped, first in rank order; nothing beyond the retrieved
rows is brought in and no similarity changes, so the gate is unaffected. Measured and not
shipped: also admitting a row that holds a question term no kept row holds (docs/answers.md
"An extra evidence slot": no question gained, answers padded).
"""

from __future__ import annotations

from citebound.contracts.retrieval import RetrievalRow
from citebound.gate.measures import row_text
from citebound.text.terms import key_terms, terms


def _held(asked: frozenset[str], row: RetrievalRow) -> int:
    return len(asked & terms(row_text(row)))


def closer_section(question: str | None, candidate: RetrievalRow, best: RetrievalRow) -> bool:
    """Whether `candidate` (a row a cap dropped) is of the `best` row's document and holds
    more of `question`'s key terms than `best` does (module docstring)."""
    if not question or candidate.knowledge_id != best.knowledge_id:
        return False
    asked = key_terms(question)
    return bool(asked) and _held(asked, candidate) > _held(asked, best)
