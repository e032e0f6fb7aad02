"""Train only the top of the encoder: the bottom layers run once, their output is cached.

On the project's 2-core machines a full fine-tune sees about 9 pairs a second, so the few
epochs a small cross-encoder needs take hours. With the embeddings and the bottom `n` of six
layers frozen, each pair's hidden states after layer `n` are computed once (no dropout, no
gradient) and kept as float16; every epoch then runs and back-propagates only the top
layers and the head: about 2x faster at n=3. The exported model is the whole encoder, the
same graph as a full fine-tune.
"""

from __future__ import annotations

from typing import Any

import torch


def _bert(model: torch.nn.Module) -> Any:
    if not hasattr(model, "encoder") or not hasattr(model, "classifier"):
        raise SystemExit("--freeze-layers needs --head mean")
    return model.encoder  # the BertModel inside MeanPoolClassifier


def freeze(model: torch.nn.Module, n: int) -> list[torch.nn.Parameter]:
    """Freeze embeddings and layers [0, n); return the parameters left to train."""
    bert = _bert(model)
    for p in bert.embeddings.parameters():
        p.requires_grad_(False)
    for layer in bert.encoder.layer[:n]:
        for p in layer.parameters():
            p.requires_grad_(False)
    return [p for p in model.parameters() if p.requires_grad]


def _mask(bert: Any, mask: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
    """The additive (batch, 1, 1, length) mask eager attention adds to its scores.

    Built here rather than with BertModel's private mask helper, whose signature changed
    between transformers releases (5.x added `position_ids`) and broke the cached path."""
    del bert
    return (1.0 - mask[:, None, None, :].to(hidden.dtype)) * torch.finfo(hidden.dtype).min


@torch.no_grad()
def bottom(model: torch.nn.Module, n: int, feats: dict[str, torch.Tensor]) -> list[torch.Tensor]:
    """Hidden states after layer n for each row, unpadded, float16."""
    bert = _bert(model)
    was = bert.training
    bert.eval()
    h = bert.embeddings(input_ids=feats["input_ids"], token_type_ids=feats["token_type_ids"])
    am = _mask(bert, feats["attention_mask"], h)
    for layer in bert.encoder.layer[:n]:
        h = layer(h, am)
    bert.train(was)
    lengths = feats["attention_mask"].sum(1).tolist()
    return [h[i, : int(k)].to(torch.float16).clone() for i, k in enumerate(lengths)]


def top(model: torch.nn.Module, n: int, cached: list[torch.Tensor]) -> torch.Tensor:
    """Logits from cached states: pad, run layers [n, end), mean-pool, classify."""
    bert = _bert(model)
    width = max(int(c.shape[0]) for c in cached)
    h = torch.zeros((len(cached), width, cached[0].shape[1]), dtype=torch.float32)
    mask = torch.zeros((len(cached), width), dtype=torch.long)
    for i, c in enumerate(cached):
        h[i, : c.shape[0]] = c.float()
        mask[i, : c.shape[0]] = 1
    am = _mask(bert, mask, h)
    for layer in bert.encoder.layer[n:]:
        h = layer(h, am)
    m = mask.unsqueeze(-1).to(h.dtype)
    pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
    logits: torch.Tensor = model.classifier(model.dropout(pooled))  # type: ignore[operator]
    return logits
