#!/usr/bin/env python3
"""Builds refrain's shell-task family set from tldr-pages and hand-written paraphrases.

Each tldr example (one utility, one task) becomes a family in the format of refrain's family
datasets: `members[0]` is tldr's description with its placeholders given concrete values, the
other members are hand-written ways a developer asks for the same thing (other wordings, other
values), the negatives are the page's other examples plus hand-written near misses that change
one constraint, and `plan` is the template refrain stores for `members[0]`: one Bash step whose
command has a `{{params.<slot>}}` for each value the task names.

tldr-pages is CC BY 4.0 and the set adapts its text: the built set is committed as
`training/data/shell.jsonl` with tldr-pages credited in every family (`source`, `license`) and in
the README. The set is its own source: `extract_shell.py` recovers the paraphrase records from it,
and this script builds them back into the same bytes from a tldr checkout at the same pages.
Commands:

  build_shell.py split --tldr DIR --out split.json
      assigns every utility of PAGES to dev or test once (seeded); refuses to overwrite.
  build_shell.py notes --tldr DIR --into paraphrases.jsonl NOTES...
      turns paraphrases written in the shorthand below into paraphrase records (one per tldr
      example, keyed by page and example index), replacing records for the same examples.
  build_shell.py build --tldr DIR --paraphrases P --split S --out shell.jsonl
      writes the families of every page whose examples all have paraphrase records.

Shorthand (one block per page; a later file may add `+` and `-` lines to an example already
defined, under the same `# page` and `N` lines):
  # common/find                      the page
  0 src | *.py                       example 0 and the values of its placeholders, in order
                                     (` \| ` inside a value is a literal ` | `);
                                     `?:v` = value v not named in the text (fixed in the plan),
                                     `v@@t` = value v, named in the text as t (t inside v)
  ! find {{path/to/dir}} -maxdepth {{1}}   optional: the command with literals made placeholders
  = Find *.py files under src        members[0]: tldr's description with the values
  + where are the *.py files in src   another member, same values
  + list *.rs files in crates :: crates | *.rs   another member, other values
  - size :: Find files over 1M in src :: find src -size +1M [:: 1M | src]
                                     a near miss: what differs, text, command, values (default:
                                     values that occur in both its text and command)
Standard library only.
"""

import argparse
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tldr_pages as tl  # noqa: E402

PAGES = """
common/find common/fd common/grep common/rg common/zgrep common/sed common/sd common/awk common/cut
common/tr common/sort common/uniq common/head common/tail common/wc common/tee common/xargs
common/parallel common/cat common/tac common/nl linux/rev common/paste common/join common/comm
common/split common/shuf common/seq linux/column common/fold common/iconv linux/dos2unix
common/diff common/cmp common/patch common/delta common/jq common/yq common/mlr common/printf
common/echo common/envsubst common/strings common/hexdump common/xxd common/base64 common/md5sum
common/sha256sum common/file common/stat common/tree common/ls common/cp common/mv common/rm
common/rmdir common/mkdir common/touch common/ln common/readlink common/realpath common/basename
common/dirname common/mktemp common/truncate common/dd common/chmod common/chown common/chgrp
common/du common/df common/bat common/fzf common/entr common/watch common/bc common/tar common/zip
common/unzip common/gzip common/bzip2 common/xz common/zstd common/7z common/curl common/wget
common/http common/ssh common/scp common/rsync common/ssh-keygen common/ssh-copy-id common/ssh-add
common/ssh-keyscan common/nc common/ping common/dig common/nslookup common/host common/netstat
linux/ss linux/ip common/nmap common/tcpdump common/ab common/wrk common/openssl common/gpg
common/sops common/ps linux/top common/kill common/pkill common/pgrep common/killall common/lsof
common/nohup common/nice common/renice common/timeout common/time common/jobs common/uptime
linux/free common/uname common/nproc common/id common/env common/which common/type common/history
common/alias common/crontab linux/systemctl linux/journalctl linux/dmesg linux/strace linux/ldd
common/nm common/objdump linux/readelf common/gdb common/sudo common/tmux linux/apt linux/apt-get
linux/apt-cache linux/dpkg common/brew common/npm common/npm-install common/npm-run common/yarn
common/pnpm common/bun common/deno common/node common/pip common/pip-install common/pipx common/uv
common/poetry common/pyenv common/conda common/python common/pytest common/tox common/pre-commit
common/black common/mypy common/cargo common/cargo-build common/cargo-test common/rustup
common/rustc common/rustfmt common/go common/go-build common/go-test common/gofmt common/gcc
common/g++ common/clang common/make common/cmake common/ninja common/mvn common/gradle common/java
common/javac common/ruby common/gem common/bundle common/php common/composer common/tsc
common/eslint common/prettier common/jest common/vite common/shellcheck common/shfmt
common/pkg-config common/git common/git-add common/git-commit common/git-log common/git-diff
common/git-branch common/git-checkout common/git-stash common/git-rebase common/git-reset
common/git-push common/git-clone common/git-status common/git-show common/gh common/gh-pr
common/gh-issue common/docker common/docker-build common/docker-compose common/docker-system
common/kubectl common/kubectl-get common/kubectl-logs common/kubectl-apply common/helm
common/terraform common/ansible common/psql common/pg_dump common/pg_restore common/createdb
common/mysql common/mysqldump common/sqlite3 common/redis-cli
""".split()

SPLIT_SEED = "refrain-shell-split-1"
DEV_SHARE = 0.6
LICENSE = ("CC BY 4.0: tldr-pages team and contributors (https://github.com/tldr-pages/tldr); "
           "paraphrases adapted for refrain")

# Utilities whose examples only read (unless the command redirects, deletes or edits in place).
READ_ONLY = set("""
find fd grep rg zgrep awk cut tr sort uniq head tail wc cat tac nl rev paste join comm shuf seq
column fold diff cmp delta jq yq mlr printf echo envsubst strings hexdump xxd base64 md5sum
sha256sum file stat tree ls readlink realpath basename dirname du df bat bc ping dig nslookup host
netstat ss nmap ps top pgrep lsof uptime free uname nproc id env which type history dmesg ldd nm
objdump readelf apt-cache
""".split())
READ_ONLY_PAGES = {"git-log", "git-diff", "git-status", "git-show", "kubectl-get", "kubectl-logs"}
WRITES = re.compile(r">|-delete\b|-exec\b|\s-i\b|--in-place|\brm\b|\btee\b|\s-o\s|\s-w\b")


def utility_of(page):
    """The program a page documents: the first word of its title (`git commit` -> git)."""
    return page.title.split()[0]


def page_name(key):
    return key.split("/", 1)[1]


def family_id(key, i):
    return f"shell-{page_name(key)}-{i}"


# ---------------------------------------------------------------------------------------- split


def make_split(tldr_dir):
    """Seeded utility-level split: utilities shuffled, dev filled to ~60% of the families."""
    counts = {}
    for key in PAGES:
        page = tl.read_page(tldr_dir, key)
        counts[utility_of(page)] = counts.get(utility_of(page), 0) + len(page.examples)
    utilities = sorted(counts)
    random.Random(SPLIT_SEED).shuffle(utilities)
    total, dev, split = sum(counts.values()), 0, {}
    for u in utilities:
        if dev + counts[u] <= DEV_SHARE * total + counts[u] / 2:
            split[u] = "dev"
            dev += counts[u]
        else:
            split[u] = "test"
    return {"seed": SPLIT_SEED, "dev_share": DEV_SHARE, "unit": "utility", "utilities": split}


# ---------------------------------------------------------------------------------------- notes


def parse_fill(s):
    """`a | ?:b | c@@d` -> [[a, a], [b, None], [c, d]]; ` \\| ` is a literal ` | ` in a value."""
    out = []
    parts = [p.strip().replace("\0", " | ") for p in s.replace(" \\| ", "\0").split(" | ")]
    for part in parts if s.strip() else []:
        if part.startswith("?:"):
            out.append([part[2:], None])
        elif "@@" in part:
            v, t = part.split("@@", 1)
            out.append([v, t])
        else:
            out.append([part, part])
    return out


def parse_notes(text, where):
    """Shorthand -> {(page, index): record}."""
    records, page, rec = {}, None, None

    def err(n, msg):
        raise ValueError(f"{where}:{n}: {msg}")

    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        if line.startswith("# "):
            page, rec = line[2:].strip(), None
            continue
        m = re.fullmatch(r"(\d+)(?:\s+(.*))?", line)
        if m:
            if page is None:
                err(n, "example before any `# page` line")
            rec = {"page": page, "example": int(m.group(1)), "fill": parse_fill(m.group(2) or ""),
                   "members": [], "negatives": []}
            if (page, rec["example"]) in records:
                raise ValueError(f"{where}:{n}: {page} example {rec['example']} appears twice")
            records[(page, rec["example"])] = rec
            continue
        if rec is None:
            err(n, "line outside an example")
        tag, body = line[:2], line[2:].strip()
        if tag == "! ":
            rec["command"] = body
        elif tag == "= ":
            rec["text"] = body
        elif tag == "+ ":
            text, _, fill = body.partition(" :: ")
            rec["members"].append({"text": text.strip(), "fill": parse_fill(fill) if fill else None})
        elif tag == "- ":
            parts = [p.strip() for p in body.split(" :: ")]
            if len(parts) not in (3, 4):
                err(n, "a negative is `- differs :: text :: command [:: values]`")
            neg = {"differs": parts[0], "text": parts[1], "command": parts[2]}
            if len(parts) == 4:
                neg["values"] = [v.strip() for v in parts[3].split(" | ") if v.strip()]
            rec["negatives"].append(neg)
        else:
            err(n, f"unknown line: {line}")
    return records


def notes_cmd(args):
    old = load_paraphrases(args.into) if os.path.exists(args.into) else {}
    new = {}
    for path in args.notes:
        with open(path, encoding="utf-8") as f:
            for k, rec in parse_notes(f.read(), path).items():
                if k not in new:
                    new[k] = rec
                elif rec.get("text") or rec["fill"] or "command" in rec:
                    raise ValueError(f"{path}: {k[0]} example {k[1]} is defined again; a later file may only add members and negatives")
                else:
                    new[k]["members"] += rec["members"]
                    new[k]["negatives"] += rec["negatives"]
    for (key, i), rec in new.items():
        for m in rec["members"]:
            if m["fill"] is None:
                m["fill"] = rec["fill"]
        page = tl.read_page(args.tldr, key)
        if i >= len(page.examples):
            raise ValueError(f"{key} has no example {i}")
        rec["tldr_command"] = page.examples[i][1]
        rec.setdefault("command", page.examples[i][1])
        keys = ("page", "example", "tldr_command", "command", "fill", "text", "members", "negatives")
        ordered = {k: rec[k] for k in keys if k in rec}
        old[(key, i)] = ordered
    with open(args.into, "w", encoding="utf-8") as f:
        for k in sorted(old, key=lambda k: (PAGES.index(k[0]) if k[0] in PAGES else 10**6, k[0], k[1])):
            f.write(json.dumps(old[k], ensure_ascii=False) + "\n")
    print(f"{len(new)} examples from notes, {len(old)} in {args.into}")


def load_paraphrases(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                out[(r["page"], r["example"])] = r
    return out


# ---------------------------------------------------------------------------------------- build


class BuildError(ValueError):
    pass


def slot_name(placeholder, taken):
    """`path/to/directory` -> `directory`; `*.ext` -> `ext`; `path/to/target.tar.gz` -> `target`;
    unique within the plan."""
    if re.search(r"\d", placeholder) and not re.search(r"[a-z]{3,}", placeholder.lower()):
        placeholder = "value"  # an example value such as `+500k`, not a name
    token = (placeholder.split() or ["value"])[-1]
    part = token.rstrip("/").split("/")[-1]
    words = [w for w in re.findall(r"[a-z0-9]+", part.lower()) if w not in ("path", "to")]
    if not words:
        words = [w for w in re.findall(r"[a-z0-9]+", placeholder.lower()) if w not in ("path", "to")]
    if len(words) > 1 and "." in part and not part.startswith("*"):
        words = words[:1]
    name = "_".join(words or ["value"])[:32].strip("_") or "value"
    if name[0].isdigit():
        name = "v" + name
    cand, k = name, 2
    while cand in taken:
        cand, k = f"{name}_{k}", k + 1
    return cand


NAME_HINT = re.compile(r"branch|commit|tag|revision|ref|image|container|pod|package|module|crate|gem|formula|"
                       r"name|user|group|host|remote|repo|owner|chart|deploy|namespace|query|pattern|regex|url")


def slot_kind(placeholder, value):
    if re.fullmatch(r"https?://\S+", value):
        return "url"
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return "date"
    if re.fullmatch(r"\d+(\.\d+)?", value):
        return "number"
    if re.fullmatch(r"v?\d+\.\d+(\.\d+)?(-[0-9A-Za-z.]+)?", value):
        return "version"
    if placeholder.startswith("path/to"):
        return "path" if not re.search(r"\s", value) else "string"
    if NAME_HINT.search(placeholder):
        return "string"  # a branch, image or package name may contain a slash without being a path
    if not re.search(r"\s", value) and "/" in value:
        return "path"
    return "string"


def check_override(tldr_cmd, cmd):
    """The override may only turn literals into placeholders."""
    def plain(c):
        return tl.render(c, tl.placeholders(c))
    if plain(tldr_cmd) != plain(cmd):
        raise BuildError(f"override changes the command: {plain(cmd)!r} vs tldr {plain(tldr_cmd)!r}")


def member_values(fill):
    out = []
    for _, t in fill:
        if t is not None and t not in out:
            out.append(t)
    return out


def auto_values(text, command, known):
    out = [v for v in known if v in text and v in command]
    for tok in text.split():
        tok = tok.strip(".,;:!?()\"'`")
        if tok and re.search(r"[0-9/.*_=@~-]", tok) and tok in command and tok not in out:
            out.append(tok)
    return out


def render_other(rec):
    try:
        return tl.render(rec["command"], [v for v, _ in rec["fill"]])
    except ValueError as e:
        raise BuildError(f"{rec['page']} #{rec['example']}: {e}") from None


def template_parts(template_cmd):
    """The template as alternating literal text and slot names: [lit, name, lit, name, ..., lit]."""
    return re.split(r"\{\{params\.([A-Za-z0-9_-]+)\}\}", template_cmd)


def fills_for(parts, command, text, fill=None, at=0, k=0):
    """Every way to give the template's slots values, each named in `text`, so that the filled
    template is `command` (first found, or None)."""
    fill = fill or {}
    lit = parts[k]
    if not command.startswith(lit, at):
        return None
    at += len(lit)
    if k + 1 == len(parts):
        return dict(fill) if at == len(command) else None
    name = parts[k + 1]
    if name in fill:
        if not command.startswith(fill[name], at):
            return None
        return fills_for(parts, command, text, fill, at + len(fill[name]), k + 2)
    for end in range(at + 1, len(command) + 1):
        value = command[at:end]
        if not named(value, text):
            continue
        fill[name] = value
        got = fills_for(parts, command, text, fill, end, k + 2)
        del fill[name]
        if got is not None:
            return got
    return None


def named(value, text):
    """Whether `text` names `value` on its own (not inside a longer word)."""
    return re.search(r"(?<![A-Za-z0-9])" + re.escape(value) + r"(?![A-Za-z0-9])", text) is not None


def split_servable(negatives, template_cmd):
    """A near miss whose command the stored plan gives when filled with values its own text
    names is no near miss: serving the plan is right. Those move to `same_plan`."""
    parts = template_parts(template_cmd)
    keep, same = [], []
    for n in negatives:
        fill = fills_for(parts, n["answer"]["command"], n["text"])
        if fill is not None:
            same.append({"text": n["text"], "values": sorted(set(fill.values()), key=n["text"].find),
                         "fill": fill, "answer": n["answer"], "source": n["source"]})
        else:
            keep.append(n)
    return keep, same


def build_family(key, i, page, recs, split):
    rec = recs[(key, i)]
    desc, tldr_cmd = page.examples[i]
    if rec["tldr_command"] != tldr_cmd:
        raise BuildError(f"{key} #{i}: tldr changed since the paraphrases were written: {tldr_cmd!r}")
    cmd = rec["command"]
    check_override(tldr_cmd, cmd)
    phs = tl.placeholders(cmd)
    fill0 = rec["fill"]
    if len(fill0) != len(phs):
        raise BuildError(f"{key} #{i}: {len(phs)} placeholders {phs} but {len(fill0)} values {fill0}")
    for v, t in fill0:
        if t is not None and t not in v:
            raise BuildError(f"{key} #{i}: text form {t!r} is not inside value {v!r}")
    # slots: one per distinct text form that members[0] names
    slots, by_form, taken = [None] * len(phs), {}, set()
    decl = []
    for k, (ph, (v, t)) in enumerate(zip(phs, fill0)):
        if t is None:
            continue
        if t not in by_form:
            name = slot_name(ph, taken)
            taken.add(name)
            by_form[t] = name
            decl.append({"name": name, "type": slot_kind(ph, t)})
        slots[k] = (t, by_form[t])
    template_cmd = tl.render_template(cmd, [v for v, _ in fill0], slots)
    utility = utility_of(page)
    writes = bool(WRITES.search(tl.render(cmd, [v for v, _ in fill0])))
    read_only = (utility in READ_ONLY or page_name(key) in READ_ONLY_PAGES) and not writes

    def member(text, fill, idx):
        where = f"{key} #{i} member {idx}"
        if len(fill) != len(phs):
            raise BuildError(f"{where}: {len(phs)} placeholders but {len(fill)} values")
        command = tl.render(cmd, [v for v, _ in fill])
        values = member_values(fill)
        slot_fill = {}
        for k, ((v, t), (v0, t0)) in enumerate(zip(fill, fill0)):
            if (t is None) != (t0 is None) or (t is None and v != v0):
                raise BuildError(f"{where}: value {k + 1} must be named (or left out) as in members[0]: {v!r}")
            if t is not None:
                if t not in v:
                    raise BuildError(f"{where}: text form {t!r} is not inside value {v!r}")
                name = slots[k][1]
                if slot_fill.get(name, t) != t:
                    raise BuildError(f"{where}: slot {name} gets two values")
                slot_fill[name] = t
        for val in values:
            if val not in text:
                raise BuildError(f"{where}: value {val!r} does not occur in {text!r}")
        rendered = re.sub(r"\{\{params\.([A-Za-z0-9_-]+)\}\}", lambda m: slot_fill[m.group(1)], template_cmd)
        if rendered != command:
            raise BuildError(f"{where}: the plan filled with {slot_fill} gives {rendered!r}, not {command!r}")
        out = {"text": text, "values": values, "fill": slot_fill, "answer": {"command": command}}
        if text.strip() == command.strip():
            out["style"] = "command"  # the member is the command itself, as a terse request
        return out

    if not rec.get("text"):
        raise BuildError(f"{key} #{i}: no members[0] text (`= ...`)")
    members = [member(rec["text"], fill0, 0)]
    members += [member(m["text"], m["fill"], n + 1) for n, m in enumerate(rec["members"])]
    negatives = []
    for j, (desc_j, _) in enumerate(page.examples):
        if j == i:
            continue
        other = recs[(key, j)]
        negatives.append({
            "text": other["text"],
            "differs": f"same utility, another task: {desc_j}",
            "values": member_values(other["fill"]),
            "answer": {"command": render_other(other)},
            "source": "tldr",
        })
    own_commands = {m["answer"]["command"] for m in members}
    for n in rec["negatives"]:
        values = n.get("values") or auto_values(n["text"], n["command"], member_values(fill0))
        negatives.append({"text": n["text"], "differs": n["differs"], "values": values,
                          "answer": {"command": n["command"]}, "source": "written"})
    negatives, same_plan = split_servable(negatives, template_cmd)
    for n in negatives:
        if n["answer"]["command"] in own_commands:
            raise BuildError(f"{key} #{i}: negative {n['text']!r} has a member's command")
    texts = [m["text"] for m in members]
    for n in negatives:
        if n["text"] in texts:
            raise BuildError(f"{key} #{i}: {n['text']!r} is both a member and a negative")
    step = {"tool": "Bash", "inputs": {"command": template_cmd}, "side_effect": not read_only, "family": "shell"}
    return {
        "id": family_id(key, i),
        "set": "shell",
        "split": split[utility],
        "source": f"tldr-pages {key}.md, example {i + 1}: {desc}",
        "license": LICENSE,
        "utility": utility,
        "page": key,
        "example": i,
        "members": members,
        "negatives": negatives,
        **({"same_plan": same_plan} if same_plan else {}),
        "plan": {"template": {"description": rec["text"], "steps": [step], "slots": decl}},
    }


def mark_same_tasks(fams, tldr_dir):
    """Pages of one utility sometimes repeat an example (`npm` and `npm-install`): such families
    ask for the same task, so each lists the others in `same_task_as` (never negatives of them)."""
    shape = {}
    for f in fams:
        cmd = tl.read_page(tldr_dir, f["page"]).examples[f["example"]][1]
        key = (f["utility"], tl.render(cmd, ["<>"] * len(tl.placeholders(cmd))))
        shape.setdefault(key, []).append(f)
    for group in shape.values():
        for f in group:
            others = [g["id"] for g in group if g is not f]
            if others:
                f["same_task_as"] = others


def build_cmd(args):
    recs = load_paraphrases(args.paraphrases)
    with open(args.split, encoding="utf-8") as f:
        split = json.load(f)["utilities"]
    out, skipped, errors = [], [], []
    for key in PAGES:
        page = tl.read_page(args.tldr, key)
        if not all((key, i) in recs for i in range(len(page.examples))):
            if any((key, i) in recs for i in range(len(page.examples))):
                skipped.append(key)
            continue
        if utility_of(page) not in split:
            raise SystemExit(f"{key}: utility {utility_of(page)} is not in the split file")
        for i in range(len(page.examples)):
            try:
                out.append(build_family(key, i, page, recs, split))
            except BuildError as e:
                errors.append(str(e))
    for e in errors:
        print("error:", e, file=sys.stderr)
    for k in skipped:
        print("incomplete page left out:", k, file=sys.stderr)
    if errors and not args.keep_going:
        raise SystemExit(f"{len(errors)} errors; nothing written")
    bad = {e.split(" #")[0] for e in errors}
    out = [f for f in out if f["page"] not in bad]
    mark_same_tasks(out, args.tldr)
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for fam in out:
            f.write(json.dumps(fam, ensure_ascii=False) + "\n")
    os.replace(tmp, args.out)
    print(f"{len(out)} families from {len({f['page'] for f in out})} pages written to {args.out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("split")
    s.add_argument("--tldr", required=True)
    s.add_argument("--out", required=True)
    n = sub.add_parser("notes")
    n.add_argument("--tldr", required=True)
    n.add_argument("--into", required=True)
    n.add_argument("notes", nargs="+")
    b = sub.add_parser("build")
    b.add_argument("--tldr", required=True)
    b.add_argument("--paraphrases", required=True)
    b.add_argument("--split", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--keep-going", action="store_true", help="write the pages without errors anyway")
    args = ap.parse_args()
    if args.cmd == "split":
        if os.path.exists(args.out):
            raise SystemExit(f"{args.out} exists: the split is made once and never changed")
        sp = make_split(args.tldr)
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(sp, f, indent=1, sort_keys=True)
        print(f"{sum(v == 'dev' for v in sp['utilities'].values())} dev / "
              f"{sum(v == 'test' for v in sp['utilities'].values())} test utilities -> {args.out}")
    elif args.cmd == "notes":
        notes_cmd(args)
    else:
        build_cmd(args)


if __name__ == "__main__":
    main()
