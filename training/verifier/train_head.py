"""Trains only the verifier's head (and its cosine scale and bias) on frozen features.

Fine-tuning the cross layers costs ~5-7 s per batch of 32 pairs on a shared 2-core machine, so
a run sees a few thousand pairs. With every transformer layer frozen, each pair's features are
computed once (one forward pass), and the head trains on tens of thousands of pairs for many
epochs in a minute, with early stopping on dev. The head reads the cross layers' [CLS] and text
means and the bi-encoder's own text vectors (--bi-feats).

Run: python train_head.py --out $VERIFIER_WORK/ckpt/v2 [--init CKPT] --cap 2500
"""
from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import torch

from common import SEED, WORK, base_dir, read_jsonl, start_run
from metrics import report
from model import Verifier
from train import balanced, encode, load, score


@torch.no_grad()
def featurize(model, tok, rows, batch=64):
    model.eval()
    cos, feats = [], []
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]["a_in"]) + len(rows[i]["b_in"]))
    c_all = torch.empty(len(rows))
    f_all = None
    t0 = time.time()
    for i in range(0, len(order), batch):
        idx = order[i: i + batch]
        c, f = model.features(**encode(tok, [rows[j] for j in idx]))
        if f_all is None:
            f_all = torch.empty(len(rows), f.shape[1])
        c_all[idx] = c
        f_all[idx] = f
        if (i // batch) % 50 == 0:
            print(f"  features {i + len(idx)}/{len(rows)} {time.time() - t0:.0f}s", flush=True)
    return c_all, f_all


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--init", default="", help="checkpoint whose cross layers to reuse")
    ap.add_argument("--layers", default="0,2,4")
    ap.add_argument("--cap", type=int, default=2500, help="train pairs per dataset")
    ap.add_argument("--dev-cap", type=int, default=400)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--wd", type=float, default=1e-2)
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args()
    _, out, tok, layers = start_run(args.seed, 1, args.out, args.layers)
    model = Verifier(base_dir(), layers, bi_feats=True)
    if args.init:
        init = load(Path(args.init))
        model.x_emb.load_state_dict(init.x_emb.state_dict())
        model.x_layers.load_state_dict(init.x_layers.state_dict())
        layers = init.layers_of_base
    train = balanced(read_jsonl(WORK / "pairs/train.jsonl"), random.Random(args.seed), {"*": args.cap})
    train = [r for r in train if r["label"] == 1 or r["a_in"].lower().strip() != r["b_in"].lower().strip()]
    dev = balanced(read_jsonl(WORK / "pairs/dev.jsonl"), random.Random(args.seed), {"*": args.dev_cap})
    print(f"featurizing {len(train)} train, {len(dev)} dev pairs", flush=True)
    ct, ft = featurize(model, tok, train)
    cd, fd = featurize(model, tok, dev)
    yt = torch.tensor([r["label"] for r in train], dtype=torch.float32)
    opt = torch.optim.AdamW([{"params": list(model.head.parameters()), "weight_decay": args.wd},
                             {"params": [model.scale, model.bias], "lr": 1e-2, "weight_decay": 0.0}], lr=args.lr)
    bce = torch.nn.BCEWithLogitsLoss()
    best, log = -1.0, []
    g = torch.Generator().manual_seed(args.seed)
    for ep in range(args.epochs):
        model.head.train()
        perm = torch.randperm(len(train), generator=g)
        for i in range(0, len(perm), 128):
            b = perm[i: i + 128]
            logit = model.scale * ct[b] + model.bias + model.head(ft[b]).squeeze(-1)
            loss = bce(logit, yt[b])
            loss.backward()
            opt.step()
            opt.zero_grad()
        model.head.eval()
        with torch.no_grad():
            pd = (model.scale * cd + model.bias + model.head(fd).squeeze(-1)).numpy()
        rep = report(dev, {"model": pd})
        s = score(rep)
        log.append({"epoch": ep, "score": s, "loss": loss.item()})
        print(f"epoch {ep} loss {loss.item():.4f} dev score {s:.4f} ALL {rep['ALL']['model']}", flush=True)
        if s > best:
            best = s
            torch.save(model.state_dict(), out / "model.pt")
            json.dump({"step": ep, "score": s, "dev": rep, "args": vars(args), "layers": layers, "bi_feats": True,
                       "scale": model.scale.item(), "bias": model.bias.item()}, open(out / "train_info.json", "w"), indent=1)
    for ds, r in json.load(open(out / "train_info.json"))["dev"].items():
        print(f"   {ds:10s} n={r['n']:6d} auc={r['model']['auc']:.3f} r@1%={r['model']['r@1%']:.3f}", flush=True)
    json.dump(log, open(out / "train_log.json", "w"), indent=1)
    print(f"best dev score {best:.4f}", flush=True)


if __name__ == "__main__":
    main()
