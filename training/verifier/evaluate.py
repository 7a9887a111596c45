"""Evaluates an exported verifier against plain cosine and a cosine-plus-gates rule, per dataset.

Figures: ROC AUC and recall at 1% (and 5%) false positives on the chosen split; int8 against
fp32 agreement (score correlation, largest score difference, same decision at the fp32
threshold for 1% false positives); latency of one batch of 5 pairs on 1 thread with ONNX
Runtime (p50/p95 over 300 runs, after warm-up).

Run: python evaluate.py --model-dir DIR --split dev [--ckpt CKPT] [--out eval.json]
--ckpt (the torch checkpoint) adds the fp32 scores for the agreement check.
"""
from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

import random

from common import SEED, WORK, read_jsonl

GENERATED = {"antonym", "entity", "number", "version", "negation", "direction", "object"}
from embed import Embedder
from metrics import recall_at_fpr, report, table


class OnnxVerifier:
    def __init__(self, model_dir: Path, model_file: str = "model.onnx", threads: int = 1):
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.sess = ort.InferenceSession(str(model_dir / model_file), so, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))

    def logits(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        enc = self.tok.encode_batch(pairs)
        feed = {
            "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64),
        }
        return self.sess.run(["logits"], feed)[0][:, 0]

    def score_rows(self, rows, batch: int = 64) -> np.ndarray:
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]["a_in"]) + len(rows[i]["b_in"]))
        out = np.empty(len(rows), dtype=np.float32)
        for i in range(0, len(order), batch):
            idx = order[i: i + batch]
            out[idx] = self.logits([(rows[j]["a_in"], rows[j]["b_in"]) for j in idx])
        return out


NUM = re.compile(r"\d+(?:\.\d+)?")
NEG = re.compile(r"\b(not|no|never|without|n't|dont|don't|doesn't|isn't|can't)\b", re.I)


def gated_cosine(rows, cos: np.ndarray) -> np.ndarray:
    """The best simple rule: cosine, zeroed when numbers or negation differ between the texts."""
    out = cos.copy()
    for i, r in enumerate(rows):
        a, b = r["a_in"], r["b_in"]
        if sorted(NUM.findall(a)) != sorted(NUM.findall(b)) or bool(NEG.search(a)) != bool(NEG.search(b)):
            out[i] = min(out[i], 0.0)
    return out


def latency(v: OnnxVerifier, rows, runs: int = 300) -> dict:
    rng = np.random.default_rng(0)
    batches = [[(rows[j]["a_in"], rows[j]["b_in"]) for j in rng.choice(len(rows), 5)] for _ in range(runs)]
    for b in batches[:20]:
        v.logits(b)
    t = []
    for b in batches:
        t0 = time.perf_counter()
        v.logits(b)
        t.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": round(float(np.percentile(t, 50)), 2), "p95_ms": round(float(np.percentile(t, 95)), 2),
            "runs": runs, "pairs_per_batch": 5, "threads": 1}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--split", default="dev")
    ap.add_argument("--fp32", default="", help="an fp32 ONNX file in model-dir for the agreement check")
    ap.add_argument("--out", default="")
    ap.add_argument("--cap", type=int, default=0, help="evaluate at most this many pairs per dataset")
    ap.add_argument("--combine-from", default="", help="split to fit a (logit, cosine) calibration on")
    args = ap.parse_args()
    md = Path(args.model_dir)
    rows = read_jsonl(WORK / "pairs" / f"{args.split}.jsonl")
    if args.cap:
        # a seeded sample per dataset keeps an evaluation within minutes on a shared CPU
        rng = random.Random(SEED)
        by = {}
        for r in rows:
            by.setdefault(r["dataset"], []).append(r)
        rows = [r for ds in sorted(by) for r in rng.sample(by[ds], min(args.cap, len(by[ds])))]
    v = OnnxVerifier(md, threads=1)
    int8 = v.score_rows(rows)
    emb = Embedder()
    cos = emb.cosine([r["a"] for r in rows], [r["b"] for r in rows])
    emb.save()
    cols = {"verifier": int8, "cosine": cos, "cos+gates": gated_cosine(rows, cos)}
    res_extra = {}
    if args.combine_from:
        # a two-feature logistic calibration (verifier logit, cosine) fitted on another split
        from sklearn.linear_model import LogisticRegression
        fit_rows = read_jsonl(WORK / "pairs" / f"{args.combine_from}.jsonl")
        x = np.stack([v.score_rows(fit_rows), emb.cosine([r["a"] for r in fit_rows], [r["b"] for r in fit_rows])], 1)
        lr = LogisticRegression(C=1.0).fit(x, [r["label"] for r in fit_rows])
        cols["verifier+cos"] = lr.decision_function(np.stack([int8, cos], 1))
        res_extra["combined"] = {"fitted_on": args.combine_from, "w_logit": float(lr.coef_[0][0]),
                                 "w_cosine": float(lr.coef_[0][1]), "bias": float(lr.intercept_[0])}
    rep = report(rows, cols)
    print(table(rep))
    # the same figures with the negatives split by kind: retrieval's nearest non-duplicates and
    # the sets' own negatives ("natural") against generated near misses
    views = []
    for r in rows:
        gen = r["label"] == 0 and r["differs"].split(":")[0] in GENERATED
        views.append(dict(r, dataset=f"{r['dataset']}/{'near-miss' if gen else 'natural'}"))
    pos = [dict(r, dataset=f"{r['dataset']}/near-miss") for r in rows if r["label"] == 1]
    idx = list(range(len(rows))) + [i for i, r in enumerate(rows) if r["label"] == 1]
    by_kind = report(views + pos, {k: [v[i] for i in idx] for k, v in cols.items()})
    by_kind.pop("ALL", None)
    print(table(by_kind))
    res = {"split": args.split, "pairs_per_dataset_cap": args.cap, "figures": rep,
           "figures_by_negative_kind": by_kind} | res_extra
    if args.fp32:
        fp = OnnxVerifier(md, args.fp32, threads=1).score_rows(rows)
        p32, p8 = 1 / (1 + np.exp(-fp)), 1 / (1 + np.exp(-int8))
        lab = np.array([r["label"] for r in rows])
        neg = np.sort(fp[lab == 0])[::-1]
        thr = neg[int(0.01 * len(neg))]
        res["int8_vs_fp32"] = {
            "pearson_logits": round(float(np.corrcoef(fp, int8)[0, 1]), 5),
            "max_abs_score_diff": round(float(np.abs(p32 - p8).max()), 4),
            "mean_abs_score_diff": round(float(np.abs(p32 - p8).mean()), 5),
            "same_decision_at_1pct_fpr_threshold": round(float(((fp > thr) == (int8 > thr)).mean()), 5),
            "fp32_r@1%": {"ALL": round(recall_at_fpr(lab, fp), 4)},
        }
        print(json.dumps(res["int8_vs_fp32"], indent=1))
    res["latency_int8_batch5_1thread"] = latency(OnnxVerifier(md, threads=1), rows)
    print(json.dumps(res["latency_int8_batch5_1thread"]))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        json.dump(res, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
