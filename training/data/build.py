"""Writes coding.jsonl and question.jsonl from the family files in families/*.toml.

Usage:
  python3 training/data/build.py           # write both sets and README.md's table of sources
  python3 training/data/build.py --check   # exit 1 unless the files on disk are what a build writes

The family files are data (TOML, one file per group of families; README.md describes the format);
render.py turns each into its JSONL record. Family ids are written in the files and never reused,
so a family keeps its split forever. Needs nothing beyond Python 3.11's standard library.
"""

import argparse
import json
import pathlib
import re
import sys
import tomllib

from render import RENDER, FamilyError

HERE = pathlib.Path(__file__).resolve().parent
FAMILIES = HERE / "families"
README = HERE / "README.md"
BEGIN, END = "<!-- sources:begin -->", "<!-- sources:end -->"


def load():
    """Every set's rendered families, sorted by id; exits with the file and family on a bad one."""
    sets = {name: [] for name in RENDER}
    for path in sorted(FAMILIES.glob("*.toml")):
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as e:
            sys.exit(f"{path.relative_to(HERE)}: not valid TOML: {e}")
        for name, fams in doc.items():
            if name not in RENDER:
                sys.exit(f"{path.relative_to(HERE)}: [[{name}]] is not a set; write [[coding]] or [[question]]")
            for f in fams:
                try:
                    sets[name].append(RENDER[name](f))
                except (FamilyError, KeyError, TypeError) as e:
                    what = f"{name} family {f.get('id', '?')}"
                    sys.exit(f"{path.relative_to(HERE)}: {what}: {e.args[0] if isinstance(e, FamilyError) else repr(e)}")
    for name, fams in sets.items():
        ids = [f["id"] for f in fams]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            sys.exit(f"duplicate family ids: {dup}; ids are never reused, take the next free one")
        fams.sort(key=lambda f: f["id"])
    return sets


def jsonl(fams):
    return "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in fams)


def with_sources(text, coding):
    """README.md's text with its table of the repository each coding family was drawn from."""
    rows = ["| family | task | drawn from |", "|---|---|---|"]
    for f in coding:
        m = re.match(r"https://github\.com/([^/]+/[^/]+)", f["source"])
        repo = m.group(1) if m else f["source"]
        rows.append(f"| {f['id']} | {f['title']} | [{repo}]({f['source']}) |")
    block = BEGIN + "\n" + "\n".join(rows) + "\n" + END
    if BEGIN not in text:
        sys.exit(f"README.md lacks the {BEGIN} ... {END} markers")
    return re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: block, text, flags=re.S)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the files on disk instead of writing them")
    args = ap.parse_args()
    sets = load()
    outputs = {HERE / f"{name}.jsonl": jsonl(fams) for name, fams in sets.items()}
    outputs[README] = with_sources(README.read_text(encoding="utf-8"), sets["coding"])
    stale = []
    for path, text in outputs.items():
        if args.check:
            if not path.exists() or path.read_bytes() != text.encode("utf-8"):
                stale.append(path.name)
        else:
            path.write_bytes(text.encode("utf-8"))
    for name, fams in sets.items():
        print(f"{name}.jsonl: {len(fams)} families")
    if stale:
        sys.exit(f"--check: {', '.join(stale)} differ from what families/*.toml build; "
                 "run python3 training/data/build.py and commit the result")
    if args.check:
        print("--check: coding.jsonl, question.jsonl and README.md's sources are what families/*.toml build")


if __name__ == "__main__":
    main()
