"""Figures every script reports: ROC AUC and recall at a fixed false-positive rate, per dataset."""
from __future__ import annotations

from collections import defaultdict

import numpy as np
from sklearn.metrics import roc_auc_score


def recall_at_fpr(labels, scores, fpr: float = 0.01) -> float:
    """Share of same-request pairs accepted when at most `fpr` of the others are.

    The threshold is the smallest score that lets no more than fpr of negatives through
    (ties count against the model).
    """
    labels = np.asarray(labels)
    scores = np.asarray(scores, dtype=np.float64)
    neg = np.sort(scores[labels == 0])[::-1]
    pos = scores[labels == 1]
    if len(neg) == 0 or len(pos) == 0:
        return float("nan")
    allowed = int(np.floor(fpr * len(neg)))
    thr = neg[allowed] if allowed < len(neg) else -np.inf
    return float((pos > thr).mean())


def report(rows, scores: dict[str, list[float]]) -> dict:
    """Per dataset (and overall) n, AUC and recall@1%FPR for each named score column."""
    by = defaultdict(list)
    for i, r in enumerate(rows):
        by[r["dataset"]].append(i)
        by["ALL"].append(i)
    out = {}
    for ds, idx in sorted(by.items()):
        lab = np.array([rows[i]["label"] for i in idx])
        if lab.min() == lab.max():
            continue
        res = {"n": len(idx), "pos": int(lab.sum())}
        for name, sc in scores.items():
            s = np.array([sc[i] for i in idx])
            res[name] = {"auc": round(float(roc_auc_score(lab, s)), 4),
                         "r@1%": round(recall_at_fpr(lab, s, 0.01), 4),
                         "r@5%": round(recall_at_fpr(lab, s, 0.05), 4)}
        out[ds] = res
    return out


def table(rep: dict) -> str:
    names = [k for k in next(iter(rep.values())) if k not in ("n", "pos")]
    head = "| dataset | n (same) | " + " | ".join(f"{n} AUC | {n} R@1%FPR" for n in names) + " |"
    lines = [head, "|" + "---|" * (2 + 2 * len(names))]
    for ds, r in rep.items():
        cells = " | ".join(f"{r[n]['auc']:.3f} | {r[n]['r@1%']:.3f}" for n in names)
        lines.append(f"| {ds} | {r['n']} ({r['pos']}) | {cells} |")
    return "\n".join(lines)
