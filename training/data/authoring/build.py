"""Writes training/data/<set>.jsonl from the authoring modules (coding_*.py, question_*.py).

Usage: python3 training/data/authoring/build.py
Each module defines FAMILIES, a list of families made with dsl.coding / dsl.question. Family ids
are written in the modules and never reused, so a family keeps its split forever.
"""

import importlib
import json
import pathlib
import re
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


BEGIN, END = "<!-- sources:begin -->", "<!-- sources:end -->"


def write_sources(coding):
    """Rewrites README.md's table of the repository each coding family was drawn from."""
    readme = HERE.parent / "README.md"
    text = readme.read_text(encoding="utf-8")
    rows = ["| family | task | drawn from |", "|---|---|---|"]
    for f in coding:
        m = re.match(r"https://github\.com/([^/]+/[^/]+)", f["source"])
        repo = m.group(1) if m else f["source"]
        rows.append(f"| {f['id']} | {f['title']} | [{repo}]({f['source']}) |")
    block = BEGIN + "\n" + "\n".join(rows) + "\n" + END
    if BEGIN not in text:
        sys.exit(f"README.md lacks the {BEGIN} ... {END} markers")
    text = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: block, text, flags=re.S)
    readme.write_text(text, encoding="utf-8")


def main():
    import dsl
    import extra_members
    dsl.EXTRA.update(extra_members.EXTRA)
    for prefix in ("coding", "question"):
        fams = collect(prefix)
        out = HERE.parent / f"{prefix}.jsonl"
        with out.open("w", encoding="utf-8") as fh:
            for f in fams:
                fh.write(json.dumps(f, ensure_ascii=False) + "\n")
        print(f"{out.name}: {len(fams)} families")
        if prefix == "coding":
            write_sources(fams)


if __name__ == "__main__":
    main()
