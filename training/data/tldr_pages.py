"""Reading tldr-pages: one page is one utility, each example a description and a command.

The shell set is built from the English pages of a tldr-pages checkout. This module parses a
page into its examples and splits each command into literal text, value placeholders
(`{{path/to/file}}`) and option placeholders (`{{[-r|--recursive]}}`), following the tldr
client specification (escaped `\\{\\{`, outer braces of `{{stash@{0}}}`, short/long options).
Standard library only.
"""

import os
import re

EXAMPLE_DESC = re.compile(r"^- (.*?):?\s*$")
EXAMPLE_CMD = re.compile(r"^`(.*)`\s*$")


class Page:
    """One tldr page: `key` is `<platform>/<name>`, `examples` a list of (description, command)."""

    def __init__(self, key, title, summary, examples):
        self.key = key
        self.title = title
        self.summary = summary
        self.examples = examples


def page_path(tldr_dir, key):
    """The file of page `common/find` inside a tldr checkout."""
    return os.path.join(tldr_dir, "pages", key + ".md")


def read_page(tldr_dir, key):
    """Parses one page; raises ValueError when the file is not a tldr page."""
    with open(page_path(tldr_dir, key), encoding="utf-8") as f:
        lines = f.read().splitlines()
    title, summary, examples, desc = None, [], [], None
    for line in lines:
        if line.startswith("# ") and title is None:
            title = line[2:].strip()
        elif line.startswith("> "):
            summary.append(line[2:].strip())
        elif line.startswith("- "):
            desc = EXAMPLE_DESC.match(line).group(1).strip()
        elif EXAMPLE_CMD.match(line) and desc is not None:
            examples.append((desc, EXAMPLE_CMD.match(line).group(1)))
            desc = None
    if title is None or not examples:
        raise ValueError(f"{key}: not a tldr page (no title or no examples)")
    return Page(key, title, " ".join(summary), examples)


def tokens(command):
    """Splits a tldr command into ("text", s), ("value", placeholder) and ("option", short, long)."""
    out, buf, i, n = [], [], 0, len(command)
    while i < n:
        if command.startswith("\\{\\{", i):
            buf.append("{{")
            i += 4
        elif command.startswith("\\}\\}", i):
            buf.append("}}")
            i += 4
        elif command.startswith("{{", i):
            end = _closing(command, i + 2)
            if end < 0:
                raise ValueError(f"unclosed placeholder in: {command}")
            inner = command[i + 2 : end]
            if buf:
                out.append(("text", "".join(buf)))
                buf = []
            opt = re.fullmatch(r"\[([^|\]]*)\|([^\]]*)\]", inner)
            out.append(("option", opt.group(1), opt.group(2)) if opt else ("value", inner))
            i = end + 2
        else:
            buf.append(command[i])
            i += 1
    if buf:
        out.append(("text", "".join(buf)))
    return out


def _closing(command, start):
    """Index of the `}}` closing a placeholder opened before `start` (outer braces win)."""
    depth, i = 0, start
    while i < len(command) - 1:
        c = command[i]
        if command.startswith("\\}\\}", i) or command.startswith("\\{\\{", i):
            i += 4
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            if depth > 0:
                depth -= 1
            elif command[i + 1] == "}":
                return i
        i += 1
    return -1


def placeholders(command):
    """The distinct value placeholders of a command, in order of first appearance (tldr writes
    the same placeholder twice when the same value goes in two places)."""
    out = []
    for t in tokens(command):
        if t[0] == "value" and t[1] not in out:
            out.append(t[1])
    return out


def render(command, fill, long_options=False):
    """The command with placeholder number k (see `placeholders`) replaced by fill[k] and option
    placeholders in one form."""
    names = placeholders(command)
    if len(fill) != len(names):
        raise ValueError(f"{len(names)} placeholders but {len(fill)} values for: {command}")
    value = dict(zip(names, fill))
    out = []
    for t in tokens(command):
        if t[0] == "text":
            out.append(t[1])
        elif t[0] == "option":
            out.append(t[2] if long_options or not t[1] else t[1])
        else:
            out.append(value[t[1]])
    return "".join(out)


def render_template(command, fill, slots):
    """Like `render`, with `slots[k]` = (text form, slot name) put as `{{params.name}}` into the
    k-th value (None keeps the literal value)."""
    names = placeholders(command)
    index = {n: k for k, n in enumerate(names)}
    out = []
    for t in tokens(command):
        if t[0] == "text":
            out.append(t[1])
        elif t[0] == "option":
            out.append(t[1] or t[2])
        else:
            k = index[t[1]]
            value, slot = fill[k], slots[k]
            if slot is None:
                out.append(value)
            else:
                form, name = slot
                at = value.find(form)
                out.append(value[:at] + "{{params." + name + "}}" + value[at + len(form) :])
    return "".join(out)


def list_pages(tldr_dir, platforms=("common", "linux", "osx")):
    """Every page key of the given platforms, sorted."""
    keys = []
    for p in platforms:
        d = os.path.join(tldr_dir, "pages", p)
        keys += [f"{p}/{f[:-3]}" for f in sorted(os.listdir(d)) if f.endswith(".md")]
    return keys
