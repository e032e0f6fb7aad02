"""Rule-made pairs from real evidence sentences: surface edits the model must not accept, and
restatements it must.

Sentence pools (never the benchmark's documents): SQuAD 2.0 dev tune articles (Normans,
Computational_complexity_theory, 1973_oil_crisis, European_Union_law), the F´ Markdown docs
outside docs/UsersGuide/ (prose lines only), and SciFact abstracts not cited by a held-out
claim. A passage is 1-4 consecutive sentences of one paragraph; the target sentence is one of
them. Each generator below yields (premise, claim, label); `kind` is its name.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from citebound.text.sentences import split_sentences
from citebound.validate.premise import window
from training.common import Pair, stable_bucket
from training.verifier.sources import PREMISE_BUDGET, scifact_split

SQUAD_TUNE = ("Normans", "Computational_complexity_theory", "1973_oil_crisis", "European_Union_law")


@dataclass(frozen=True)
class Doc:
    name: str
    paragraphs: tuple[tuple[str, ...], ...]

    @property
    def text(self) -> str:
        return " ".join(" ".join(p) for p in self.paragraphs)


def _usable(s: str) -> bool:
    words = s.split()
    return 6 <= len(words) <= 60 and sum(ch.isalpha() for ch in s) > 0.6 * len(s)


def _paragraphs(texts: list[str]) -> tuple[tuple[str, ...], ...]:
    out = []
    for t in texts:
        sents = tuple(s for s in split_sentences(" ".join(t.split())) if _usable(s))
        if sents:
            out.append(sents)
    return tuple(out)


def squad_docs(data: Path) -> list[Doc]:
    d = json.loads((data / "squad2-dev" / "dev-v2.0-part1.json").read_text("utf-8"))
    return [
        Doc(f"squad:{a['title']}", _paragraphs([p["context"] for p in a["paragraphs"]]))
        for a in d["data"]
        if a["title"] in SQUAD_TUNE
    ]


_MD_SKIP = re.compile(r"^\s*(?:#|\||```|<|!\[|\[.*\]:|---|===|\s*$)")
_MD_INLINE = re.compile(r"\[([^\]]*)\]\([^)]*\)|[*_]{1,2}(?=\w)|(?<=\w)[*_]{1,2}")


def fprime_docs(data: Path) -> list[Doc]:
    docs = []
    root = data / "fprime-docs"
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("docs/UsersGuide/"):
            continue  # the chat-answer benchmark's documents
        paragraphs, current, fenced = [], [], False
        for line in path.read_text("utf-8", errors="replace").splitlines():
            if line.strip().startswith("```"):
                fenced = not fenced
                continue
            if fenced or _MD_SKIP.match(line):
                if current:
                    paragraphs.append(" ".join(current))
                    current = []
                continue
            current.append(_MD_INLINE.sub(lambda m: m.group(1) or "", line.strip(" -*")))
        if current:
            paragraphs.append(" ".join(current))
        paras = _paragraphs(paragraphs)
        if paras:
            docs.append(Doc(f"fprime:{rel}", paras))
    return docs


def scifact_docs(data: Path, limit: int = 500) -> list[Doc]:
    held: set[str] = set()
    for line in (data / "scifact" / "claims_train_evidence.jsonl").open(encoding="utf-8"):
        item = json.loads(line)
        if scifact_split(str(item["claim_id"])) == "dev":
            held.add(str(item["doc_id"]))
    docs = []
    for line in (data / "scifact" / "corpus.jsonl").open(encoding="utf-8"):
        item = json.loads(line)
        if str(item["_id"]) in held or stable_bucket(str(item["_id"]), 10):
            continue
        paras = _paragraphs([str(item["text"])])
        if paras and len(paras[0]) >= 3:
            docs.append(Doc(f"scifact:{item['_id']}", paras))
        if len(docs) >= limit:
            break
    return docs


# ---- edits ---------------------------------------------------------------------------------

_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\b")
_NAME = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w'-]*)*")
_NEGATABLE = re.compile(
    r"\b(is|are|was|were|can|will|must|should|could|would|has been|have been)\b"
)
_NEGATED = re.compile(
    r"\b(is|are|was|were|can|will|must|should|could|would|does|do|did) not\b|\b(cannot|never)\b"
)
_FLIPS = {
    "must": "may", "may": "must", "always": "never", "never": "always", "all": "some",
    "some": "all", "required": "optional", "optional": "required", "increase": "decrease",
    "decrease": "increase", "increased": "decreased", "decreased": "increased", "before": "after",
    "after": "before", "higher": "lower", "lower": "higher", "more": "fewer", "first": "last",
    "only": "also", "most": "few", "many": "few", "larger": "smaller", "smaller": "larger",
    "should": "need not", "often": "rarely", "both": "neither", "every": "no",
}  # fmt: skip
_FLIP_WORD = re.compile(r"\b(" + "|".join(map(re.escape, _FLIPS)) + r")\b")


def _names(s: str) -> list[str]:
    """Capitalised spans that are not just the sentence's first word."""
    out = []
    for m in _NAME.finditer(s):
        if m.start() == 0 and " " not in m.group(0):
            continue
        out.append(m.group(0))
    return out


def change_number(s: str, rng: random.Random) -> str | None:
    nums = list(_NUMBER.finditer(s))
    if not nums:
        return None
    m = rng.choice(nums)
    text = m.group(0)
    digits = [i for i, ch in enumerate(text) if ch.isdigit()]
    i = rng.choice(digits)
    new = str((int(text[i]) + rng.randint(1, 8)) % 10)
    if i == 0 and new == "0" and len(digits) > 1:
        new = "1"
    return s[: m.start()] + text[:i] + new + text[i + 1 :] + s[m.end() :]


def swap_entity(s: str, doc_names: list[str], rng: random.Random) -> str | None:
    mine = _names(s)
    others = [n for n in doc_names if n not in s and n.lower() not in s.lower()]
    if not mine or not others:
        return None
    old = rng.choice(mine)
    return s.replace(old, rng.choice(others), 1)


def swap_roles(s: str, rng: random.Random) -> str | None:
    """Two different names (or numbers) of the sentence trade places."""
    spans = [m for m in _NAME.finditer(s) if m.start() > 0] or list(_NUMBER.finditer(s))
    distinct = {m.group(0) for m in spans}
    if len(distinct) < 2:
        return None
    a, b = rng.sample(sorted(distinct), 2)
    return s.replace(a, "\x00").replace(b, a).replace("\x00", b)


def negate(s: str, rng: random.Random) -> str | None:
    m = _NEGATED.search(s)
    if m and rng.random() < 0.5:
        word = m.group(0)
        plain = {"cannot": "can", "never": "always"}.get(word, word.replace(" not", ""))
        if plain in {"does", "do", "did"}:
            return None  # "does not run" -> "does run" reads wrong; skip
        return s[: m.start()] + plain + s[m.end() :]
    m = _NEGATABLE.search(s)
    if not m:
        return None
    return s[: m.end()] + " not" + s[m.end() :]


def flip_word(s: str, rng: random.Random) -> str | None:
    hits = list(_FLIP_WORD.finditer(s))
    if not hits:
        return None
    m = rng.choice(hits)
    return s[: m.start()] + _FLIPS[m.group(0)] + s[m.end() :]


def _lower_first(s: str) -> str:
    return s[0].lower() + s[1:] if s[:2].isupper() is False and s[:1].isupper() else s


def fuse(a: str, b: str) -> str:
    return a.rstrip(" .") + ", and " + _lower_first(b)


def shorten(s: str) -> str | None:
    """The sentence up to a clause boundary: says less, all of it supported."""
    cut = [m.start() for m in re.finditer(r",\s+(?:which|while|and|but|where|although|as)\b", s)]
    cut = [c for c in cut if len(s[:c].split()) >= 6]
    return s[: cut[0]] + "." if cut else None


# ---- generation ----------------------------------------------------------------------------


def synthetic_pairs(
    docs: list[Doc], count: Callable[[str], int], *, per_sentence: float, seed: int
) -> Iterator[tuple[str, Pair]]:
    """About `per_sentence` pairs per sentence of each document (at least 2, at most 300 a
    document), half supported, half not. Split: 'dev' for sha256 bucket 0 of 20 of the
    document name."""
    rng = random.Random(seed)
    all_names = {
        d.name: sorted({n for p in d.paragraphs for s in p for n in _names(s)}) for d in docs
    }
    for doc in docs:
        split = "dev" if stable_bucket(doc.name, 20) == 0 else "train"
        source = "synthetic-" + doc.name.split(":")[0]
        others = [d for d in docs if d.name != doc.name]
        paras = [p for p in doc.paragraphs]
        n_sent = sum(len(p) for p in doc.paragraphs)
        for _ in range(min(300, max(2, round(per_sentence * n_sent)))):
            para = rng.choice(paras)
            start = rng.randrange(len(para))
            passage = list(para[start : start + rng.randint(1, 4)])
            premise = " ".join(passage)
            s = rng.choice(passage)

            def out(
                claim: str | None, label: int, kind: str, premise: str = premise
            ) -> Iterator[tuple[str, Pair]]:
                if claim and claim.strip():
                    w = window(claim, premise, count=count, budget=PREMISE_BUDGET)
                    yield split, Pair(w, claim, label, source, kind)

            def negative(kind: str) -> str | None:
                if kind == "number":
                    return change_number(s, rng)
                if kind == "entity":
                    return swap_entity(s, all_names[doc.name], rng)
                if kind == "roles":
                    return swap_roles(s, rng)
                if kind == "negation":
                    return negate(s, rng)
                if kind == "modal-qualifier":
                    return flip_word(s, rng)
                other = rng.choice(rng.choice(others).paragraphs)
                return fuse(s, rng.choice(other))  # fuse-extrinsic: always possible

            r = rng.random()
            # supported (half)
            if r < 0.18:
                yield from out(s, 1, "copy")
            elif r < 0.26:
                yield from out(shorten(s) or s, 1, "shorten")
            elif r < 0.36 and len(passage) >= 2:
                i = rng.randrange(len(passage) - 1)
                yield from out(fuse(passage[i], passage[i + 1]), 1, "fuse-supported")
            elif r < 0.50:
                yield from out(s, 1, "in-long-evidence", premise=doc.text)
            elif r < 0.58:  # not supported: the claim is right, the premise is not its source
                rest = [x for p in paras for x in p if x not in passage]
                if rest:
                    far = " ".join(rng.sample(rest, min(4, len(rest))))
                    yield from out(s, 0, "other-passage", premise=far)
            else:  # not supported: one edit, the first of a shuffled list that applies
                kinds = ["number", "entity", "roles", "negation", "modal-qualifier"]
                rng.shuffle(kinds)
                for kind in [*kinds, "fuse-extrinsic"]:
                    claim = negative(kind)
                    if claim and claim != s:
                        yield from out(claim, 0, kind)
                        break


def build_docs(data: Path) -> list[Doc]:
    return squad_docs(data) + fprime_docs(data) + scifact_docs(data)
