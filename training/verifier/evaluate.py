"""Evaluates an exported verifier against plain cosine and the gated-cosine rule, per dataset.

Columns: the model's logit alone; cosine (what the index holds: masked texts for plans, raw for
results); the rule (cosine refused by the value, negation and direction gates, gates.py);
model+cos, the score refrain computes, sigmoid(a * logit + c * cosine + d) with (a, c, d)
fitted on dev (combine.py); model+cos+gates, the same behind the gates.
Figures: ROC AUC and recall at 1% (and 5%) false positives; int8 against fp32 agreement of the
combined score (correlation, largest difference, same decision at the fp32 threshold for 1%
false positives); latency of one batch of 5 pairs on 1 thread with ONNX Runtime (p50/p95 over
300 runs, after warm-up).

Run: python evaluate.py --model-dir DIR --split test [--fp32 model.fp32.onnx] [--out eval.json]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import random

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

import combine
from common import SEED, WORK, read_jsonl
from embed import Embedder
from gates import gated
from metrics import recall_at_fpr, report, table

GENERATED = {"antonym", "entity", "number", "version", "negation", "direction", "object"}


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


def cosines(emb, rows) -> np.ndarray:
    """The cosine refrain's index holds: masked texts for plans, raw texts for results."""
    return emb.cosine([r["a_in"] for r in rows], [r["b_in"] for r in rows])


def sample(rows, cap: int):
    """A seeded sample of at most `cap` pairs per dataset (0: all)."""
    if not cap:
        return rows
    rng = random.Random(SEED)
    by = {}
    for r in rows:
        by.setdefault(r["dataset"], []).append(r)
    return [r for ds in sorted(by) for r in rng.sample(by[ds], min(cap, len(by[ds])))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--split", default="test")
    ap.add_argument("--fp32", default="", help="an fp32 ONNX file in model-dir for the agreement check")
    ap.add_argument("--out", default="")
    ap.add_argument("--cap", type=int, default=0, help="evaluate at most this many pairs per dataset")
    ap.add_argument("--combine", default="", help="a combine.json to use; without it, fitted on dev here")
    args = ap.parse_args()
    md = Path(args.model_dir)
    rows = sample(read_jsonl(WORK / "pairs" / f"{args.split}.jsonl"), args.cap)
    v = OnnxVerifier(md, threads=1)
    emb = Embedder()
    int8, cos = v.score_rows(rows), cosines(emb, rows)
    if args.combine:
        comb = json.load(open(args.combine))
    else:
        dev = read_jsonl(WORK / "pairs/dev.jsonl")
        comb = combine.fit(dev, v.score_rows(dev), cosines(emb, dev))
    emb.save()
    both = combine.apply(comb, int8, cos)
    cols = {"model": int8, "cosine": cos, "rule": gated(rows, cos), "model+cos": both,
            "model+cos+gates": gated(rows, both)}
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
    res = {"split": args.split, "pairs_per_dataset_cap": args.cap, "combine": comb, "figures": rep,
           "figures_by_negative_kind": by_kind}
    if args.fp32:
        fp = OnnxVerifier(md, args.fp32, threads=1).score_rows(rows)
        lab = np.array([r["label"] for r in rows])
        c32, c8 = combine.apply(comb, fp, cos), both
        p32, p8 = 1 / (1 + np.exp(-c32)), 1 / (1 + np.exp(-c8))
        neg = np.sort(c32[lab == 0])[::-1]
        thr = neg[int(0.01 * len(neg))]
        res["int8_vs_fp32"] = {
            "pearson_logits": round(float(np.corrcoef(fp, int8)[0, 1]), 5),
            "max_abs_score_diff": round(float(np.abs(p32 - p8).max()), 4),
            "mean_abs_score_diff": round(float(np.abs(p32 - p8).mean()), 5),
            "same_decision_at_1pct_fpr_threshold": round(float(((c32 > thr) == (c8 > thr)).mean()), 5),
            "r@1%_model+cos": {"fp32": round(recall_at_fpr(lab, c32), 4), "int8": round(recall_at_fpr(lab, c8), 4)},
        }
        print(json.dumps(res["int8_vs_fp32"], indent=1))
    res["latency_int8_batch5_1thread"] = latency(OnnxVerifier(md, threads=1), rows)
    print(json.dumps(res["latency_int8_batch5_1thread"]))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        json.dump(res, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
