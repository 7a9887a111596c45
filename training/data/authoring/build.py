"""Writes training/data/<set>.jsonl from the authoring modules (coding_*.py, question_*.py).

Usage: python3 training/data/authoring/build.py
Each module defines FAMILIES, a list of families made with dsl.coding / dsl.question. Family ids
are written in the modules and never reused, so a family keeps its split forever.
"""

import importlib
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def collect(prefix):
    fams = []
    for path in sorted(HERE.glob(f"{prefix}_*.py")):
        mod = importlib.import_module(path.stem)
        fams.extend(mod.FAMILIES)
    ids = [f["id"] for f in fams]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        sys.exit(f"duplicate family ids: {sorted(dup)}")
    return sorted(fams, key=lambda f: f["id"])


def main():
    for prefix in ("coding", "question"):
        fams = collect(prefix)
        out = HERE.parent / f"{prefix}.jsonl"
        with out.open("w", encoding="utf-8") as fh:
            for f in fams:
                fh.write(json.dumps(f, ensure_ascii=False) + "\n")
        print(f"{out.name}: {len(fams)} families")


if __name__ == "__main__":
    main()
