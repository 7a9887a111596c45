"""The bi-encoder refrain retrieves with (all-MiniLM-L6-v2, mean pooling, L2-normalised).

Used to mine hard negatives (the nearest non-duplicate, which is what retrieval hands the
verifier) and as the plain-cosine baseline every figure is compared against.
"""
from __future__ import annotations

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

from common import WORK, base_dir


class Embedder:
    def __init__(self, threads: int = 1):
        torch.set_num_threads(threads)
        d = base_dir()
        self.tok = AutoTokenizer.from_pretrained(d)
        self.model = AutoModel.from_pretrained(d).eval()
        self.cache: dict[str, np.ndarray] = {}
        self.path = WORK / "emb_cache.npz"
        if self.path.exists():
            z = np.load(self.path, allow_pickle=False)
            self.cache = dict(zip(z["texts"].tolist(), z["vecs"]))

    def save(self):
        """Keeps the embeddings for the next run (build_data and evaluate share them)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        texts = list(self.cache)
        np.savez(self.path, texts=np.array(texts), vecs=np.stack([self.cache[t] for t in texts]))

    @torch.no_grad()
    def encode(self, texts: list[str], batch: int = 128) -> np.ndarray:
        todo = sorted({t for t in texts if t not in self.cache}, key=len)
        for i in range(0, len(todo), batch):
            chunk = todo[i: i + batch]
            enc = self.tok(chunk, padding=True, truncation=True, max_length=128, return_tensors="pt")
            out = self.model(**enc).last_hidden_state
            m = enc["attention_mask"].unsqueeze(-1).float()
            v = (out * m).sum(1) / m.sum(1).clamp(min=1e-9)
            v = torch.nn.functional.normalize(v, dim=-1).numpy()
            for t, e in zip(chunk, v):
                self.cache[t] = e
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, 384), np.float32)

    def cosine(self, a: list[str], b: list[str]) -> np.ndarray:
        return (self.encode(a) * self.encode(b)).sum(1)


def nearest_others(emb: np.ndarray, groups: list[str], k: int = 3) -> list[list[tuple[int, float]]]:
    """For each row, the k most similar rows of another group (index, cosine)."""
    out = []
    g = np.array(groups)
    for i in range(0, len(emb), 512):
        sims = emb[i: i + 512] @ emb.T
        for r, row in enumerate(sims):
            row = row.copy()
            row[g == g[i + r]] = -2.0
            idx = np.argpartition(-row, min(k, len(row) - 1))[:k]
            idx = idx[np.argsort(-row[idx])]
            out.append([(int(j), float(row[j])) for j in idx if row[j] > -2.0])
    return out
