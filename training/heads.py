"""The cross-encoder's classification heads.

`cls`: transformers' BertForSequenceClassification (pooler over [CLS], then a linear layer).
`mean`: the mean of the last hidden states over the attention mask, then a linear layer. The
MiniLM of all-MiniLM-L6-v2 was trained with mean pooling (its [CLS] never was), so the mean
starts from a representation the base weights already shape.

Both return an object with `.logits` (batch, 2) and save to / load from one folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch

LABELS = {0: "ungrounded", 1: "supported"}  # one label names support: the loader's contract


class MeanPoolClassifier(torch.nn.Module):
    def __init__(self, encoder: Any) -> None:
        super().__init__()
        self.encoder = encoder
        self.config = encoder.config
        self.dropout = torch.nn.Dropout(0.1)
        self.classifier = torch.nn.Linear(encoder.config.hidden_size, 2)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor,
    ) -> SimpleNamespace:
        hidden = self.encoder(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        )[0]  # last hidden states, with or without return_dict
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return SimpleNamespace(logits=self.classifier(self.dropout(pooled)))

    def save_pretrained(self, folder: str) -> None:
        self.encoder.save_pretrained(folder)
        torch.save(self.classifier.state_dict(), Path(folder) / "head.pt")
        cfg = json.loads((Path(folder) / "config.json").read_text("utf-8"))
        cfg.update({"citebound_head": "mean", "id2label": {str(k): v for k, v in LABELS.items()}})
        (Path(folder) / "config.json").write_text(json.dumps(cfg, indent=1) + "\n")


def build(base: str, head: str) -> torch.nn.Module:
    """A fresh classifier over the base weights in `base`."""
    from transformers import AutoModel, AutoModelForSequenceClassification

    # Eager attention: torch's SDPA backward is 4x slower on CPU here (2.4 vs 9.7 pairs/s,
    # batch 16 x 128 tokens, 2 cores); the math is the same.
    if head == "mean":
        return MeanPoolClassifier(AutoModel.from_pretrained(base, attn_implementation="eager"))
    model: torch.nn.Module = AutoModelForSequenceClassification.from_pretrained(
        base,
        num_labels=2,
        id2label=LABELS,
        label2id={v: k for k, v in LABELS.items()},
        attn_implementation="eager",
    )
    return model


class Logits(torch.nn.Module):
    """Either head as a function of three id tensors to the logits tensor (for the export)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor) -> torch.Tensor:  # fmt: skip
        out = self.model(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        )
        return out.logits if hasattr(out, "logits") else out[0]


def load(folder: Path) -> torch.nn.Module:
    """The classifier `save_pretrained` wrote to `folder`, in eval mode."""
    from transformers import AutoModel, AutoModelForSequenceClassification

    cfg = json.loads((folder / "config.json").read_text("utf-8"))
    if cfg.get("citebound_head") == "mean":
        model = MeanPoolClassifier(
            AutoModel.from_pretrained(str(folder), attn_implementation="eager")
        )
        model.classifier.load_state_dict(torch.load(folder / "head.pt", weights_only=True))
        return model.eval()
    loaded: torch.nn.Module = AutoModelForSequenceClassification.from_pretrained(
        str(folder), attn_implementation="eager"
    ).eval()
    return loaded
