#!/usr/bin/env python3
"""Recovers the paraphrase records `build_shell.py build` reads from a built shell set.

The committed `shell.jsonl` is the source of the shell set: it holds every hand-written member
and near miss. To change the set, extract the records, edit them (or add shorthand notes with
`build_shell.py notes`), build again and validate; a build from unchanged records reproduces the
set byte for byte, which `--check` verifies:

  extract_shell.py --tldr DIR --set shell.jsonl --out paraphrases.jsonl [--check]

What a built set cannot say, because the build drops it, is not recovered and changes nothing in
a rebuild: the `differs` note of a written near miss the stored plan turned out to serve rightly
(it moved to `same_plan`), and placeholders a command override added for values the text never
names. Standard library only.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_shell as bs  # noqa: E402
import tldr_pages as tl  # noqa: E402

PARAM = re.compile(r"\{\{params\.([A-Za-z0-9_-]+)\}\}")
MOVED = "served rightly by the stored plan (moved to same_plan when built)"


class ExtractError(ValueError):
    pass


def pattern(command, long_options=False):
    """A regex matching `command` rendered with any values: group k is placeholder k (a value
    tldr writes twice must be the same both times)."""
    names = tl.placeholders(command)
    out, seen = [], set()
    for t in tl.tokens(command):
        if t[0] == "text":
            out.append(re.escape(t[1]))
        elif t[0] == "option":
            out.append(re.escape(t[2] if long_options or not t[1] else t[1]))
        else:
            k = names.index(t[1])
            out.append(f"(?P=p{k})" if k in seen else f"(?P<p{k}>.*?)")
            seen.add(k)
    return re.compile("".join(out) + r"\Z", re.S), len(names)


def split_values(command, rendered, long_options=False):
    """The placeholder values that render `command` as `rendered` (first match), or None. A
    `{{params.x}}` of a template in `rendered` is never cut in two and only matches itself."""
    names = list(dict.fromkeys(PARAM.findall(rendered)))
    enc = PARAM.sub(lambda m: slot_char(names.index(m.group(1))), rendered)
    rx, n = pattern(command, long_options)
    m = rx.match(enc)
    if m is None:
        return None
    return [decode(m.group(f"p{k}"), names) for k in range(n)]


def slot_char(k):
    """The private-use character that stands for the k-th slot while a template is matched."""
    return chr(0xE000 + k)


def decode(s, names):
    return re.sub("[\ue000-\uf8ff]", lambda m: "{{params." + names[ord(m.group()) - 0xE000] + "}}", s)


def raw(token):
    """A token of `tl.tokens` written back in tldr's syntax."""
    if token[0] == "text":
        return token[1].replace("{{", "\\{\\{").replace("}}", "\\}\\}")
    if token[0] == "option":
        return "{{[" + token[1] + "|" + token[2] + "]}}"
    return "{{" + token[1] + "}}"


def slot_spans(template, fill, rendered):
    """Where each `{{params.x}}` of the template sits in `rendered` (the template filled with
    `fill`): a list of (start, end)."""
    spans, at, pos = [], 0, 0
    for m in PARAM.finditer(template):
        pos += m.start() - at
        value = fill[m.group(1)]
        spans.append((pos, pos + len(value)))
        pos += len(value)
        at = m.end()
    if PARAM.sub(lambda m: fill[m.group(1)], template) != rendered:
        raise ExtractError(f"the template filled with {fill} is not {rendered!r}")
    return spans


def word_override(tokens, template):
    """The override when the record changed a literal's value too (`split -b {{512}}` filled
    with 512k): each word of tldr's literal text holding a slot of the template becomes a
    placeholder named by the literal word."""
    names = [t[1] for t in tokens if t[0] == "value"]
    parts, seen, words = [], set(), []
    for k, t in enumerate(tokens):
        if t[0] == "option":
            parts.append(re.escape(t[1] or t[2]))
        elif t[0] == "value":
            j = names.index(t[1])
            parts.append(f"(?P=p{j})" if j in seen else f"(?P<p{j}>.*?)")
            seen.add(j)
        else:
            for w in re.split(r"(\s+)", t[1]):
                if not w or w.isspace():
                    parts.append(re.escape(w))
                    continue
                parts.append(f"(?P<w{len(words)}>{re.escape(w)}|\\S*[\ue000-\uf8ff]\\S*)")
                words.append(w)
    m = re.compile("".join(parts) + r"\Z", re.S).match(PARAM.sub("\ue000", template))
    if m is None:
        raise ExtractError(f"the template {template!r} does not fit tldr's command")
    out, n = [], 0
    for t in tokens:
        if t[0] != "text":
            out.append(raw(t))
            continue
        for w in re.split(r"(\s+)", t[1]):
            if not w or w.isspace():
                out.append(w)
                continue
            out.append("{{" + w + "}}" if m.group(f"w{n}") != w else raw(("text", w)))
            n += 1
    return "".join(out)


def override_for(tldr_cmd, template, fill0, answer0):
    """The command the paraphrase record names: tldr's, or tldr's with the literal spans the
    template made slots turned into placeholders (`cut -c {{5}}`)."""
    if split_values(tldr_cmd, template) is not None:
        return tldr_cmd
    tokens = tl.tokens(tldr_cmd)
    names = tl.placeholders(tldr_cmd)
    parts, seen = [], set()
    for k, t in enumerate(tokens):
        if t[0] == "text":
            parts.append(f"(?P<t{k}>{re.escape(t[1])})")
        elif t[0] == "option":
            parts.append(f"(?P<t{k}>{re.escape(t[1] or t[2])})")
        else:
            j = names.index(t[1])
            parts.append(f"(?P=p{j})" if j in seen else f"(?P<p{j}>.*?)")
            seen.add(j)
    m = re.compile("".join(parts) + r"\Z", re.S).match(answer0)
    if m is None:
        return word_override(tokens, template)
    spans = slot_spans(template, fill0, answer0)
    out = []
    for k, t in enumerate(tokens):
        if t[0] != "text":
            out.append(raw(t))
            continue
        lo, hi = m.span(f"t{k}")
        cuts = [(a, b) for a, b in spans if lo <= a and b <= hi]
        at = lo
        for a, b in sorted(set(cuts)):
            out.append(raw(("text", answer0[at:a])))
            out.append("{{" + answer0[a:b] + "}}")
            at = b
        out.append(raw(("text", answer0[at:hi])))
    command = "".join(out)
    if split_values(command, template) is None:
        raise ExtractError(f"no placeholders of {tldr_cmd!r} fit the template {template!r}")
    return command


def fill_list(command, pieces, answer, fill):
    """[[value, text form or None], ...] for one member: each value is the template's piece
    for that placeholder filled with the member's slot values; the filled command must be the
    member's own."""
    out = []
    for piece in pieces:
        names = PARAM.findall(piece)
        if len(names) > 1:
            raise ExtractError(f"two slots in one value {piece!r}")
        if not names:
            out.append([piece, None])
        else:
            out.append([PARAM.sub(lambda m: fill[m.group(1)], piece), fill[names[0]]])
    if tl.render(command, [v for v, _ in out]) != answer:
        raise ExtractError(f"the values {out} do not give {answer!r}")
    return out


def record_for(fam, tldr_dir):
    page = tl.read_page(tldr_dir, fam["page"])
    tldr_cmd = page.examples[fam["example"]][1]
    template = fam["plan"]["template"]["steps"][0]["inputs"]["command"]
    m0 = fam["members"][0]
    command = override_for(tldr_cmd, template, m0["fill"], m0["answer"]["command"])
    pieces = split_values(command, template)
    if pieces is None:
        raise ExtractError(f"{fam['id']}: the template {template!r} does not fit {command!r}")
    try:
        fill0 = fill_list(command, pieces, m0["answer"]["command"], m0["fill"])
        members = [{"text": m["text"], "fill": fill_list(command, pieces, m["answer"]["command"], m["fill"])}
                   for m in fam["members"][1:]]
    except ExtractError as e:
        raise ExtractError(f"{fam['id']}: {e}") from None
    negatives = []
    written = [n for n in fam["negatives"] if n["source"] == "written"]
    written += [s for s in fam.get("same_plan", []) if s["source"] == "written"]
    known = bs.member_values(fill0)
    for n in written:
        neg = {"differs": n.get("differs", MOVED), "text": n["text"], "command": n["answer"]["command"]}
        if "differs" in n and n["values"] != bs.auto_values(n["text"], neg["command"], known):
            neg["values"] = n["values"]
        negatives.append(neg)
    rec = {"page": fam["page"], "example": fam["example"], "tldr_command": tldr_cmd, "command": command,
           "fill": fill0, "text": m0["text"], "members": members, "negatives": negatives}
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tldr", required=True, help="a tldr-pages checkout (the pages the set was built from)")
    ap.add_argument("--set", required=True, help="the built set (shell.jsonl)")
    ap.add_argument("--out", required=True, help="where to write the paraphrase records")
    ap.add_argument("--check", action="store_true",
                    help="build again from the records and require the same bytes as --set")
    args = ap.parse_args()
    with open(args.set, encoding="utf-8") as f:
        fams = [json.loads(line) for line in f if line.strip()]
    recs, errors = [], []
    for fam in fams:
        try:
            recs.append(record_for(fam, args.tldr))
        except (ExtractError, ValueError) as e:
            errors.append(str(e))
    for e in errors:
        print("error:", e, file=sys.stderr)
    if errors:
        raise SystemExit(f"{len(errors)} families could not be extracted; nothing written")
    with open(args.out, "w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(recs)} paraphrase records written to {args.out}")
    if not args.check:
        return
    with tempfile.TemporaryDirectory() as tmp:
        split = os.path.join(tmp, "split.json")
        with open(split, "w", encoding="utf-8") as f:
            json.dump({"utilities": {fam["utility"]: fam["split"] for fam in fams}}, f)
        out = os.path.join(tmp, "shell.jsonl")
        subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "build_shell.py"),
                        "build", "--tldr", args.tldr, "--paraphrases", args.out, "--split", split, "--out", out],
                       check=True)
        with open(out, "rb") as a, open(args.set, "rb") as b:
            same = a.read() == b.read()
    if not same:
        raise SystemExit(f"a build from the extracted records differs from {args.set}")
    print(f"a build from the extracted records reproduces {args.set} byte for byte")


if __name__ == "__main__":
    main()
