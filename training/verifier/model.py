"""The verifier network: a cross-encoder on top of the bi-encoder's own cosine.

A cross-encoder trained from all-MiniLM-L6-v2 on a few thousand pairs (what a shared CPU
affords) starts from nothing: the bi-encoder was trained with mean pooling, not for reading a
pair, and learns slowly. So the verifier keeps the bi-encoder's judgement and learns what it
misses:

    logit = scale * cos(u, v) + bias + cross(stored, new)

- cos(u, v): all-MiniLM-L6-v2 (6 layers, frozen) run on the pair in one pass with a
  block-diagonal attention mask (each text attends only to itself, the new text gets its own
  [CLS] and positions restarting at 0), mean-pooled per text: the cosine refrain retrieves
  with, computed in-graph.
- cross: a few of MiniLM's layers (trainable) reading both texts with full attention; its [CLS]
  state and the two texts' mean states feed a small head, initialised to zero so training starts
  exactly at calibrated cosine.
Inputs and output follow the verifier contract: input_ids, attention_mask, token_type_ids of
`[CLS] stored [SEP] new [SEP]`; output logits [batch, 1].
"""
from __future__ import annotations

import copy

import torch
from torch import nn
from transformers import AutoModel

from cross import bert_layer


def _embed(emb, ids, pos, types):
    x = emb.word_embeddings(ids) + emb.position_embeddings(pos) + emb.token_type_embeddings(types)
    return emb.LayerNorm(x)


def _mean(h, m):
    m = m.unsqueeze(-1).to(h.dtype)
    return (h * m).sum(1) / m.sum(1).clamp(min=1e-6)


class Verifier(nn.Module):
    def __init__(self, base_dir, layers=(0, 2, 4), bi_feats: bool = False):
        super().__init__()
        bi = AutoModel.from_pretrained(base_dir)
        self.bi_emb = bi.embeddings
        self.bi_layers = bi.encoder.layer
        for p in list(self.bi_emb.parameters()) + list(self.bi_layers.parameters()):
            p.requires_grad_(False)
        self.x_emb = copy.deepcopy(bi.embeddings)
        self.x_emb.word_embeddings = self.bi_emb.word_embeddings  # shared, frozen
        self.x_layers = nn.ModuleList([copy.deepcopy(bi.encoder.layer[i]) for i in layers])
        d = bi.config.hidden_size
        # bi_feats: the head also reads the bi-encoder's own text vectors (u*v, |u-v|)
        self.bi_feats = bi_feats
        self.head = nn.Sequential(nn.Linear((6 if bi_feats else 4) * d, 256), nn.GELU(), nn.Linear(256, 1))
        nn.init.zeros_(self.head[2].weight)
        nn.init.zeros_(self.head[2].bias)
        self.scale = nn.Parameter(torch.tensor(20.0))
        self.bias = nn.Parameter(torch.tensor(-16.0))
        # deepcopy kept the frozen flag of the bi-encoder's weights: the cross part must train
        for p in list(self.x_emb.parameters()) + list(self.x_layers.parameters()):
            p.requires_grad_(True)
        self.x_emb.word_embeddings.weight.requires_grad_(False)  # shared with the frozen bi-encoder
        self.layers_of_base = list(layers)

    def cosine(self, input_ids, attention_mask, token_type_ids):
        """The bi-encoder cosine of the two texts of each pair, in one pass.

        The new text gets a [CLS] of its own, appended as an extra column at position 0
        (attention does not care where a token sits, only its position embedding does), so each
        text is encoded exactly as the embedder encodes it alone.
        """
        b = input_ids.shape[0]
        m = attention_mask.to(torch.float32)
        seg_b = m * (token_type_ids == 1).to(torch.float32)
        seg_a = m - seg_b
        pos = (torch.cumsum(seg_a, 1) - 1) * seg_a + torch.cumsum(seg_b, 1) * seg_b
        pos = pos.clamp(min=0).to(torch.int64)
        one = torch.ones(b, 1, dtype=torch.float32, device=input_ids.device)
        ids = torch.cat([input_ids, (one * 101).to(torch.int64)], 1)
        pos = torch.cat([pos, (one * 0).to(torch.int64)], 1)
        seg_a = torch.cat([seg_a, one * 0], 1)
        seg_b = torch.cat([seg_b, one], 1)
        same = seg_a.unsqueeze(2) * seg_a.unsqueeze(1) + seg_b.unsqueeze(2) * seg_b.unsqueeze(1)
        add = ((1.0 - same) * -1e4).unsqueeze(1)
        h = _embed(self.bi_emb, ids, pos, torch.zeros_like(ids))
        for layer in self.bi_layers:
            h = bert_layer(layer, h, add)
        u, v = _mean(h, seg_a), _mean(h, seg_b)
        return nn.functional.cosine_similarity(u, v, dim=-1, eps=1e-6), u, v

    def features(self, input_ids, attention_mask, token_type_ids):
        """(cosine, head input): everything the trainable head reads."""
        with torch.no_grad():
            cos, bu, bv = self.cosine(input_ids, attention_mask, token_type_ids)
        m = attention_mask.to(torch.float32)
        seg_b = m * (token_type_ids == 1).to(torch.float32)
        seg_a = m - seg_b
        pos = torch.cumsum(torch.ones_like(input_ids), 1) - 1
        add = ((1.0 - m) * -1e4)[:, None, None, :]
        h = _embed(self.x_emb, input_ids, pos, token_type_ids)
        for layer in self.x_layers:
            h = bert_layer(layer, h, add)
        u, v = _mean(h, seg_a), _mean(h, seg_b)
        parts = [h[:, 0], u * v, (u - v).abs(), u + v]
        if self.bi_feats:
            bu = nn.functional.normalize(bu, dim=-1)
            bv = nn.functional.normalize(bv, dim=-1)
            parts += [bu * bv * 20.0, (bu - bv).abs() * 20.0]
        return cos, torch.cat(parts, -1)

    def forward(self, input_ids, attention_mask, token_type_ids):
        cos, feats = self.features(input_ids, attention_mask, token_type_ids)
        logit = self.scale * cos + self.bias + self.head(feats).squeeze(-1)
        return logit.unsqueeze(-1)
