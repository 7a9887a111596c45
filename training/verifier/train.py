"""Trains the verifier: a small cross-encoder scoring (stored request, new request) as the same
request with the same answer.

The student keeps all-MiniLM-L6-v2's embeddings and a few of its transformer layers (every
other one by default), topped by a fresh one-logit head; input `[CLS] stored [SEP] new [SEP]`,
128 tokens at most. Loss: binary cross-entropy on the pair labels; with --teacher, the student
also matches a trained 6-layer teacher's logits (distillation). Keeps the checkpoint with the
best dev figure (mean over datasets of recall at 1% false positives, then AUC).

Run: python train.py --layers 0,2,4 --out $VERIFIER_WORK/ckpt/v1
CPU only; `nice -n 5`, 2 threads. About 3 minutes per 10k pairs per epoch for 3 layers.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

from common import SEED, WORK, base_dir, read_jsonl, start_run
from metrics import report
from model import Verifier

MAX_LEN = 128


def load(path: Path) -> Verifier:
    """A checkpoint written by this script (model.pt + train_info.json)."""
    info = json.load(open(path / "train_info.json"))
    m = Verifier(base_dir(), info["layers"], info.get("bi_feats", False))
    m.load_state_dict(torch.load(path / "model.pt", map_location="cpu"))
    return m.eval()


def encode(tok, rows, swap=False):
    a = [r["b_in"] if swap else r["a_in"] for r in rows]
    b = [r["a_in"] if swap else r["b_in"] for r in rows]
    return tok(a, b, padding=True, truncation="longest_first", max_length=MAX_LEN, return_tensors="pt")


@torch.no_grad()
def predict(model, tok, rows, batch=128) -> np.ndarray:
    model.eval()
    out = []
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]["a_in"]) + len(rows[i]["b_in"]))
    for i in range(0, len(order), batch):
        chunk = [rows[j] for j in order[i: i + batch]]
        out.append(model(**encode(tok, chunk)).squeeze(-1).numpy())
    flat = np.concatenate(out) if out else np.zeros(0)
    res = np.empty(len(rows), dtype=np.float32)
    res[np.array(order, dtype=int)] = flat
    return res


def score(rep: dict) -> float:
    ds = [v["model"] for k, v in rep.items() if k != "ALL"]
    return float(np.mean([d["r@1%"] for d in ds]) + 0.1 * np.mean([d["auc"] for d in ds]))


def balanced(rows, rng, cap: dict[str, int]):
    """Caps each dataset's share of an epoch so the big sets do not drown the small ones."""
    by = {}
    for r in rows:
        by.setdefault(r["dataset"], []).append(r)
    out = []
    for ds, rs in by.items():
        rng.shuffle(rs)
        out += rs[: cap.get(ds, cap.get("*", len(rs)))]
    rng.shuffle(out)
    return out


def batches(rows, size, rng):
    """Batches of similar length (less padding), in random order."""
    out = []
    for i in range(0, len(rows), size * 20):
        block = sorted(rows[i: i + size * 20], key=lambda r: len(r["a_in"]) + len(r["b_in"]))
        out += [block[j: j + size] for j in range(0, len(block), size)]
    rng.shuffle(out)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", default="0,2,4", help="MiniLM layers the student keeps")
    ap.add_argument("--epochs", type=float, default=2.0)
    ap.add_argument("--lr", type=float, default=8e-5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--cap", default="*:12000", help="max pairs per dataset per epoch, ds:n,...")
    ap.add_argument("--teacher", default="", help="checkpoint whose logits the student matches")
    ap.add_argument("--alpha", type=float, default=0.5, help="weight of the distillation loss")
    ap.add_argument("--calib-lr", type=float, default=1e-2, help="lr of the cosine scale and bias")
    ap.add_argument("--eval-every", type=int, default=600)
    ap.add_argument("--out", required=True)
    ap.add_argument("--save-initial", action="store_true", help="write the untrained model (calibrated cosine) and stop")
    ap.add_argument("--threads", type=int, default=1, help="1 is faster than 2 on a shared machine")
    ap.add_argument("--dev-cap", type=int, default=400, help="dev pairs per dataset for model selection")
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args()

    rng, out, tok, layers = start_run(args.seed, args.threads, args.out, args.layers)
    model = Verifier(base_dir(), layers)
    teacher = load(Path(args.teacher)) if args.teacher else None
    train = [r for r in read_jsonl(WORK / "pairs/train.jsonl")
             if r["label"] == 1 or r["a_in"].lower().strip() != r["b_in"].lower().strip()]
    dev = balanced(read_jsonl(WORK / "pairs/dev.jsonl"), random.Random(args.seed), {"*": args.dev_cap})
    cap = {k: int(v) for k, v in (x.split(":") for x in args.cap.split(","))}
    epoch_rows = balanced(list(train), random.Random(args.seed), cap)
    steps_per_epoch = math.ceil(len(epoch_rows) / args.batch)
    total = int(steps_per_epoch * args.epochs)
    calib = [model.scale, model.bias]
    rest = [p for p in model.parameters() if p.requires_grad and all(p is not c for c in calib)]
    opt = torch.optim.AdamW([{"params": rest}, {"params": calib, "lr": args.calib_lr, "weight_decay": 0.0}],
                            lr=args.lr, weight_decay=0.01)
    warm = max(1, total // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm)))
    bce = torch.nn.BCEWithLogitsLoss()
    print(f"train {len(train)} pairs, {len(epoch_rows)} per epoch, {total} steps; dev {len(dev)}", flush=True)
    best, step, t0 = -1.0, 0, time.time()
    if args.save_initial:
        torch.save(model.state_dict(), out / "model.pt")
        json.dump({"step": 0, "score": None, "args": vars(args), "layers": layers,
                   "scale": model.scale.item(), "bias": model.bias.item()}, open(out / "train_info.json", "w"))
        return
    log = []
    while step < total:
        for chunk in batches(balanced(list(train), rng, cap), args.batch, rng):
            if step >= total:
                break
            model.train()
            enc = encode(tok, chunk)
            y = torch.tensor([r["label"] for r in chunk], dtype=torch.float32)
            logits = model(**enc).squeeze(-1)
            loss = bce(logits, y)
            if teacher is not None:
                with torch.no_grad():
                    t = teacher(**enc).squeeze(-1)
                loss = (1 - args.alpha) * loss + args.alpha * torch.nn.functional.mse_loss(logits, t)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            if step % 50 == 0:
                print(f"step {step}/{total} loss {loss.item():.4f} {time.time() - t0:.0f}s", flush=True)
            if step % args.eval_every == 0 or step == total:
                rep = report(dev, {"model": predict(model, tok, dev)})
                s = score(rep)
                log.append({"step": step, "score": s, "dev": rep})
                print(f"eval step {step}: score {s:.4f} ALL {rep['ALL']['model']}", flush=True)
                for ds, r in rep.items():
                    print(f"   {ds:10s} n={r['n']:6d} auc={r['model']['auc']:.3f} r@1%={r['model']['r@1%']:.3f}", flush=True)
                if s > best:
                    best = s
                    torch.save(model.state_dict(), out / "model.pt")
                    json.dump({"step": step, "score": s, "dev": rep, "args": vars(args), "layers": layers,
                               "scale": model.scale.item(), "bias": model.bias.item()},
                              open(out / "train_info.json", "w"), indent=1)
    json.dump(log, open(out / "train_log.json", "w"), indent=1)
    print(f"best dev score {best:.4f} in {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
