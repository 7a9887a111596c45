"""Helpers for writing families compactly: coding families as a step template rendered per
member (with that member's values), question families as paraphrases plus near misses.

Placeholders in templates are written «name»; a member's values fill them. The rendered plan
of a coding family is the trace a coding agent's Stop hook sends to `plan_store`: the agent's
task list as `todo` steps, then its tool calls with their real inputs (Claude Code's tools, or
Codex's `shell` and `apply_patch`).
"""

import hashlib
import re

SEED = "refrain-verifier-sets-v1"
DEV_SHARE = 60
SLOT = re.compile(r"«(\w+)»")
MARK = re.compile(r"\[\[(.+?)\]\]")


def split_of(fid):
    """The family's split: seeded, by family id, never changed once assigned."""
    h = hashlib.sha256(f"{SEED}:{fid}".encode()).digest()
    return "dev" if int.from_bytes(h[:8], "big") % 100 < DEV_SHARE else "test"


# Abstract tool calls -------------------------------------------------------------------------


def R(path):
    return {"k": "read", "path": path}


def G(pattern, path=".", glob=None):
    return {"k": "grep", "pattern": pattern, "path": path, "glob": glob}


def GL(pattern):
    return {"k": "glob", "pattern": pattern}


def E(path, old, new, all=False):
    return {"k": "edit", "path": path, "old": old, "new": new, "all": all}


def W(path, content):
    return {"k": "write", "path": path, "content": content}


def B(cmd, desc=""):
    return {"k": "bash", "cmd": cmd, "desc": desc}


def fill(obj, vals):
    if isinstance(obj, str):
        def sub(m):
            if m.group(1) not in vals:
                raise KeyError(f"no value for «{m.group(1)}» in {obj!r}")
            return str(vals[m.group(1)])
        return SLOT.sub(sub, obj)
    if isinstance(obj, list):
        return [fill(x, vals) for x in obj]
    if isinstance(obj, tuple):
        return tuple(fill(x, vals) for x in obj)
    if isinstance(obj, dict):
        return {k: fill(v, vals) for k, v in obj.items()}
    return obj


def _abs(root, path):
    if path.startswith("/") or path.startswith("~"):
        return path
    if path in (".", ""):
        return root
    return f"{root}/{path}"


def _patch(kind, path, old, new):
    lines = ["*** Begin Patch", f"*** {kind} File: {path}"]
    if kind == "Update":
        lines.append("@@")
        lines += ["-" + l for l in old.split("\n")]
    lines += ["+" + l for l in new.split("\n")]
    lines.append("*** End Patch")
    return "\n".join(lines) + "\n"


def render_call(c, root, agent):
    k = c["k"]
    if agent == "claude":
        if k == "read":
            return {"tool": "Read", "inputs": {"file_path": _abs(root, c["path"])}, "side_effect": False, "family": "fs"}
        if k == "grep":
            inp = {"pattern": c["pattern"], "path": _abs(root, c["path"]), "output_mode": "content", "-n": True}
            if c["glob"]:
                inp["glob"] = c["glob"]
            return {"tool": "Grep", "inputs": inp, "side_effect": False, "family": "fs"}
        if k == "glob":
            return {"tool": "Glob", "inputs": {"pattern": c["pattern"], "path": root}, "side_effect": False, "family": "fs"}
        if k == "edit":
            inp = {"file_path": _abs(root, c["path"]), "old_string": c["old"], "new_string": c["new"]}
            if c["all"]:
                inp["replace_all"] = True
            return {"tool": "Edit", "inputs": inp, "side_effect": True, "family": "fs"}
        if k == "write":
            return {"tool": "Write", "inputs": {"file_path": _abs(root, c["path"]), "content": c["content"]}, "side_effect": True, "family": "fs"}
        if k == "bash":
            inp = {"command": c["cmd"]}
            if c["desc"]:
                inp["description"] = c["desc"]
            return {"tool": "Bash", "inputs": inp, "side_effect": True, "family": "shell"}
    elif agent == "codex":
        def shell(cmd):
            return {"tool": "shell", "inputs": {"command": ["bash", "-lc", cmd], "workdir": root}, "side_effect": True, "family": "shell"}
        if k == "read":
            return shell(f"sed -n '1,200p' {c['path']}")
        if k == "grep":
            g = f" -g '{c['glob']}'" if c["glob"] else ""
            p = "" if c["path"] in (".", "") else " " + c["path"]
            return shell(f"rg -n{g} '{c['pattern']}'{p}")
        if k == "glob":
            return shell(f"rg --files -g '{c['pattern']}'")
        if k == "edit":
            return {"tool": "apply_patch", "inputs": _patch("Update", c["path"], c["old"], c["new"]), "side_effect": True, "family": "fs"}
        if k == "write":
            return {"tool": "apply_patch", "inputs": _patch("Add", c["path"], "", c["content"].rstrip("\n")), "side_effect": True, "family": "fs"}
        if k == "bash":
            return shell(c["cmd"])
    raise ValueError(f"unknown call {k} for agent {agent}")


def render_trace(todo, calls, root, agent):
    steps = [{"tool": "todo", "inputs": {"text": t}, "side_effect": False} for t in todo]
    steps += [render_call(c, root, agent) for c in calls]
    return {"steps": steps}


# Families -----------------------------------------------------------------------------------


class M:
    """A member (or, with `differs` and `steps`, a negative): its text and the values it names."""

    def __init__(self, text, **vals):
        self.text = text
        self.vals = vals


class N:
    """A near miss: one thing changed (`differs`), its own concrete steps, the values it names."""

    def __init__(self, text, differs, steps, **vals):
        self.text = text
        self.differs = differs
        self.steps = steps
        self.vals = vals


LICENSE = "written for refrain; MIT OR Apache-2.0 (the repository's license)"

# Extra members per coding family id, appended after the family's own (set by build.py).
EXTRA = {}


def coding(id, title, lang, source, root, todo, calls, members, negatives, defaults=None, derive=None, agent="claude"):
    fam = {"id": f"coding-{id:03d}", "set": "coding", "split": split_of(f"coding-{id:03d}"), "title": title,
           "lang": lang, "source": source, "license": LICENSE, "members": [], "negatives": []}
    for m in list(members) + EXTRA.get(id, []):
        vals = dict(defaults or {})
        vals.update(m.vals)
        if derive:
            extra = derive(vals)
            for k, v in extra.items():
                if k not in m.vals:
                    vals[k] = v
        steps = fill(todo, vals)
        trace = render_trace(steps, fill(calls, vals), fill(root, vals), agent)
        fam["members"].append({"text": m.text, "values": [str(v) for v in m.vals.values()],
                               "answer": {"steps": steps, "trace": trace}})
    for n in negatives:
        fam["negatives"].append({"text": n.text, "differs": n.differs, "values": [str(v) for v in n.vals.values()],
                                 "answer": {"steps": n.steps}})
    fam["plan"] = {"trace": fam["members"][0]["answer"]["trace"]}
    return fam


def _unmark(text):
    return MARK.sub(lambda m: m.group(1), text), MARK.findall(text)


def question(id, topic, answer, members, negatives):
    """members: texts with values marked [[like this]]; negatives: (text, differs, answer)."""
    fid = f"question-{id:03d}"
    fam = {"id": fid, "set": "question", "split": split_of(fid), "title": topic, "source": "written for refrain",
           "license": LICENSE, "members": [], "negatives": []}
    for t in members:
        text, vals = _unmark(t)
        fam["members"].append({"text": text, "values": vals, "answer": {"text": answer}})
    for t, differs, ans in negatives:
        text, vals = _unmark(t)
        fam["negatives"].append({"text": text, "differs": differs, "values": vals, "answer": {"text": ans}})
    return fam


def prev_version(v):
    """The release before `v` (1.5.5 -> 1.5.4, 1.38.0 -> 1.37.0), for the line an edit replaces."""
    parts = v.split(".")
    nums = [int(p) if p.isdigit() else None for p in parts]
    for i in range(len(parts) - 1, -1, -1):
        if nums[i]:
            parts[i] = str(nums[i] - 1)
            if i == 0 and len(parts) > 1 and nums[1] == 0:
                parts[1] = "9"
            return ".".join(parts)
    return v
