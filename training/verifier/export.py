"""Exports a trained verifier checkpoint to the files refrain loads (ONNX int8 + tokenizer).

Writes into --dest:
  model.onnx              int8 (dynamic quantisation of the MatMul weights), inputs input_ids,
                          attention_mask, token_type_ids (int64 [batch, seq]), output logits
                          (float32 [batch, 1]); score = sigmoid(logit)
  model.fp32.onnx         only with --keep-fp32 (for the agreement check; never shipped)
  tokenizer.json          all-MiniLM-L6-v2's tokenizer, truncation longest-first to 128 tokens,
                          padding to the longest pair of the batch
  config.json, special_tokens_map.json, tokenizer_config.json
  manifest.json           version, sha256 of every file, base weights, data, hyperparameters,
                          figures (merged from --info, the evaluation's output)

Run: python export.py --ckpt $VERIFIER_WORK/ckpt/v1 --dest ../../models/verifier --version v1 \
        --info $VERIFIER_WORK/eval/v1.json
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
from pathlib import Path

import onnx
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic
from transformers import AutoModelForSequenceClassification

from common import base_dir

SHIPPED = ["model.onnx", "tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"]


class Logits(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits


def export_fp32(ckpt: Path, path: Path):
    model = AutoModelForSequenceClassification.from_pretrained(ckpt, attn_implementation="eager").eval()
    ids = torch.tensor([[101, 2129, 2000, 102, 2129, 102]] * 2, dtype=torch.int64)
    args = (ids, torch.ones_like(ids), torch.tensor([[0, 0, 0, 0, 1, 1]] * 2, dtype=torch.int64))
    dyn = {0: "batch", 1: "seq"}
    torch.onnx.export(
        Logits(model), args, str(path), input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"], dynamic_axes={"input_ids": dyn, "attention_mask": dyn,
                                               "token_type_ids": dyn, "logits": {0: "batch"}},
        opset_version=17, do_constant_folding=True, dynamo=False)
    onnx.checker.check_model(onnx.load(str(path)))


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def tokenizer_files(ckpt: Path, dest: Path):
    base = base_dir()
    tok = json.load(open(base / "tokenizer.json"))
    tok["truncation"] = {"direction": "Right", "max_length": 128, "strategy": "LongestFirst", "stride": 0}
    tok["padding"] = {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None,
                      "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"}
    json.dump(tok, open(dest / "tokenizer.json", "w"), ensure_ascii=False)
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        shutil.copy(base / name, dest / name)
    cfg = json.load(open(ckpt / "config.json"))
    cfg.pop("_name_or_path", None)
    json.dump(cfg, open(dest / "config.json", "w"), indent=2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--dest", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--info", default="", help="JSON merged into the manifest (figures, data)")
    ap.add_argument("--keep-fp32", action="store_true")
    args = ap.parse_args()
    ckpt, dest = Path(args.ckpt), Path(args.dest)
    dest.mkdir(parents=True, exist_ok=True)
    fp32 = dest / "model.fp32.onnx"
    export_fp32(ckpt, fp32)
    quantize_dynamic(str(fp32), str(dest / "model.onnx"), weight_type=QuantType.QInt8, per_channel=True)
    if not args.keep_fp32:
        fp32.unlink()
    tokenizer_files(ckpt, dest)
    manifest = {"version": args.version}
    train_info = ckpt / "train_info.json"
    if train_info.exists():
        ti = json.load(open(train_info))
        manifest["hyperparameters"] = ti["args"] | {"layers_of_base": ti["layers"], "max_len": 128}
        manifest["train_best_step"] = ti["step"]
    if args.info:
        manifest |= json.load(open(args.info))
    manifest["files"] = {n: sha256(dest / n) for n in SHIPPED}
    json.dump(manifest, open(dest / "manifest.json", "w"), indent=1)
    print(json.dumps(manifest["files"], indent=1))


if __name__ == "__main__":
    main()
