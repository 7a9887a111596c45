#!/usr/bin/env python3
"""Checks the shell family set before it is published: schema, one split per utility, every
member's values in its text and its command, the stored plan filled with each member's values
giving that member's command (and each `same_plan` entry's), negatives never carrying a member's
command, and counts per split. Warns about near misses that read like a member once values are
masked.

  validate_shell.py shell.jsonl [--min-families 1000 --min-utilities 200]

Exits non-zero on any error. Standard library only.
"""

import argparse
import collections
import json
import re
import sys

SLOT_TYPES = {"path", "identifier", "flag", "number", "version", "date", "url", "string", "issue", "pr",
              "package", "any"}
STEP_KEYS = {"tool", "op", "inputs", "outputs", "side_effect", "family"}
SLOT_KEYS = {"name", "type", "required", "default", "transform", "role"}
TEMPLATE_KEYS = {"steps", "slots", "outputs", "description", "version"}
PARAM = re.compile(r"\{\{params\.([A-Za-z0-9_-]+)\}\}")


def rough_mask(text, values):
    """An approximation of refrain's value masking, to catch near misses that differ from a
    member only in a value (a verifier reading masked text could not tell them apart)."""
    for v in sorted(values, key=len, reverse=True):
        if v:
            text = text.replace(v, "<v>")
    text = re.sub(r"https?://\S+", "<v>", text)
    text = re.sub(r"\S*[/.]\S*", "<v>", text)
    text = re.sub(r"\b\d+\w*", "<v>", text)
    return re.sub(r"\s+", " ", text.lower()).strip(" ?.!")


def check_family(f, errors, warnings):
    fid = f.get("id", "?")

    def bad(msg):
        errors.append(f"{fid}: {msg}")

    for k in ("id", "set", "split", "source", "license", "members", "negatives", "plan", "utility", "page"):
        if k not in f:
            bad(f"missing {k}")
            return
    if f["set"] != "shell":
        bad(f"set is {f['set']!r}, not 'shell'")
    if f["split"] not in ("dev", "test"):
        bad(f"split is {f['split']!r}")
    members, negatives = f["members"], f["negatives"]
    if len(members) < 4:
        bad(f"{len(members)} members (members[0] and at least 3 more)")
    if not negatives:
        bad("no negatives")
    tmpl = f["plan"].get("template") if isinstance(f["plan"], dict) else None
    if not isinstance(tmpl, dict):
        bad("plan is not {'template': {...}}")
        return
    if set(tmpl) - TEMPLATE_KEYS:
        bad(f"template has unknown fields {set(tmpl) - TEMPLATE_KEYS}")
    steps, slots = tmpl.get("steps", []), tmpl.get("slots", [])
    one_bash = len(steps) == 1 and steps[0].get("tool") == "Bash"
    if not one_bash or not isinstance(steps[0].get("inputs", {}).get("command"), str):
        bad("plan is not one Bash step with inputs.command")
        return
    if set(steps[0]) - STEP_KEYS:
        bad(f"step has unknown fields {set(steps[0]) - STEP_KEYS}")
    names = [s.get("name") for s in slots]
    if len(set(names)) != len(names):
        bad(f"slot declared twice: {names}")
    for s in slots:
        named = re.fullmatch(r"[A-Za-z0-9_-]+", s.get("name", ""))
        if set(s) - SLOT_KEYS or s.get("type") not in SLOT_TYPES or not named:
            bad(f"bad slot {s}")
    cmd_t = steps[0]["inputs"]["command"]
    used = set(PARAM.findall(cmd_t))
    if used != set(names):
        bad(f"placeholders {sorted(used)} but slots {sorted(names)}")
    member_cmds = set()
    for n, m in enumerate(members):
        text, values, cmd = m.get("text"), m.get("values"), (m.get("answer") or {}).get("command")
        if not text or not isinstance(values, list) or not cmd:
            bad(f"member {n} lacks text, values or answer.command")
            continue
        for v in values:
            if v not in text:
                bad(f"member {n}: value {v!r} not in text {text!r}")
            if v not in cmd:
                bad(f"member {n}: value {v!r} not in command {cmd!r}")
        fill = m.get("fill", {})
        if set(fill) != set(names):
            bad(f"member {n}: fill {sorted(fill)} does not cover slots {sorted(names)}")
            continue
        if set(fill.values()) - set(values):
            bad(f"member {n}: fill values {fill} not all listed in values {values}")
        filled = PARAM.sub(lambda mm: fill[mm.group(1)], cmd_t)
        if filled != cmd:
            bad(f"member {n}: plan filled gives {filled!r}, answer is {cmd!r}")
        member_cmds.add(cmd)
    if tmpl.get("description") != members[0].get("text"):
        bad("plan description is not members[0]'s text")
    texts = {m.get("text") for m in members}
    if len(texts) != len(members):
        bad("two members have the same text")
    for n, g in enumerate(f.get("same_plan", [])):
        fill, cmd = g.get("fill", {}), (g.get("answer") or {}).get("command")
        if set(fill) != set(names) or PARAM.sub(lambda mm: fill[mm.group(1)], cmd_t) != cmd:
            bad(f"same_plan {n}: the plan filled with {fill} does not give {cmd!r}")
        for v in g.get("values", []):
            if v not in g.get("text", "") or v not in (cmd or ""):
                bad(f"same_plan {n}: value {v!r} not in both text and command")
    masked = {rough_mask(m.get("text", ""), m.get("values", [])) for m in members}
    for g in negatives:
        if rough_mask(g.get("text", ""), g.get("values", [])) in masked:
            warnings.append(f"{fid}: near miss {g.get('text')!r} reads like a member once values are masked")
    for n, g in enumerate(negatives):
        text, values, cmd = g.get("text"), g.get("values"), (g.get("answer") or {}).get("command")
        if not text or not isinstance(values, list) or not cmd or not g.get("differs"):
            bad(f"negative {n} lacks text, values, differs or answer.command")
            continue
        for v in values:
            if v not in text or v not in cmd:
                bad(f"negative {n}: value {v!r} not in both text and command")
        if cmd in member_cmds:
            bad(f"negative {n} has a member's command {cmd!r}")
        if text in texts:
            bad(f"negative {n} is also a member: {text!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--min-families", type=int, default=0)
    ap.add_argument("--min-utilities", type=int, default=0)
    args = ap.parse_args()
    errors, warnings, fams = [], [], []
    with open(args.path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                fams.append(json.loads(line))
            except json.JSONDecodeError as e:
                errors.append(f"line {n}: not JSON ({e})")
    ids = collections.Counter(f.get("id") for f in fams)
    errors += [f"id {i} appears {c} times" for i, c in ids.items() if c > 1]
    split_of = collections.defaultdict(set)
    for f in fams:
        check_family(f, errors, warnings)
        split_of[f.get("utility")].add(f.get("split"))
    errors += [f"utility {u} is in both splits" for u, s in split_of.items() if len(s) > 1]
    owner = {}
    for f in fams:
        related = set(f.get("same_task_as", []))
        for m in f.get("members", []):
            other = owner.setdefault(m.get("text"), f.get("id"))
            if other != f.get("id") and other not in related:
                errors.append(f"{f.get('id')}: member {m.get('text')!r} is also a member of {other}")
    stats = collections.defaultdict(lambda: collections.Counter())
    utils = collections.defaultdict(set)
    for f in fams:
        s = stats[f.get("split")]
        s["families"] += 1
        s["members"] += len(f.get("members", []))
        s["negatives"] += len(f.get("negatives", []))
        s["written negatives"] += sum(g.get("source") == "written" for g in f.get("negatives", []))
        s["same plan"] += len(f.get("same_plan", []))
        utils[f.get("split")].add(f.get("utility"))
    cols = ["families", "utilities", "pages", "members", "negatives", "written negatives", "same plan"]
    print(f"{'split':6} " + " ".join(f"{c:>{max(9, len(c))}}" for c in cols))
    for sp in ("dev", "test"):
        s = stats[sp]
        pages = len({f["page"] for f in fams if f.get("split") == sp})
        s["utilities"], s["pages"] = len(utils[sp]), pages
        print(f"{sp:6} " + " ".join(f"{s[c]:>{max(9, len(c))}}" for c in cols))
    total_utils = len(split_of)
    if len(fams) < args.min_families:
        errors.append(f"{len(fams)} families, fewer than {args.min_families}")
    if total_utils < args.min_utilities:
        errors.append(f"{total_utils} utilities, fewer than {args.min_utilities}")
    for w in warnings[:50]:
        print("warning:", w, file=sys.stderr)
    for e in errors[:200]:
        print("error:", e, file=sys.stderr)
    if errors:
        print(f"{len(errors)} errors", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {len(fams)} families, {total_utils} utilities, {len(warnings)} warnings")


if __name__ == "__main__":
    main()
