"""Trains the plain cross-encoder (cross.py) on the pairs build_data.py wrote.

Each step draws a batch from a per-dataset balanced stream (the big sets do not drown the small
ones), binary cross-entropy on the labels. Training stops at --minutes or --steps, whichever
comes first (a shared CPU decides how far a run gets, so the budget is in time). Every
--eval-every steps the dev pairs are scored, the logit is combined with cosine as refrain
combines them (combine.py, fitted on those dev pairs), and the checkpoint with the best mean
recall at 1% false positives over datasets is kept.

Run: python train_cross.py --layers 0,2,4 --minutes 25 --out $VERIFIER_WORK/ckpt/c1
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

import combine
from common import SEED, WORK, base_dir, read_jsonl, start_run
from cross import CrossVerifier
from embed import Embedder
from train import balanced, batches, encode

MAX_LEN = 128


def load(path: Path) -> CrossVerifier:
    """A checkpoint written by this script (model.pt + train_info.json)."""
    info = json.load(open(path / "train_info.json"))
    m = CrossVerifier(base_dir(), info["layers"], info.get("pooling", "cls+mean"))
    m.load_state_dict(torch.load(path / "model.pt", map_location="cpu"))
    return m.eval()


@torch.no_grad()
def predict(model, tok, rows, batch: int = 128) -> np.ndarray:
    model.eval()
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]["a_in"]) + len(rows[i]["b_in"]))
    out = np.empty(len(rows), dtype=np.float32)
    for i in range(0, len(order), batch):
        idx = order[i: i + batch]
        out[idx] = model(**encode(tok, [rows[j] for j in idx])).squeeze(-1).numpy()
    return out


def pair_cosines(rows) -> np.ndarray:
    """The cosine refrain's index holds for each pair: masked texts for plans, raw for results."""
    emb = Embedder()
    cos = emb.cosine([r["a_in"] for r in rows], [r["b_in"] for r in rows])
    emb.save()
    return cos


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", default="0,2,4", help="all-MiniLM-L6-v2 layers the cross-encoder keeps")
    ap.add_argument("--pooling", default="cls+mean", choices=["cls+mean", "mean"])
    ap.add_argument("--minutes", type=float, default=25.0)
    ap.add_argument("--steps", type=int, default=100000)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--head-lr", type=float, default=1e-3)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--cap", default="*:8000", help="max pairs per dataset per pass, ds:n,...")
    ap.add_argument("--eval-every", type=int, default=300)
    ap.add_argument("--dev-cap", type=int, default=400, help="dev pairs per dataset for model selection")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--init", default="", help="a checkpoint of this script to continue from")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    rng, out, tok, layers = start_run(args.seed, args.threads, args.out, args.layers)
    if args.init:
        model = load(Path(args.init))
        layers = list(model.layers_of_base)
    else:
        model = CrossVerifier(base_dir(), layers, args.pooling)
    # a continued run sees the pairs in another order than the run it continues
    rng = random.Random(args.seed + (1 if args.init else 0))
    train = read_jsonl(WORK / "pairs/train.jsonl")
    dev = balanced(read_jsonl(WORK / "pairs/dev.jsonl"), random.Random(args.seed), {"*": args.dev_cap})
    dev_cos = pair_cosines(dev)
    dev_lab = np.array([r["label"] for r in dev])
    print(f"dev: cosine alone {combine.objective(dev, dev_lab, dev_cos):.4f} (mean R@1%FPR)", flush=True)
    cap = {k: int(v) for k, v in (x.split(":") for x in args.cap.split(","))}
    head = list(model.head.parameters())
    body = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith("head.")]
    opt = torch.optim.AdamW([{"params": body, "lr": args.lr}, {"params": head, "lr": args.head_lr}],
                            weight_decay=0.01)
    bce = torch.nn.BCEWithLogitsLoss()
    deadline = time.time() + args.minutes * 60
    est_total = args.steps
    warm = 20 if args.init else 100
    best, step, t0, log = -1.0, 0, time.time(), []
    print(f"train {len(train)} pairs; dev {len(dev)}; layers {layers}", flush=True)
    done = False
    while not done:
        for chunk in batches(balanced(list(train), rng, cap), args.batch, rng):
            model.train()
            frac_time = (time.time() - t0) / (deadline - t0)
            frac = max(frac_time, step / est_total)
            scale = min(1.0, (step + 1) / warm) * max(0.05, 1.0 - frac)  # warm-up, then linear decay
            for g, base_lr in zip(opt.param_groups, (args.lr, args.head_lr)):
                g["lr"] = base_lr * scale
            y = torch.tensor([r["label"] for r in chunk], dtype=torch.float32)
            loss = bce(model(**encode(tok, chunk)).squeeze(-1), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad()
            step += 1
            done = time.time() >= deadline or step >= args.steps
            if step % 50 == 0:
                print(f"step {step} loss {loss.item():.4f} {time.time() - t0:.0f}s", flush=True)
            if step % args.eval_every == 0 or done:
                logit = predict(model, tok, dev)
                comb = combine.fit(dev, logit, dev_cos)
                s_model = combine.objective(dev, dev_lab, logit)
                s = comb["dev_mean_recall_at_1pct_fpr"]
                log.append({"step": step, "model": s_model, "model+cos": s, "combine": comb})
                print(f"eval step {step}: dev mean R@1%FPR model {s_model:.4f} model+cos {s:.4f} "
                      f"(a {comb['a']:.3f} c {comb['c']:.3f} d {comb['d']:.3f})", flush=True)
                if s > best:
                    best = s
                    torch.save(model.state_dict(), out / "model.pt")
                    json.dump({"step": step, "score": s, "combine": comb, "args": vars(args), "layers": layers,
                               "pooling": args.pooling, "seconds": round(time.time() - t0)},
                              open(out / "train_info.json", "w"), indent=1)
            if done:
                break
    json.dump(log, open(out / "train_log.json", "w"), indent=1)
    print(f"best dev mean R@1%FPR (model+cos) {best:.4f} after {step} steps, {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
