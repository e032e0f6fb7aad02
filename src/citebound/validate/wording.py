"""Which words of an answer sentence the support check counts (`validate.support`).

- **names**: capitalised words (not the first word, not stopwords) and number words, and the
  demonym/plural variants by which the evidence may have them;
- **shown texts**: the question and the source lines above the cited chunks were shown to
  the model, so their words are known, not invented;
- **absent words**: words of the sentence the evidence lacks, function words aside
  (`evidence.FUNCTION_WORDS`: how a reply is phrased, never content) and derivational
  variants aside (`afterwards` / `after`);
- **scattered words**: words of a clause that the evidence has, but not in the one evidence
  sentence that states most of that clause (a claim relating words the evidence keeps apart).

Pure and deterministic; the shown texts are memoized per text.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

from citebound.text.identifiers import identifiers
from citebound.text.lexicon import (
    ALL_WORDS,
    DIGITS_OF,
    MAGNITUDE_WORDS,
    MULTIPLIER_WORDS,
    SUPPORT_STOPWORDS,
    number_words,
)
from citebound.validate.evidence import (
    BEFORE_NUMBER_CLAIMS,
    FUNCTION_WORDS,
    EvidenceIndex,
    content_lemma,
    covered,
    derived_base,
    fold,
    lemma,
    lemmas,
    prefix_key,
)
from citebound.validate.polarity import CLAUSE_WORDS, clause_break
from citebound.validate.swap import in_evidence, sentence_tokens, span_tokens

# Not "one": mostly a pronoun or determiner ("one of", "no one", "one man's quest").
_NUMBER_WORDS = frozenset(
    (*number_words(2, 90), *MAGNITUDE_WORDS, *number_words(1, 10, ordinal=True), *MULTIPLIER_WORDS)
)
_CAPITALISED = re.compile(r"(?<![\w'’])([A-Z][a-z]+(?:['’][a-z]+)?)\b")


def _first_letter(sentence: str) -> int:
    for i, ch in enumerate(sentence):
        if ch.isalpha():
            return i
    return -1


def names(sentence: str) -> list[str]:
    """Capitalised words (not the first word, not function words) and number words."""
    out: list[str] = []
    first = _first_letter(sentence)
    for m in _CAPITALISED.finditer(sentence):
        word = m.group(1)
        low = fold(word).split("'")[0]
        if m.start() == first or low in SUPPORT_STOPWORDS or word in out:
            continue
        out.append(word)
    for w in ALL_WORDS.findall(sentence.casefold()):
        if w in _NUMBER_WORDS and w not in out:
            out.append(w)
    return out


# A number word written as digits ("seven episodes" for "7 episodes").
# Demonym and plural endings: "Kenyan" names the Kenya of the evidence, "Indians" its India,
# "Iranian" its Iran. Only whole-word stems of 4+ letters, so "Mars" is not "Marshall".
_NAME_ENDINGS = ("n", "an", "ian", "ns", "ans", "ians", "i", "is", "s", "es", "ese")


def name_variant_in(word: str, raw_words: frozenset[str]) -> bool:
    """The evidence has `word` as digits, or as the same name with(out) a demonym/plural
    ending."""
    if DIGITS_OF.get(word, "") in raw_words:
        return True
    for ending in _NAME_ENDINGS:
        if len(word) >= 4 and word + ending in raw_words:
            return True
        stem = word[: -len(ending)]
        if word.endswith(ending) and len(stem) >= 4 and stem in raw_words:
            return True
    return False


@dataclass(frozen=True)
class Shown:
    """The words of a text the model was shown besides the evidence (the question, the source
    lines): known to the reader, so repeating them invents nothing."""

    raw: frozenset[str]  # every word as written
    lemmas: frozenset[str]  # content lemmas
    keys: frozenset[str]  # content lemmas and their prefix keys
    all_lemmas: frozenset[str]  # every lemma, stopwords kept (antonyms)
    id_words: frozenset[str]  # the words of its identifiers (`X200`, `NASA`)
    id_lemmas: frozenset[str]  # and their lemmas


@lru_cache(maxsize=1024)
def shown(text: str, prefix: int) -> Shown:
    """The known words of `text` (a question or source lines), tokenised once: its content
    lemmas are `lemmas(text)` and its lemmas `polarity.all_lemmas(text)`, as sets."""
    raw = ALL_WORDS.findall(fold(text))
    every = frozenset(map(lemma, raw))
    lems = frozenset(x for x in map(content_lemma, raw) if x)
    ids = identifiers(text)
    return Shown(
        raw=frozenset(raw),
        lemmas=lems,
        keys=lems | {prefix_key(w, prefix) for w in lems} - {""},
        all_lemmas=every,
        id_words=frozenset(ALL_WORDS.findall(" ".join(ids).casefold())),
        id_lemmas=frozenset(w for ident in ids for w in lemmas(ident)),
    )


def in_context(swap: str, shown: Shown) -> bool:
    """The sentence word of a `word>token` swap is a word of the source lines."""
    parts = ALL_WORDS.findall(swap.split(">", 1)[0].casefold())
    return bool(parts) and all(p in shown.raw or lemma(p) in shown.lemmas for p in parts)


def absent(
    token: str,
    index: EvidenceIndex,
    prefix: int,
    question: Shown,
    context: Shown,
    sentence: frozenset[str],
) -> bool:
    """A word the evidence lacks: not a function word (`FUNCTION_WORDS`: how a reply is
    phrased), not a word of the source lines, not the question's identifier, and neither its
    lemma (by lemma or prefix) nor its derivational base (`afterwards` / `after`,
    `replacement` / `replace`; by exact lemma, and not when `sentence`, the sentence's words,
    has the base itself) in the evidence or the source lines (`reassembled` under
    "Reassembly")."""
    if token in index.raw_words or token in FUNCTION_WORDS or token in context.raw:
        return False
    if token in question.id_words:
        return False
    key = content_lemma(token)
    if key and (covered(key, index, prefix) or context.keys & {key, prefix_key(key, prefix)}):
        return False
    base = derived_base(token) if token not in _NUMBER_WORDS else ""
    if base and base not in sentence:
        root = lemma(base)
        if base in index.raw_words or root in index.words or root in context.lemmas:
            return False
    return True


def absent_words(
    tokens: list[str], index: EvidenceIndex, prefix: int, question: Shown, context: Shown
) -> list[str]:
    """The words of `tokens` (a sentence's, in order) that `absent` finds missing, and a word
    of `BEFORE_NUMBER_CLAIMS` the evidence lacks when a number follows it ("since 1990")."""
    sentence = frozenset(tokens)
    out = [t for t in tokens if absent(t, index, prefix, question, context, sentence)]
    for t, after in itertools.pairwise(tokens):
        if t in BEFORE_NUMBER_CLAIMS and after[:1].isdigit():
            out += [t] if t not in index.raw_words and t not in context.raw else []
    return out


# Where a sentence's clauses meet: a reply merging two evidence sentences ("A new wear ring
# has a clearance of 0.35 mm, and the ring is replaced at 0.70 mm") states each clause from one.
_REPLY_CLAUSE_WORDS = """and or when where whereas though until then if who whose that"""
_CLAUSE_BREAK = clause_break((*CLAUSE_WORDS, *_REPLY_CLAUSE_WORDS.split()), comma=True, colon=False)
# A colon ends a clause only when a clause follows it, one with a verb of its own ("The root
# cause was the torque: the bolts had been tightened to 30 Nm"). Otherwise its two sides are
# one claim, a label and its value ("Directed by Ron Howard: Son of Flubber", "Made of steel:
# the inlet valve"; r5-v6), and one evidence sentence must relate them.
_COLON = re.compile(r":(?!:)")
_FINITE_TEXT = """is are was were be been has have had do does did must shall should will
    would may might can could cannot"""
_FINITE = frozenset(_FINITE_TEXT.split())
_LIST_MARKS = frozenset(",;")
# A part opening with one of these is an adverbial ("After sliding the impeller on",
# "In 1970"); the clause after its comma is a claim of its own, often an imperative, which
# has no auxiliary (checkset p03).
_ADVERBIAL_TEXT = """after before since while during in on at by for from with without through
    until upon once if when although though because as to into onto over under within"""
_ADVERBIAL = frozenset(_ADVERBIAL_TEXT.split())
# A `;` right after a sentence end separates the cells of a quoted table row ("KEY: The size
# of the array.; 500; Positive integer"), not two parts of one claim.
_CELL_END = re.compile(r"[.!?]\s*$")


def _finite(part: str) -> bool:
    return not _FINITE.isdisjoint(ALL_WORDS.findall(fold(part)))


def clauses(sentence: str) -> list[str]:
    """The clauses of a reply sentence (`_CLAUSE_BREAK`, and `_COLON` before a clause).

    A `,` or `;` likewise ends a clause only before one with a verb of its own: "The outlet
    valve, made of bronze" and "The outlet valve; made of bronze" are one claim, as with the
    colon (final review of r5-v6)."""
    out: list[str] = []
    pos, mark = 0, ""
    for m in [*_CLAUSE_BREAK.finditer(sentence), None]:
        clause = sentence[pos : m.start() if m else len(sentence)]
        parts = _COLON.split(clause)
        if mark and _phrase_of(out[-1], parts[0]):
            out[-1] += " " + parts[0]  # a phrase of the clause before: the same claim
        else:
            out.append(parts[0])
        for part in parts[1:]:
            if not _finite(part):
                out[-1] += " " + part  # a label's value: the same claim
            else:
                out.append(part)
        if m:
            pos, mark = m.end(), m.group()
            mark = (
                mark if mark in _LIST_MARKS and not _CELL_END.search(sentence, 0, m.start()) else ""
            )
    return out


def _phrase_of(before: str, part: str) -> bool:
    """`part`, after a `,` or `;`, is a phrase of the clause `before`: neither has a verb of
    its own. Narrowed to both sides: merging every part without an auxiliary (after "X was
    born in 1950", "moved to Paris" too) cost right HaluEval summaries (fit_support --check:
    summarization passed 0.564 -> 0.562)."""
    words = ALL_WORDS.findall(fold(before))
    if words and words[0] in _ADVERBIAL:
        return False  # "After sliding the impeller on, tighten the bolts": a clause follows
    return not _finite(part) and not _finite(before)


# A clause relates words only when it has two of them the evidence has: with one there is no
# relation to check (structural, not fitted).
_RELATED = 2


def _clause_words(
    clause: str, index: EvidenceIndex, prefix: int, topic: frozenset[str]
) -> frozenset[str]:
    """The content lemmas of `clause` the evidence has, the source lines' topic aside."""
    return frozenset(w for w in lemmas(clause) if w not in topic and covered(w, index, prefix))


def scattered(sentence: str, index: EvidenceIndex, prefix: int, topic: frozenset[str]) -> int:
    """Covered content lemmas of each clause that its best single evidence span lacks, summed:
    a claim whose words the evidence has only in different sentences ("Son of Flubber was
    directed by Ron Howard" over "Splash ... directed by Ron Howard" and "Son of Flubber ...
    directed by Robert Stevenson") relates them itself. `topic`: lemmas of the source lines,
    what the whole chunk is about ("HP-220" from the manual's title), never scattered."""
    total = 0
    for clause in clauses(sentence):
        words = _clause_words(clause, index, prefix, topic)
        if len(words) >= _RELATED:
            total += len(words) - index.best_window(words, 1, prefix)[1]
    return total


def moved_numbers(
    sentence: str, index: EvidenceIndex, prefix: int, topic: frozenset[str]
) -> tuple[str, ...]:
    """`number>evidence number` for each number a clause takes from elsewhere in the cited
    evidence while the one evidence sentence stating that clause has another number in the
    same slot (the same word before or after it): "the oil cooler core is cleaned every 4000
    operating hours" over "Clean the oil cooler core every 1000 operating hours", 4000 being
    the oil change interval of another chunk. A number the evidence lacks altogether is a
    missing number, not this."""
    numbers = {k for k, kind in sentence_tokens(sentence) if kind == "number"}
    if not numbers:
        return ()  # most sentences: nothing to move
    out: list[str] = []
    for clause in clauses(sentence):
        tokens = sentence_tokens(clause)
        if not any(kind == "number" for _, kind in tokens):
            continue
        start, n = index.best_window(_clause_words(clause, index, prefix, topic), 1, prefix)
        if n < _RELATED:
            continue  # no evidence sentence states this clause
        span = span_tokens(index.spans[start])
        keys = {k for k, _ in span}
        for i, (key, kind) in enumerate(tokens):
            if kind != "number" or key in keys or not in_evidence(key, index):
                continue
            before = tokens[i - 1][0] if i > 0 else None
            after = tokens[i + 1][0] if i + 1 < len(tokens) else None
            for j, (other, other_kind) in enumerate(span):
                if other_kind != "number" or other in numbers:
                    continue
                left = span[j - 1][0] if j > 0 else None
                right = span[j + 1][0] if j + 1 < len(span) else None
                if (before is not None and left == before) or (
                    after is not None and right == after
                ):
                    out.append(f"{key}>{other}")
                    break
    return tuple(dict.fromkeys(out))


# A multi-word name: capitalised words, "of"/"the"/"de" allowed inside ("Son of Flubber",
# "Ron Howard", "Bank of England").
_NAME_RUN = re.compile(
    r"(?<![\w'’-])[A-Z][\w'’-]*(?:\s+(?:(?:of|the|de|von|van)\s+)?[A-Z][\w'’-]*)+(?![\w'’-])"
)


@lru_cache(maxsize=4096)
def _name_runs(text: str) -> tuple[str, ...]:
    """The multi-word names of `text`, casefolded, a leading function word dropped ("The
    Royal Navy" -> "royal navy"): in order, without repeats."""
    out: list[str] = []
    for m in _NAME_RUN.finditer(text):
        words = fold(m.group()).split()
        while words and words[0] in FUNCTION_WORDS:
            words = words[1:]
        if len(words) > 1 and " ".join(words) not in out:  # multi-word only
            out.append(" ".join(words))
    return tuple(out)


def name_swaps(sentence: str, index: EvidenceIndex) -> tuple[str, ...]:
    """`name>evidence name` when the sentence relates two multi-word names of the evidence that
    no evidence sentence names together, and one evidence sentence states all the rest of
    the claim (every content word but the second name) with another name the reply leaves
    out: "Son of Flubber was directed by Ron Howard" over
    "Splash ... directed by Ron Howard. Son of Flubber ... directed by Robert Stevenson" is
    Ron Howard in Robert Stevenson's place. Counted whether or not the reply restates the
    question (r5-v5: a generic question, "Tell me about these films", left the scattered
    signal at 0), and for names the question has too: the question asks which relation
    holds, the reply asserts one."""
    names_here = list(_name_runs(sentence))
    if len(names_here) < 2:
        return ()
    found = {n: [i for i, s in enumerate(index.folded_spans) if n in s] for n in names_here}
    out: list[str] = []
    claim = frozenset(lemmas(sentence))
    for a, b in itertools.permutations([n for n in names_here if found[n]], 2):
        if set(found[a]) & set(found[b]):
            continue  # named together somewhere: the evidence may relate them
        rest = claim - frozenset(lemmas(b))
        for i in found[a]:
            if not rest <= index.span_words[i]:
                continue  # that sentence does not state the rest of the claim
            others = [n for n in _name_runs(index.spans[i]) if n not in names_here]
            # Not the same entity written otherwise ("Dubai Chess" / "Dubai Open Chess").
            others = [n for n in others if not {*n.split()} & {*a.split(), *b.split()}]
            if others:
                out.append(f"{b}>{others[0]}")
                break
    return tuple(dict.fromkeys(out))
