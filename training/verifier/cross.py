"""The verifier network: a plain cross-encoder, a few of all-MiniLM-L6-v2's layers reading the
pair together, pooled into one logit.

refrain already holds the bi-encoder cosine of every candidate (the index's own similarity), so
the network does not recompute it: it outputs only its own logit, and refrain scores a
candidate with `sigmoid(a * logit + c * cosine + d)`, where a, c and d are fitted on dev pairs
(`combine.py`) and recorded in manifest.json. The cross-encoder thus has to learn only what
cosine misses (a changed number, a negation, the other direction, another object).

- Input `[CLS] stored [SEP] new [SEP]` (all-MiniLM-L6-v2's uncased WordPiece tokenizer).
- Layers: a subset of MiniLM's six (default 0, 2, 4), full attention over both texts.
- Pooling: mean over the pair's tokens (MiniLM was trained with mean pooling, so the pooled
  state means something from the first step) concatenated with [CLS], then one linear layer.
- The word embeddings stay frozen (30k x 384 weights that would move little and cost most of
  the optimizer's memory traffic); position, type embeddings and the layers train.
"""
from __future__ import annotations

import copy

import torch
from torch import nn
from transformers import AutoModel


class CrossVerifier(nn.Module):
    def __init__(self, base_dir, layers=(0, 2, 4), pooling: str = "cls+mean"):
        super().__init__()
        bert = AutoModel.from_pretrained(base_dir)
        self.embeddings = bert.embeddings
        self.layers = nn.ModuleList([copy.deepcopy(bert.encoder.layer[i]) for i in layers])
        del bert
        for p in self.parameters():
            p.requires_grad_(True)
        self.embeddings.word_embeddings.weight.requires_grad_(False)
        d = self.embeddings.word_embeddings.weight.shape[1]
        self.pooling = pooling
        self.head = nn.Linear(2 * d if pooling == "cls+mean" else d, 1)
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)
        self.layers_of_base = list(layers)

    def forward(self, input_ids, attention_mask, token_type_ids):
        m = attention_mask.to(torch.float32)
        add = ((1.0 - m) * -1e4)[:, None, None, :]
        pos = torch.cumsum(torch.ones_like(input_ids), 1) - 1
        h = self.embeddings(input_ids=input_ids, token_type_ids=token_type_ids, position_ids=pos)
        for layer in self.layers:
            h = bert_layer(layer, h, add)
        w = m.unsqueeze(-1)
        mean = (h * w).sum(1) / w.sum(1).clamp(min=1.0)
        feats = mean if self.pooling == "mean" else torch.cat([h[:, 0], mean], -1)
        return self.head(feats)


def bert_layer(layer, h, add_mask):
    """One BERT layer (HF BertLayer weights) with an explicit additive attention mask.

    Written out so the ONNX export is plain MatMul/Softmax/LayerNorm, whatever attention
    implementation the installed transformers version would pick.
    """
    att = layer.attention.self
    b, s, d = h.shape
    nh = att.num_attention_heads
    hd = d // nh

    def split(x):
        return x.view(b, s, nh, hd).transpose(1, 2)

    q, k, v = split(att.query(h)), split(att.key(h)), split(att.value(h))
    scores = q @ k.transpose(-1, -2) * (hd ** -0.5) + add_mask
    ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
    out = layer.attention.output
    h = out.LayerNorm(out.dense(ctx) + h)
    inter = layer.intermediate.intermediate_act_fn(layer.intermediate.dense(h))
    o = layer.output
    return o.LayerNorm(o.dense(inter) + h)
