#!/usr/bin/env python3
"""Checks refrain's family datasets (coding.jsonl, question.jsonl, and any other <set>.jsonl
given) against the family format, and prints families / members / negatives per split.
shell.jsonl is handed to validate_shell.py (split by utility, plans filled per member).

Usage: python3 training/data/validate.py [FILE...]   (default: every *.jsonl beside this script)
Exit status 1 and one line per problem when anything is wrong. Standard library only.

Checks: required keys and types; ids unique and named after the set; the split is the seeded
one for the id (so it can never drift); enough members and near misses; every member's values
occur in its text and in its answer; a near miss's values occur in its text; no text repeated
within or across families; coding plans are traces of the shape plan_store accepts (todo
steps and tool calls, at least two steps), members[0]'s answer trace is the plan, and every
member's trace has the plan's shape (same tools in the same order).
"""

import hashlib
import json
import pathlib
import re
import subprocess
import sys
from collections import Counter, defaultdict

SEED = "refrain-verifier-sets-v1"
DEV_SHARE = 60
MIN_MEMBERS = {"coding": 6, "question": 4, "shell": 4, "intent": 4}
MIN_NEGATIVES = {"coding": 3, "question": 3, "shell": 3, "intent": 3}
FAMILY_KEYS = {"id", "set", "split", "source", "license", "members", "negatives"}
OPTIONAL_KEYS = {"plan", "title", "lang"}
STEP_KEYS = {"tool", "op", "inputs", "outputs", "side_effect", "family"}
TRACE_KEYS = {"context", "steps", "outputs"}
SEEDED_SETS = {"coding", "question"}  # sets whose split is the seeded hash of the id


def split_of(fid):
    h = hashlib.sha256(f"{SEED}:{fid}".encode()).digest()
    return "dev" if int.from_bytes(h[:8], "big") % 100 < DEV_SHARE else "test"


def strings(v):
    """Every string inside a JSON value."""
    if isinstance(v, str):
        yield v
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from strings(x)


def occurs(value, v, fold):
    if fold:
        value = value.lower()
        return any(value in s.lower() for s in strings(v))
    return any(value in s for s in strings(v))


def check_trace(trace, where, errs):
    if not isinstance(trace, dict) or not set(trace) <= TRACE_KEYS or "steps" not in trace:
        errs.append(f"{where}: a trace is an object with `steps` (and optional `context`, `outputs`)")
        return None
    steps = trace["steps"]
    if not isinstance(steps, list) or len(steps) < 2:
        errs.append(f"{where}: a trace needs at least 2 steps")
        return None
    if "context" in trace and not isinstance(trace["context"], dict):
        errs.append(f"{where}: trace.context must be an object")
    shape = []
    for i, s in enumerate(steps):
        if not isinstance(s, dict) or not set(s) <= STEP_KEYS or not isinstance(s.get("tool"), str) or not s["tool"]:
            errs.append(f"{where}: step {i} must be an object with a `tool` name and only {sorted(STEP_KEYS)}")
            continue
        if "side_effect" in s and not isinstance(s["side_effect"], bool):
            errs.append(f"{where}: step {i} side_effect must be a boolean")
        if "family" in s and not isinstance(s["family"], str):
            errs.append(f"{where}: step {i} family must be a string")
        if "outputs" in s and not (isinstance(s["outputs"], list) and all(isinstance(o, str) for o in s["outputs"])):
            errs.append(f"{where}: step {i} outputs must be a list of names")
        if s["tool"] == "todo" and not (isinstance(s.get("inputs"), dict) and isinstance(s["inputs"].get("text"), str)):
            errs.append(f"{where}: todo step {i} needs inputs.text")
        if any("«" in x for x in strings(s.get("inputs"))):
            errs.append(f"{where}: step {i} has an unfilled «placeholder»")
        shape.append(s["tool"])
    return shape


def check_entry(e, kind, where, fold, errs):
    need = {"text", "values", "answer"} | ({"differs"} if kind == "negative" else set())
    if not isinstance(e, dict) or not need <= set(e):
        errs.append(f"{where}: needs {sorted(need)}")
        return False
    if not isinstance(e["text"], str) or not e["text"].strip():
        errs.append(f"{where}: empty text")
        return False
    if not isinstance(e["values"], list) or not all(isinstance(v, str) and v for v in e["values"]):
        errs.append(f"{where}: values must be a list of non-empty strings")
        return False
    if not isinstance(e["answer"], dict) or not e["answer"]:
        errs.append(f"{where}: answer must be a non-empty object")
    if kind == "negative" and (not isinstance(e["differs"], str) or not e["differs"].strip()):
        errs.append(f"{where}: `differs` must say what changed")
    for v in e["values"]:
        if not occurs(v, e["text"], fold):
            errs.append(f"{where}: value {v!r} does not occur in the text {e['text']!r}")
        if kind == "member" and not occurs(v, e["answer"], fold):
            errs.append(f"{where}: value {v!r} does not occur in the answer")
    return True


def check_family(f, set_name, line, errs, seen_texts):
    where = f"{set_name}:{line}"
    if not isinstance(f, dict):
        errs.append(f"{where}: not a JSON object")
        return None
    missing = FAMILY_KEYS - set(f)
    extra = set(f) - FAMILY_KEYS - OPTIONAL_KEYS
    if missing:
        errs.append(f"{where}: missing keys {sorted(missing)}")
        return None
    if extra:
        errs.append(f"{where}: unknown keys {sorted(extra)}")
    fid = f["id"]
    where = f"{set_name}:{line} {fid}"
    if f["set"] != set_name:
        errs.append(f"{where}: set is {f['set']!r}, the file is {set_name}.jsonl")
    if not re.fullmatch(rf"{set_name}-\d{{3,}}", str(fid)):
        errs.append(f"{where}: id must be {set_name}-NNN")
    if f["split"] not in ("dev", "test"):
        errs.append(f"{where}: split must be dev or test")
    elif set_name in SEEDED_SETS and f["split"] != split_of(fid):
        errs.append(f"{where}: split is {f['split']!r}, the seeded split for this id is {split_of(fid)!r}")
    for k in ("source", "license"):
        if not isinstance(f[k], str) or not f[k].strip():
            errs.append(f"{where}: {k} must be a non-empty string")
    if set_name == "coding" and not str(f["source"]).startswith("https://github.com/"):
        errs.append(f"{where}: a coding family cites the public repository it was drawn from")
    fold = set_name == "question"
    members, negatives = f["members"], f["negatives"]
    if not isinstance(members, list) or len(members) < MIN_MEMBERS.get(set_name, 2):
        errs.append(f"{where}: needs at least {MIN_MEMBERS.get(set_name, 2)} members")
        return None
    if not isinstance(negatives, list) or len(negatives) < MIN_NEGATIVES.get(set_name, 1):
        errs.append(f"{where}: needs at least {MIN_NEGATIVES.get(set_name, 1)} negatives")
        return None
    ok_m = [m for i, m in enumerate(members) if check_entry(m, "member", f"{where} member {i}", fold, errs)]
    ok_n = [n for i, n in enumerate(negatives) if check_entry(n, "negative", f"{where} negative {i}", fold, errs)]
    texts = [e["text"].strip().lower() for e in ok_m + ok_n]
    for t, n in Counter(texts).items():
        if n > 1:
            errs.append(f"{where}: text repeated within the family: {t!r}")
    for t in set(texts):
        if t in seen_texts:
            errs.append(f"{where}: text also in {seen_texts[t]}: {t!r}")
        seen_texts[t] = fid
    if set_name == "coding":
        vals = [tuple(m["values"]) for m in ok_m]
        if any(not v for v in vals):
            errs.append(f"{where}: every coding member names at least one value")
        for v, n in Counter(vals).items():
            if n > 1 and v:
                errs.append(f"{where}: {n} members share the values {list(v)}; each phrasing has its own")
    if set_name in ("coding", "shell") and "plan" not in f:
        errs.append(f"{where}: a {set_name} family needs a plan")
    if "plan" in f and set_name == "coding":
        plan = f["plan"]
        if not isinstance(plan, dict) or set(plan) != {"trace"}:
            errs.append(f"{where}: plan must be {{\"trace\": ...}}")
        else:
            shape = check_trace(plan["trace"], f"{where} plan", errs)
            if ok_m and ok_m[0]["answer"].get("trace") != plan["trace"]:
                errs.append(f"{where}: the plan is not members[0]'s answer trace")
            for i, m in enumerate(ok_m):
                t = m["answer"].get("trace")
                s = check_trace(t, f"{where} member {i} answer", errs) if t is not None else None
                if shape and s != shape:
                    errs.append(f"{where}: member {i}'s trace does not have the plan's shape")
                if not isinstance(m["answer"].get("steps"), list) or not m["answer"]["steps"]:
                    errs.append(f"{where}: member {i}'s answer needs its concrete steps")
    return f["split"], len(ok_m), len(ok_n)


def main(argv):
    here = pathlib.Path(__file__).resolve().parent
    files = [pathlib.Path(a) for a in argv] or sorted(here.glob("*.jsonl"))
    errs = []
    for path in files:
        set_name = path.stem
        if set_name == "shell":
            # The shell set splits by utility, not by id, and has its own checks.
            shell = subprocess.run([sys.executable, str(here / "validate_shell.py"), str(path),
                                    "--min-families", "1000", "--min-utilities", "200"])
            if shell.returncode != 0:
                errs.append(f"shell: validate_shell.py found problems in {path.name}")
            continue
        seen_ids, seen_texts = set(), {}
        counts = defaultdict(lambda: [0, 0, 0])
        with path.open(encoding="utf-8") as fh:
            for line, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    f = json.loads(raw)
                except json.JSONDecodeError as e:
                    errs.append(f"{set_name}:{line}: not JSON ({e})")
                    continue
                if isinstance(f, dict) and f.get("id") in seen_ids:
                    errs.append(f"{set_name}:{line}: duplicate id {f.get('id')}")
                if isinstance(f, dict):
                    seen_ids.add(f.get("id"))
                r = check_family(f, set_name, line, errs, seen_texts)
                if r:
                    c = counts[r[0]]
                    c[0], c[1], c[2] = c[0] + 1, c[1] + r[1], c[2] + r[2]
        total = [sum(c[i] for c in counts.values()) for i in range(3)]
        parts = ", ".join(f"{s} {c[0]} families / {c[1]} members / {c[2]} negatives" for s, c in sorted(counts.items()))
        print(f"{path.name}: {total[0]} families / {total[1]} members / {total[2]} negatives ({parts})")
    for e in errs:
        print("error:", e, file=sys.stderr)
    if errs:
        print(f"{len(errs)} problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
