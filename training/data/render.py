"""Renders one family as written in families/*.toml into the JSONL record build.py writes.

The family files are data; everything they can ask of code is here, small and shared:

- Templates: «name» is the member's value `name`; «name|filter|filter:arg» passes it through
  FILTERS (string changes such as `lower`, `basename`, `prev_version`).
- `derive`: values computed for each member from its own (a template, a `switch` on a template
  with `cases` and a `default`, or an `if` on a template with `then` / `else`). A member's own
  value always wins over a derived one; later entries may use earlier ones.
- Tool calls: `{read}`, `{grep, path, glob}`, `{glob}`, `{edit, old, new, all}`,
  `{write, content}`, `{bash, desc}`, rendered as the trace a coding agent's Stop hook sends to
  `plan_store`: the task list as `todo` steps, then the calls with their real inputs (Claude
  Code's tools, or Codex's `shell` and `apply_patch` with `agent = "codex"`).
"""

import hashlib
import re

SEED = "refrain-verifier-sets-v1"
DEV_SHARE = 60
LICENSE = "written for refrain; MIT OR Apache-2.0 (the repository's license)"
SLOT = re.compile(r"«([^«»]+)»")
MARK = re.compile(r"\[\[(.+?)\]\]")


class FamilyError(Exception):
    """A family file asks for something the generator cannot do; the message says what to fix."""


def split_of(fid):
    """The family's split: seeded, by family id, never changed once assigned."""
    h = hashlib.sha256(f"{SEED}:{fid}".encode()).digest()
    return "dev" if int.from_bytes(h[:8], "big") % 100 < DEV_SHARE else "test"


# Filters ------------------------------------------------------------------------------------


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


def route_name(path):
    """The last literal segment of a URL route as an identifier (`/users/{id}` -> users)."""
    segs = [s for s in path.split("/") if s and not s.startswith("{") and not s.startswith(":")]
    return segs[-1].replace("-", "_") if segs else "root"


def route_with(path, value):
    """The route with every {param} or :param segment set to `value` (`/users/{id}` -> /users/1)."""
    path = re.sub(r"\{[^}]+\}", value, path)
    return re.sub(r"(?<=/):[^/]+", value, path)


def _words(s):
    return re.split(r"[_\-]", s)


FILTERS = {
    "lower": str.lower,
    "upper": str.upper,
    "title": str.title,
    "cap": lambda s: s[:1].upper() + s[1:],
    "camel": lambda s: _words(s)[0] + "".join(p.title() for p in _words(s)[1:]),
    "pascal": lambda s: "".join(p.title() for p in _words(s)),
    "snake": lambda s: re.sub(r"(?<!^)(?=[A-Z])", "_", s).lower(),
    "words": lambda s: " ".join(w.lower() for w in re.findall(r"[A-Z][a-z]*", s)),
    "ident": lambda s: re.sub(r"\W+", "_", s).strip("_"),
    "basename": lambda s: s.rstrip("/").rsplit("/", 1)[-1],
    "dirname": lambda s: s.rsplit("/", 1)[0] if "/" in s else "",
    "noext": lambda s: s.rsplit(".", 1)[0] if "." in s.rsplit("/", 1)[-1] else s,
    "prev_version": prev_version,
    "route_name": route_name,
    "route_with": route_with,
    "part": lambda s, sep, i: s.split(sep)[int(i)],
    "head": lambda s, n: s[: int(n)],
    "minus": lambda s, n: str(int(s) - int(n)),
    "strip": lambda s, chars: s.strip(chars),
    "lstrip": lambda s, chars: s.lstrip(chars),
    "rstrip": lambda s, chars: s.rstrip(chars),
    "removeprefix": str.removeprefix,
    "removesuffix": str.removesuffix,
    "replace": lambda s, old, new: s.replace(old, new),
}


def _slot(expr, vals, optional):
    name, *filters = expr.split("|")
    if name not in vals:
        if optional:
            return ""
        raise FamilyError(f"no value for «{name}»: give it in the member, in `defaults` or in `derive`")
    out = str(vals[name])
    for f in filters:
        fname, *args = f.split(":")
        if fname not in FILTERS:
            raise FamilyError(f"unknown filter {fname!r} in «{expr}»; known: {', '.join(sorted(FILTERS))}")
        try:
            out = FILTERS[fname](out, *args)
        except (TypeError, ValueError, IndexError) as e:
            raise FamilyError(f"filter {f!r} in «{expr}» failed on {out!r}: {e}") from e
    return out


def fill(obj, vals, optional=False):
    """Fills every «slot» in strings, lists and tables with the member's values."""
    if isinstance(obj, str):
        return SLOT.sub(lambda m: _slot(m.group(1), vals, optional), obj)
    if isinstance(obj, list):
        return [fill(x, vals, optional) for x in obj]
    if isinstance(obj, dict):
        return {k: fill(v, vals, optional) for k, v in obj.items()}
    return obj


def derive_one(key, spec, vals):
    """One derived value: a template, a `switch` with `cases` / `default`, or an `if`."""
    if isinstance(spec, str):
        return fill(spec, vals)
    if "switch" in spec:
        got = fill(spec["switch"], vals)
        cases = spec.get("cases", {})
        if got in cases:
            return fill(cases[got], vals)
        if "default" in spec:
            return fill(spec["default"], vals)
        raise FamilyError(f"derive.{key}: no case for {got!r} and no default; cases: {', '.join(cases)}")
    if "if" in spec:
        got = fill(spec["if"], vals, optional=True)
        yes = spec["contains"] in got if "contains" in spec else got != ""
        return fill(spec.get("then" if yes else "else", ""), vals)
    raise FamilyError(f"derive.{key}: write a template, a table with `switch`, or a table with `if`")


# Tool calls ---------------------------------------------------------------------------------

KINDS = ("read", "grep", "edit", "write", "bash", "glob")


def call_kind(c):
    kinds = [k for k in KINDS if k in c and not (k == "glob" and "grep" in c)]
    if len(kinds) != 1:
        raise FamilyError(f"a call names one of {', '.join(KINDS)}; this one has {kinds or 'none'}: {c}")
    return kinds[0]


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


def _claude(k, c, root):
    fs = {"side_effect": False, "family": "fs"}
    if k == "read":
        return {"tool": "Read", "inputs": {"file_path": _abs(root, c["read"])}, **fs}
    if k == "grep":
        inp = {"pattern": c["grep"], "path": _abs(root, c.get("path", ".")), "output_mode": "content", "-n": True}
        if c.get("glob"):
            inp["glob"] = c["glob"]
        return {"tool": "Grep", "inputs": inp, **fs}
    if k == "glob":
        return {"tool": "Glob", "inputs": {"pattern": c["glob"], "path": root}, **fs}
    if k == "edit":
        inp = {"file_path": _abs(root, c["edit"]), "old_string": c["old"], "new_string": c["new"]}
        if c.get("all"):
            inp["replace_all"] = True
        return {"tool": "Edit", "inputs": inp, "side_effect": True, "family": "fs"}
    if k == "write":
        inp = {"file_path": _abs(root, c["write"]), "content": c["content"]}
        return {"tool": "Write", "inputs": inp, "side_effect": True, "family": "fs"}
    inp = {"command": c["bash"]}
    if c.get("desc"):
        inp["description"] = c["desc"]
    return {"tool": "Bash", "inputs": inp, "side_effect": True, "family": "shell"}


def _codex(k, c, root):
    def shell(cmd):
        inputs = {"command": ["bash", "-lc", cmd], "workdir": root}
        return {"tool": "shell", "inputs": inputs, "side_effect": True, "family": "shell"}

    if k == "read":
        return shell(f"sed -n '1,200p' {c['read']}")
    if k == "grep":
        g = f" -g '{c['glob']}'" if c.get("glob") else ""
        path = c.get("path", ".")
        p = "" if path in (".", "") else " " + path
        return shell(f"rg -n{g} '{c['grep']}'{p}")
    if k == "glob":
        return shell(f"rg --files -g '{c['glob']}'")
    if k == "edit":
        return {"tool": "apply_patch", "inputs": _patch("Update", c["edit"], c["old"], c["new"]),
                "side_effect": True, "family": "fs"}
    if k == "write":
        return {"tool": "apply_patch", "inputs": _patch("Add", c["write"], "", c["content"].rstrip("\n")),
                "side_effect": True, "family": "fs"}
    return shell(c["bash"])


AGENTS = {"claude": _claude, "codex": _codex}


def render_trace(todo, calls, root, agent):
    steps = [{"tool": "todo", "inputs": {"text": t}, "side_effect": False} for t in todo]
    steps += [AGENTS[agent](call_kind(c), c, root) for c in calls]
    return {"steps": steps}


# Families -----------------------------------------------------------------------------------

CODING_KEYS = {"id", "title", "lang", "source", "root", "agent", "defaults", "derive", "todo", "calls", "members",
               "negatives"}
QUESTION_KEYS = {"id", "title", "answer", "members", "negatives"}


def _check_keys(f, allowed, optional=()):
    extra = set(f) - allowed
    if extra:
        raise FamilyError(f"unknown keys {sorted(extra)}; a family has {', '.join(sorted(allowed))}")
    missing = allowed - set(optional) - set(f)
    if missing:
        raise FamilyError(f"missing keys {sorted(missing)}")
    if not f["members"]:
        raise FamilyError("no members: a family needs at least one")


def coding(f):
    """A coding family: the step template rendered once per member with that member's values."""
    _check_keys(f, CODING_KEYS, optional=("agent", "defaults", "derive"))
    agent = f.get("agent", "claude")
    if agent not in AGENTS:
        raise FamilyError(f"agent {agent!r}: write one of {', '.join(AGENTS)}")
    fid = f"coding-{f['id']:03d}"
    fam = {"id": fid, "set": "coding", "split": split_of(fid), "title": f["title"], "lang": f["lang"],
           "source": f["source"], "license": LICENSE, "members": [], "negatives": []}
    for m in f["members"]:
        own = {k: v for k, v in m.items() if k != "text"}
        vals = {**f.get("defaults", {}), **own}
        for key, spec in f.get("derive", {}).items():
            if key not in own:
                vals[key] = derive_one(key, spec, vals)
        steps = fill(f["todo"], vals)
        trace = render_trace(steps, fill(f["calls"], vals), fill(f["root"], vals), agent)
        fam["members"].append({"text": m["text"], "values": [str(v) for v in own.values()],
                               "answer": {"steps": steps, "trace": trace}})
    for n in f["negatives"]:
        own = [str(v) for k, v in n.items() if k not in ("text", "differs", "steps")]
        fam["negatives"].append({"text": n["text"], "differs": n["differs"], "values": own,
                                 "answer": {"steps": n["steps"]}})
    fam["plan"] = {"trace": fam["members"][0]["answer"]["trace"]}
    return fam


def _unmark(text):
    return MARK.sub(lambda m: m.group(1), text), MARK.findall(text)


def question(f):
    """A question family: paraphrases sharing one answer (values marked [[like this]]) and near misses."""
    _check_keys(f, QUESTION_KEYS)
    fid = f"question-{f['id']:03d}"
    fam = {"id": fid, "set": "question", "split": split_of(fid), "title": f["title"], "source": "written for refrain",
           "license": LICENSE, "members": [], "negatives": []}
    for t in f["members"]:
        text, vals = _unmark(t)
        fam["members"].append({"text": text, "values": vals, "answer": {"text": f["answer"]}})
    for n in f["negatives"]:
        text, vals = _unmark(n["text"])
        fam["negatives"].append({"text": text, "differs": n["differs"], "values": vals, "answer": {"text": n["answer"]}})
    return fam


RENDER = {"coding": coding, "question": question}
