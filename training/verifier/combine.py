"""Fits how refrain combines the cross-encoder's logit with the index's cosine, on dev pairs.

refrain scores a candidate `sigmoid(a * logit + c * cosine + d)`. Only the direction of (a, c)
decides which pairs pass at a threshold, so it is chosen for the figure that matters: the mean
over datasets of recall at 1% false positives on dev (AUC breaks ties). The overall scale and
d then come from a one-feature logistic fit, so the score reads as a probability on dev.
"""
from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from metrics import recall_at_fpr


def per_dataset(rows) -> dict[str, np.ndarray]:
    by: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by.setdefault(r["dataset"], []).append(i)
    return {k: np.array(v) for k, v in by.items()}


def objective(rows, labels: np.ndarray, score: np.ndarray, groups=None) -> float:
    """Mean over datasets of recall at 1% false positives (datasets with both labels)."""
    groups = groups or per_dataset(rows)
    vals = []
    for idx in groups.values():
        lab = labels[idx]
        if 0 < lab.sum() < len(lab):
            vals.append(recall_at_fpr(lab, score[idx], 0.01))
    return float(np.mean(vals)) if vals else 0.0


def fit(rows, logit: np.ndarray, cos: np.ndarray, steps: int = 41) -> dict:
    """(a, c, d) for sigmoid(a * logit + c * cos + d), fitted on `rows` (dev)."""
    labels = np.array([r["label"] for r in rows])
    groups = per_dataset(rows)
    # logits span tens, cosines one unit: search the angle on standardised features
    sl, sc = float(np.std(logit)) or 1.0, float(np.std(cos)) or 1.0
    best = (-1.0, 0.0)
    for theta in np.linspace(0.0, np.pi / 2, steps):
        s = np.cos(theta) * logit / sl + np.sin(theta) * cos / sc
        best = max(best, (objective(rows, labels, s, groups), theta))
    theta = best[1]
    z = np.cos(theta) * logit / sl + np.sin(theta) * cos / sc
    lr = LogisticRegression(C=1e4).fit(z[:, None], labels)
    k, d = float(lr.coef_[0][0]), float(lr.intercept_[0])
    return {"a": k * np.cos(theta) / sl, "c": k * np.sin(theta) / sc, "d": d,
            "fitted_on": "dev", "dev_mean_recall_at_1pct_fpr": round(best[0], 4)}


def apply(comb: dict, logit: np.ndarray, cos: np.ndarray) -> np.ndarray:
    """The combined logit (refrain's score is its sigmoid)."""
    return comb["a"] * np.asarray(logit) + comb["c"] * np.asarray(cos) + comb["d"]
