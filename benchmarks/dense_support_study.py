"""Study (not a shipped check): does dense similarity from the packaged MiniLM lift the support rule?

    CITEBOUND_SHARED_DATA=../shared/data PYTHONPATH=src \\
        python benchmarks/dense_support_study.py [--limit N] [--holdout] [--extractive]

Nothing here is used by the validator or any preset; it answers issue 14's open question
(summarization balanced accuracy >= 0.75) for the one allowed signal never measured for
accuracy. Steps:

1. For every cited sentence of the right and hallucinated HaluEval outputs (QA and
   summarization, evidence = the item's knowledge as one chunk `[C0]`, as in fit_support.py),
   the real validator's `support_features` (strict-v1's window and weights) give the lexical
   rule's score z split in two: the hard part (missing names or numbers, polarity flips, slot
   and word swaps: weight 60, they fail a sentence whatever else it has) and the soft rest.
2. The packaged MiniLM (int8 ONNX) embeds each sentence, its best lexical window and every
   evidence sentence (vectors cached under /tmp/dense-cache). Dense features per sentence:
   `cos_window` (sentence vs best window), `cos_max` (max over evidence sentences), `maxmin`
   (max over evidence sentences of min(content-word coverage, cosine)).
3. A sentence passes unless it is hard-failed or
   `a·tanh(z_soft / 8) + b·cos_window + c·cos_max + d·maxmin + e < 0`; an answer is flagged
   when one sentence fails (quotations always pass, as in the validator). The weights are chosen
   on a fixed grid by two-fold cross-validation inside the FIT half (even items), maximising
   summarization balanced accuracy subject to QA caught >= 0.90 and right QA passed >= 0.95
   (and, with --extractive, every SQuAD/F´ extractive answer passing).
4. With --holdout, the rule chosen on the whole fit half is scored once on the odd items.

Options: --soft-names also fits the weight of a missing name (a hard fail in strict-v1);
--diagnose prints each feature's AUC alone and the CV without the QA constraint; --cost the CPU
time (time.process_time) of the dense features for a five-sentence summary answer. One
process, no parallel jobs; about two minutes of CPU for the fit half once vectors are cached.
Results (the numbers quoted) are in benchmarks/results/validation_rounds.md, "Dense similarity
was measured and left out"; the rule is docs/validation.md "Dense similarity is not used".
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import pickle
import re
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from citebound.eval.data import dataset_dir
from citebound.eval.grounding import cited, fit_half, holdout_half, load_split
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle
from citebound.text import split_sentences
from citebound.text.sanitize import safe_normalize_v1
from citebound.validate.analysis import cited_sentences, support_params
from citebound.validate.support import SupportFeatures, SupportParams, support_features
from citebound.validate.view import EvidenceView

CACHE = Path("/tmp/dense-cache")
HARD = 50.0  # weights at or above this are the rule's hard fails (60 in strict-v1)
_WORD = re.compile(r"[a-z0-9]+")
# Function words left out of the per-evidence-sentence coverage of `maxmin` (a plain list:
# this is a study, the validator has its own lemma-based content words).
_STOP_WORDS = (
    "a an the of to in on at for by with from and or but is are was were be been being it its "
    "this that these those as he she they his her their them i we you our your has have had "
    "not no do does did will would can could should may might also than then there which who "
    "whom what when where why how all any some more most such into over after before about"
)
_STOP = frozenset(_STOP_WORDS.split())


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class VectorCache:
    """MiniLM vectors by text hash, persisted as shards in /tmp/dense-cache."""

    def __init__(self) -> None:
        CACHE.mkdir(parents=True, exist_ok=True)
        self.vec: dict[str, npt.NDArray[np.float32]] = {}
        for shard in sorted(CACHE.glob("shard-*.pkl")):
            self.vec.update(pickle.loads(shard.read_bytes()))
        self._embedder = None

    def fill(self, texts: Iterable[str], chunk: int = 512) -> None:
        todo = sorted({t for t in texts if _key(t) not in self.vec})
        if not todo:
            return
        from citebound.index.embedder import default_embedder

        embedder = default_embedder()
        for i in range(0, len(todo), chunk):
            part = todo[i : i + chunk]
            m = embedder.embed(part)
            new = {_key(t): m[j].astype(np.float32) for j, t in enumerate(part)}
            self.vec.update(new)
            n = len(list(CACHE.glob("shard-*.pkl")))
            (CACHE / f"shard-{n:05d}.pkl").write_bytes(pickle.dumps(new))
            print(f"embedded {i + len(part)}/{len(todo)}", file=sys.stderr, flush=True)

    def get(self, text: str) -> npt.NDArray[np.float32]:
        return self.vec[_key(text)]


@dataclass
class Sentence:
    text: str
    span: str
    z_soft: float
    hard: bool
    quotation: bool
    words: frozenset[str]
    names: int  # missing names: hard in strict-v1, a grid weight here with --soft-names


@dataclass
class Answer:
    sentences: list[Sentence]
    evidence: list[str]  # evidence sentences
    ev_words: list[frozenset[str]] = field(default_factory=list)


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _STOP)


def _sentence(f: SupportFeatures, text: str, params: SupportParams) -> Sentence:
    w = params.weights
    terms = {
        "intercept": 1.0,
        "coverage": f.coverage,
        "window_coverage": f.window_coverage,
        "missing_words": -f.missing_words,
        "missing_names": -len(f.missing_names),
        "names_outside_window": -len(f.names_outside_window),
        "missing_numbers": -len(f.missing_numbers),
        "polarity_flip": -float(bool(f.polarity_flip)),
        "missing_tokens": -f.missing_tokens,
        "echo_missing": -f.echo * f.absent_tokens,
        "slot_swap": -len(f.slot_swaps),
        "word_swap": -len(f.word_swaps),
        "echo_scattered": -f.echo * f.scattered,
    }
    soft = sum(getattr(w, k) * v for k, v in terms.items() if getattr(w, k) < HARD)
    hard = any(getattr(w, k) >= HARD and v != 0 for k, v in terms.items() if k != "missing_names")
    names = len(f.missing_names) if w.missing_names >= HARD else 0
    return Sentence(text, f.best_span or text, soft, hard, f.quotation, _words(text), names)


def _answer(view: EvidenceView, answer: str, params: SupportParams) -> Answer:
    sents, evidence = [], ""
    for body, ev in cited_sentences(view, answer):
        f = support_features(body, ev, params, view.question)
        sents.append(_sentence(f, body, params))
        evidence = ev
    ev_sents = [s for s in split_sentences(evidence) if s.strip()] if evidence else []
    return Answer(sents, ev_sents, [_words(s) for s in ev_sents])


def _halueval(split: str, half: str, params: SupportParams, limit: int | None) -> list[Answer]:
    """Right answers then hallucinated ones (same item order); cached per split/half."""
    path = CACHE / f"features-{split}-{half}-{limit}.pkl"
    if path.exists():
        out: list[Answer] = pickle.loads(path.read_bytes())
        return out
    folder = dataset_dir("halueval-dev")
    assert folder is not None, "../shared/data/halueval-dev is absent"
    policy = load_policy("strict-v1")
    items = load_split(folder, split, limit)
    items = fit_half(items) if half == "fit" else holdout_half(items)
    right, wrong = [], []
    for item in items:
        bundle = make_answer_bundle(
            [safe_normalize_v1(item.knowledge)], question=item.question, policy=policy
        )
        view = EvidenceView.from_bundle(bundle)
        right.append(_answer(view, cited(item.right), params))
        wrong.append(_answer(view, cited(item.hallucinated), params))
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(right + wrong))
    print(f"features: {split}/{half} {len(items)} items", file=sys.stderr, flush=True)
    return right + wrong


def _extractive(params: SupportParams, limit: int | None) -> list[Answer]:
    path = CACHE / f"features-extractive-{limit}.pkl"
    if path.exists():
        out: list[Answer] = pickle.loads(path.read_bytes())
        return out
    from citebound.eval.grounding import fprime_cases, squad_cases
    from citebound.llm.extractive import ExtractiveProvider

    policy = load_policy("strict-v1")
    provider = ExtractiveProvider()
    squad, fprime = dataset_dir("squad2-dev"), dataset_dir("fprime-docs")
    assert squad is not None and fprime is not None
    out = []
    for case in itertools.chain(squad_cases(squad, limit), fprime_cases(fprime, limit)):
        texts = [safe_normalize_v1(t) for t in case.texts if t.strip()]
        bundle = make_answer_bundle(texts, question=case.question, policy=policy)
        answer = provider.answer(bundle, policy.refusal.model_text)
        if answer != policy.refusal.model_text:
            out.append(_answer(EvidenceView.from_bundle(bundle), answer, params))
    path.write_bytes(pickle.dumps(out))
    return out


def _needs(answers: Sequence[Answer]) -> Iterable[str]:
    """Texts to embed: only sentences the dense term can decide (not quotations, not hard)."""
    for a in answers:
        live = [s for s in a.sentences if not s.quotation and not s.hard]
        if live:
            yield from a.evidence
            for s in live:
                yield s.text
                yield s.span


# Per sentence: tanh(z_soft/8), cos_window, cos_max, maxmin; -inf row = hard fail, +inf = pass.
F64 = npt.NDArray[np.float64]


def _matrix(answers: Sequence[Answer], vc: VectorCache) -> tuple[F64, npt.NDArray[np.int64], F64]:
    rows: list[list[float]] = []
    idx: list[int] = []
    fix: list[float] = []
    for n, a in enumerate(answers):
        live = any(not (s.quotation or s.hard) for s in a.sentences)
        ev = np.stack([vc.get(t) for t in a.evidence]) if live and a.evidence else None
        for s in a.sentences:
            idx.append(n)
            if s.quotation or s.hard:
                rows.append([0.0, 0.0, 0.0, 0.0, 0.0])
                fix.append(np.inf if s.quotation else -np.inf)
                continue
            v = vc.get(s.text)
            cw = float(v @ vc.get(s.span))
            cos = ev @ v if ev is not None else np.zeros(1)
            lex = np.array([len(s.words & w) / max(1, len(s.words)) for w in a.ev_words] or [0])
            mm = float(np.minimum(lex, cos).max())
            rows.append([np.tanh(s.z_soft / 8), cw, float(cos.max()), mm, -float(s.names)])
            fix.append(0.0)
    return (
        np.array(rows, dtype=np.float64).reshape(-1, 5),
        np.array(idx, dtype=np.int64),
        np.array(fix, dtype=np.float64),
    )


class Split:
    def __init__(self, answers: Sequence[Answer], vc: VectorCache, labelled: bool = True) -> None:
        self.x, self.idx, self.fix = _matrix(answers, vc)
        self.n = len(answers)
        half = self.n // 2
        self.y = np.r_[np.zeros(half, bool), np.ones(self.n - half, bool)] if labelled else None

    def lows(self, w: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Per answer, its weakest sentence's score before the intercept (an answer without
        scored sentences passes: +inf)."""
        z = np.where(self.fix == 0.0, self.x @ w, self.fix)
        low = np.full(self.n, np.inf)
        np.minimum.at(low, self.idx, z)
        return low

    def flagged(self, w: npt.NDArray[np.float64], e: float) -> npt.NDArray[np.bool_]:
        return np.asarray(self.lows(w) + e < 0)

    def rates(
        self, w: npt.NDArray[np.float64], e: float, sel: npt.NDArray[np.bool_]
    ) -> tuple[float, float]:
        """(caught, passed) on the items `sel` (a mask over items, applied to both outputs)."""
        c, p = self.rates_e(self.lows(w), np.array([e]), sel)
        return float(c[0]), float(p[0])

    def rates_e(
        self, low: npt.NDArray[np.float64], es: npt.NDArray[np.float64], sel: npt.NDArray[np.bool_]
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """(caught, passed) for every intercept in `es` at once."""
        half = self.n // 2
        f = low[None, :] + es[:, None] < 0
        return f[:, half:][:, sel].mean(axis=1), 1 - f[:, :half][:, sel].mean(axis=1)


# Directions (a, b, c, d) on a grid; the intercept e is scanned for each.
GRID_A = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)
GRID_D = (0.0, 1.0, 2.0, 4.0, 8.0)
GRID_E = np.arange(-12.0, 4.01, 0.125)
# Weight of a missing name: 100 is hard (above any sum of the other terms, at most 32); with
# --soft-names the grid lets the dense terms outweigh one missing name (CNN bylines).
GRID_H = [100.0]
GRID_H_SOFT = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 100.0)


Mask = npt.NDArray[np.bool_]
Rule = tuple[float, npt.NDArray[np.float64], float]  # (objective, weights, intercept)


def choose(
    summ: Split, qa: Split | None, ext: Split | None, ss: Mask, qs: Mask, dense: bool = True
) -> Rule:
    """Best (w, e) on the items masked by ss/qs: summarization balanced accuracy subject to
    QA caught >= 0.90, QA passed >= 0.95 (qa None: no QA constraint) and no extractive answer
    failing; ties keep the earliest grid point. `dense=False`: b = c = d = 0 (lexical only,
    the lexical score's scale, name weight and intercept still fitted)."""
    best = (-2.0, np.zeros(5), 0.0)
    for a, b, c, d, h in itertools.product(GRID_A, GRID_D, GRID_D, GRID_D, GRID_H):
        if (a == 0 and b == c == d == 0) or (not dense and (b or c or d)):
            continue
        w = np.array([a, b, c, d, h])
        sc, sp = summ.rates_e(summ.lows(w), GRID_E, ss)
        ok = np.ones(len(GRID_E), bool)
        if qa is not None:
            qc, qp = qa.rates_e(qa.lows(w), GRID_E, qs)
            ok &= (qp >= 0.95) & (qc >= 0.90)
        if ext is not None:
            ok &= ~(ext.lows(w)[None, :] + GRID_E[:, None] < 0).any(axis=1)
        score = np.where(ok, (sc + sp) / 2, -1.0)
        i = int(np.argmax(score))
        if score[i] > best[0] + 1e-9:
            best = (float(score[i]), w, float(GRID_E[i]))
    return best


def _report(name: str, sp: Split, w: npt.NDArray[np.float64], e: float, sel: Mask) -> str:
    c, p = sp.rates(w, e, sel)
    return f"{name}: caught {c:.3f} passed {p:.3f} balanced {(c + p) / 2:.3f}"


def _cost(answers: Sequence[Answer]) -> None:
    """CPU ms per five-sentence summary answer: embed its sentences, windows and the article's
    sentences (the article once, as a first-time request would), then the dense features."""
    from citebound.index.embedder import default_embedder

    embedder = default_embedder()
    five = [a for a in answers if len(a.sentences) >= 5][:30]
    if not five:
        five = [a for a in answers if a.sentences][:30]
    embedder.embed(["warm up"])
    cpu, cpu_no_article = [], []
    for a in five:
        s = [x.text for x in a.sentences[:5]]
        c0 = time.process_time_ns()
        m = embedder.embed(s + [x.span for x in a.sentences[:5]])
        c1 = time.process_time_ns()
        ev = embedder.embed(a.evidence)
        _ = (ev @ m[:5].T).max(axis=0)
        c2 = time.process_time_ns()
        cpu_no_article.append((c1 - c0) / 1e6)
        cpu.append((c2 - c0) / 1e6)
    print(
        f"cost ({len(five)} answers, MiniLM int8, CPU process_time): sentences+windows "
        f"median {statistics.median(cpu_no_article):.0f} ms; with the article's "
        f"{statistics.median(len(a.evidence) for a in five):.0f} sentences "
        f"median {statistics.median(cpu):.0f} ms per answer"
    )


def _auc(v: npt.NDArray[np.float64], y: Mask) -> float:
    """P(score of a positive > score of a negative), ties counted half."""
    pos, neg = v[y], v[~y]
    return float(((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])).mean())


def _diagnose(summ: Split, qa: Split, sel: Mask) -> None:
    """How well each feature alone separates right from hallucinated outputs (answer-level
    minimum over sentences, answers whose every sentence is scored), and the 2-fold CV of
    summarization with the QA constraint dropped (is QA what blocks a dense gain?)."""
    for name, sp in (("summarization", summ), ("qa", qa)):
        scored = np.ones(sp.n, bool)
        np.logical_and.at(scored, sp.idx, sp.fix == 0.0)
        scored &= np.bincount(sp.idx, minlength=sp.n) > 0
        y = np.arange(sp.n) < sp.n // 2  # right outputs first
        aucs = []
        for k, feat in enumerate(("tanh(z_soft/8)", "cos_window", "cos_max", "maxmin")):
            low = np.full(sp.n, np.inf)
            np.minimum.at(low, sp.idx, np.where(sp.fix == 0.0, sp.x[:, k], np.inf))
            aucs.append(f"{feat} {_auc(low[scored], y[scored]):.3f}")
        print(
            f"AUC right > hallucinated, {name} fit half ({int(scored[y].sum())} right, "
            f"{int(scored[~y].sum())} hallucinated fully scored): " + ", ".join(aucs)
        )
    for dense in (False, True):
        cv = []
        for k in (0, 1):
            ss = sel if k == 0 else ~sel
            _, w, e = choose(summ, None, None, ss, ss, dense=dense)
            c, p = summ.rates(w, e, ~ss)
            cv.append((c + p) / 2)
        kind = "dense" if dense else "lexical"
        print(f"2-fold CV summarization without the QA constraint, {kind}: {np.mean(cv):.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--holdout", action="store_true", help="Score the chosen rule on odd items.")
    ap.add_argument("--extractive", action="store_true", help="Add the SQuAD/F´ constraint.")
    ap.add_argument("--cost", action="store_true")
    ap.add_argument("--soft-names", action="store_true", help="Fit a missing name's weight.")
    ap.add_argument("--diagnose", action="store_true", help="Per-feature AUCs, CV without QA.")
    args = ap.parse_args()
    params = support_params(load_policy("strict-v1"))
    if args.soft_names:
        GRID_H[:] = GRID_H_SOFT
    vc = VectorCache()
    feats = {s: _halueval(s, "fit", params, args.limit) for s in ("summarization", "qa")}
    ext_answers = _extractive(params, args.limit) if args.extractive else []
    for answers in (*feats.values(), ext_answers):
        vc.fill(_needs(answers))
    summ, qa = Split(feats["summarization"], vc), Split(feats["qa"], vc)
    ext = Split(ext_answers, vc, labelled=False) if ext_answers else None
    lexical = (
        np.array([1.0, 0.0, 0.0, 0.0, 100.0]),
        0.0,
    )  # tanh(z_soft/8) < 0  <=>  the shipped rule
    all_s, all_q = np.ones(summ.n // 2, bool), np.ones(qa.n // 2, bool)
    print(_report("fit half, lexical rule, summarization", summ, *lexical, all_s))
    print(_report("fit half, lexical rule, qa", qa, *lexical, all_q))
    # Two-fold CV inside the fit half: items split by position (alternate even items).
    fold_s = np.arange(summ.n // 2) % 2 == 0
    fold_q = np.arange(qa.n // 2) % 2 == 0
    cv = []
    for k in (0, 1):
        ss, qs = (fold_s, fold_q) if k == 0 else (~fold_s, ~fold_q)
        rules = (
            ("lexical", lexical),
            ("lexical re-thresholded", choose(summ, qa, ext, ss, qs, dense=False)[1:]),
            ("dense", choose(summ, qa, ext, ss, qs)[1:]),
        )
        for name, (w, e) in rules:
            c, p = summ.rates(w, e, ~ss)
            qc, qp = qa.rates(w, e, ~qs)
            print(
                f"fold {k} {name}: w={np.round(w, 3).tolist()} e={e:.3f} -> other fold "
                f"summarization balanced {(c + p) / 2:.3f} (caught {c:.3f} passed {p:.3f}); "
                f"qa caught {qc:.3f} passed {qp:.3f}",
                flush=True,
            )
            if name == "dense":
                cv.append((c + p) / 2)
    print(f"2-fold CV summarization balanced (dense rule): {np.mean(cv):.3f}")
    if args.diagnose:
        _diagnose(summ, qa, fold_s)
    _, lw, le = choose(summ, qa, ext, all_s, all_q, dense=False)
    print(f"lexical re-thresholded on the whole fit half: w={lw.tolist()} e={le}")
    print(_report("fit half, lexical re-thresholded, summarization", summ, lw, le, all_s))
    score, w, e = choose(summ, qa, ext, all_s, all_q)
    print(f"chosen on the whole fit half: w={w.tolist()} e={e} (fit objective {score:.3f})")
    print(_report("fit half, dense rule, summarization", summ, w, e, all_s))
    print(_report("fit half, dense rule, qa", qa, w, e, all_q))
    if ext is not None:
        print(f"extractive answers failing: {int(ext.flagged(w, e).sum())} of {ext.n}")
    if args.holdout:
        held = {s: _halueval(s, "holdout", params, args.limit) for s in ("summarization", "qa")}
        for answers in held.values():
            vc.fill(_needs(answers))
        hs, hq = Split(held["summarization"], vc), Split(held["qa"], vc)
        ones_s, ones_q = np.ones(hs.n // 2, bool), np.ones(hq.n // 2, bool)
        for name, (ww, ee) in (
            ("lexical", lexical),
            ("lexical re-thresholded", (lw, le)),
            ("dense", (w, e)),
        ):
            print(_report(f"HOLDOUT {name} summarization", hs, ww, ee, ones_s))
            print(_report(f"HOLDOUT {name} qa", hq, ww, ee, ones_q))
    if args.cost:
        _cost(feats["summarization"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
