"""Fine-tune a BERT-family encoder as a two-class cross-encoder on (premise, claim, label) pairs.

    python -m training.finetune --data build/verifier --out build/verifier/model \
        [--epochs 2] [--batch 16] [--lr 5e-5] [--max-length 256] [--evals-per-epoch 3]

CPU by default (torch 2.13.0); a CUDA device is used only when asked (`--device cuda`), and
the result does not depend on it beyond float rounding. Fixed seeds; batches are drawn from a
seeded shuffle and grouped by length (less padding, same examples per epoch). After every
1/`evals-per-epoch` of the run the first `--curve-pairs` dev pairs are scored (loss, ROC AUC, balanced accuracy at 0.5) and
the best checkpoint by dev AUC is kept: curve.json records every point.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer

from training import frozen, heads
from training.common import Pair, base_model_dir, read_jsonl, roc_auc


def balanced(
    scores: list[float], labels: list[int], threshold: float
) -> tuple[float, float, float]:
    """(caught = unsupported scored below, passed = supported at or above, balanced)."""
    neg = [s for s, y in zip(scores, labels, strict=True) if y == 0]
    pos = [s for s, y in zip(scores, labels, strict=True) if y == 1]
    caught = sum(s < threshold for s in neg) / max(1, len(neg))
    passed = sum(s >= threshold for s in pos) / max(1, len(pos))
    return caught, passed, (caught + passed) / 2


class Encoder:
    """Pairs -> padded id tensors, the way the run-time verifier tokenizes them."""

    def __init__(self, tokenizer_file: Path, max_length: int) -> None:
        self.tok = Tokenizer.from_file(str(tokenizer_file))
        self.tok.no_padding()
        self.tok.enable_truncation(max_length=max_length, strategy="longest_first")

    def __call__(self, pairs: list[Pair]) -> dict[str, torch.Tensor]:
        encs = self.tok.encode_batch([(p.premise, p.claim) for p in pairs])
        n = max(len(e.ids) for e in encs)
        ids = torch.zeros((len(encs), n), dtype=torch.long)
        types = torch.zeros_like(ids)
        mask = torch.zeros_like(ids)
        for i, e in enumerate(encs):
            k = len(e.ids)
            ids[i, :k] = torch.tensor(e.ids)
            types[i, :k] = torch.tensor(e.type_ids)
            mask[i, :k] = 1
        return {"input_ids": ids, "token_type_ids": types, "attention_mask": mask}


def batches(pairs: list[Pair], size: int, rng: random.Random, enc: Encoder) -> list[list[Pair]]:
    """Seeded shuffle, then length-sorted within windows of 50 batches, then shuffled."""
    order = pairs[:]
    rng.shuffle(order)
    lengths = {id(p): len(p.premise) + len(p.claim) for p in order}
    out: list[list[Pair]] = []
    span = size * 50
    for k in range(0, len(order), span):
        group = sorted(order[k : k + span], key=lambda p: lengths[id(p)])
        out.extend(group[i : i + size] for i in range(0, len(group), size))
    rng.shuffle(out)
    return out


@torch.no_grad()
def score(model: torch.nn.Module, pairs: list[Pair], enc: Encoder, device: str) -> list[float]:
    model.eval()
    out: list[float] = []
    idx = sorted(range(len(pairs)), key=lambda i: len(pairs[i].premise) + len(pairs[i].claim))
    got: dict[int, float] = {}
    for k in range(0, len(idx), 64):
        chunk = idx[k : k + 64]
        feats = {n: t.to(device) for n, t in enc([pairs[i] for i in chunk]).items()}
        probs = torch.softmax(model(**feats).logits.float(), dim=-1)[:, 1].tolist()
        got.update(zip(chunk, probs, strict=True))
    out = [got[i] for i in range(len(pairs))]
    model.train()
    return out


def train(args: argparse.Namespace) -> dict[str, object]:
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    base = Path(args.base) if args.base else base_model_dir()
    train_pairs = list(read_jsonl(args.data / "train.jsonl"))
    # Rule-made edits teach surface changes; too large a share teaches "any rewording is
    # unsupported" (run f3). Keep a seeded fraction of them.
    if args.synthetic_keep < 1.0:
        keep = random.Random(args.seed)
        train_pairs = [p for p in train_pairs if not p.source.startswith("synthetic-")
                       or keep.random() < args.synthetic_keep]  # fmt: skip
    # Pairs written in the MiniCheck manner teach what the rules cannot (paraphrase and
    # recombination, one subtle error): each is seen `written_repeat` times an epoch.
    train_pairs += [p for p in train_pairs if p.source.startswith("written-")] * (
        args.written_repeat - 1
    )
    dev_pairs = list(read_jsonl(args.data / "dev.jsonl"))
    if args.limit:
        train_pairs, dev_pairs = train_pairs[: args.limit], dev_pairs[: args.limit]
    enc = Encoder(base / "tokenizer.json", args.max_length)
    model = heads.build(str(base), args.head).to(args.device)
    rng = random.Random(args.seed)
    per_epoch = math.ceil(len(train_pairs) / args.batch)
    total = per_epoch * args.epochs if not args.max_steps else args.max_steps
    params = frozen.freeze(model, args.freeze_layers) if args.freeze_layers else None
    cache: dict[tuple[str, str], torch.Tensor] = {}
    if args.freeze_layers:
        unique = sorted({(p.premise, p.claim) for p in train_pairs})
        for k in range(0, len(unique), 64):
            chunk = [Pair(a, b, 0, "", "") for a, b in unique[k : k + 64]]
            got = frozen.bottom(model, args.freeze_layers, enc(chunk))
            cache.update(zip(unique[k : k + 64], got, strict=True))
        print(f"cached layer {args.freeze_layers} states of {len(cache)} pairs", flush=True)
    opt = torch.optim.AdamW(
        params if params is not None else model.parameters(), lr=args.lr, weight_decay=0.01
    )
    warm = max(1, int(args.warmup * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    every = max(1, min(per_epoch, total) // args.evals_per_epoch)
    curve_pairs = dev_pairs[: args.curve_pairs] if args.curve_pairs else dev_pairs
    curve: list[dict[str, float]] = []
    best = -1.0
    step, t0, seen = 0, time.time(), 0
    model.train()
    args.out.mkdir(parents=True, exist_ok=True)
    # The tokenizer first, so a checkpoint taken while the run goes on is complete.
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        if (base / name).is_file():
            (args.out / name).write_bytes((base / name).read_bytes())
    for _epoch in range(args.epochs):
        for batch in batches(train_pairs, args.batch, rng, enc):
            y = torch.tensor([p.label for p in batch], device=args.device)
            if args.freeze_layers:
                cached = [cache[(p.premise, p.claim)] for p in batch]
                logits = frozen.top(model, args.freeze_layers, cached)
            else:
                feats = {n: t.to(args.device) for n, t in enc(batch).items()}
                logits = model(**feats).logits
            loss = torch.nn.functional.cross_entropy(logits, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            seen += len(batch)
            if step % 50 == 0:
                rate = seen / (time.time() - t0)
                print(f"step {step}/{total} loss {loss.item():.4f} {rate:.1f} pairs/s", flush=True)
            if step % every == 0 or step == total:
                s = score(model, curve_pairs, enc, args.device)
                labels = [p.label for p in curve_pairs]
                auc = roc_auc(s, labels)
                caught, passed, bal = balanced(s, labels, 0.5)
                point = {"step": step, "epoch": round(step / per_epoch, 3), "dev_auc": auc,
                         "dev_caught": caught, "dev_passed": passed, "dev_balanced": bal,
                         "train_loss": float(loss.item())}  # fmt: skip
                for src in sorted({p.source for p in curve_pairs}):
                    rows = [(x, p.label) for x, p in zip(s, curve_pairs, strict=True)
                            if p.source == src]  # fmt: skip
                    point[f"auc_{src}"] = roc_auc([r[0] for r in rows], [r[1] for r in rows])
                curve.append(point)
                print(json.dumps(point), flush=True)
                if auc > best:
                    best = auc
                    model.save_pretrained(str(args.out))
                    (args.out / "best.json").write_text(json.dumps(point) + "\n")
                (args.out / "curve.json").write_text(json.dumps(curve, indent=1) + "\n")
            if step >= total:
                break
        if step >= total:
            break
    summary = {"train_pairs": len(train_pairs), "dev_pairs": len(dev_pairs), "steps": step,
               "epochs": args.epochs, "batch": args.batch, "lr": args.lr, "seed": args.seed,
               "max_length": args.max_length, "head": args.head,
               "freeze_layers": args.freeze_layers, "seconds": round(time.time() - t0, 1),
               "best": curve and max(curve, key=lambda p: p["dev_auc"]), "curve": curve}  # fmt: skip
    (args.out / "training.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--base", default=None, help="base model folder (default: the MiniLM)")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--evals-per-epoch", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--threads", type=int, default=max(1, torch.get_num_threads()))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--limit", type=int, default=0, help="first N pairs only (smoke runs)")
    ap.add_argument("--max-steps", type=int, default=0)
    ap.add_argument("--written-repeat", type=int, default=2)
    ap.add_argument("--synthetic-keep", type=float, default=1.0,
                    help="seeded share of the rule-made (synthetic-*) pairs kept")  # fmt: skip
    ap.add_argument("--head", choices=("cls", "mean"), default="mean")
    ap.add_argument(
        "--freeze-layers",
        type=int,
        default=0,
        help="freeze embeddings and the bottom N layers (cached; mean head only)",
    )
    ap.add_argument("--warmup", type=float, default=0.1, help="share of steps warming up")
    ap.add_argument("--curve-pairs", type=int, default=600, help="dev pairs scored per point")
    return ap


if __name__ == "__main__":
    train(parser().parse_args())
