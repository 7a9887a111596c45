"""Hard negatives and light paraphrases generated from a request text.

A verifier learns "same request" only if it sees requests that look almost the same and are not:
one number, path, flag, entity or version changed; a negation; the direction swapped; the
antonym action; the same verb on another object. Each generator returns the changed text and
what changed, or None when the rule does not apply to that text. `paraphrase` makes positives
that keep the meaning (synonym verbs, question frames), so the model cannot learn "any edit
means different".
"""
from __future__ import annotations

import random
import re

ANTONYMS = [
    ("add", "remove"), ("enable", "disable"), ("increase", "decrease"), ("upgrade", "downgrade"),
    ("bump", "downgrade"), ("keep", "discard"), ("start", "stop"), ("before", "after"),
    ("minimum", "maximum"), ("min", "max"), ("first", "last"), ("largest", "smallest"),
    ("biggest", "smallest"), ("older", "newer"), ("oldest", "newest"), ("ascending", "descending"),
    ("encrypt", "decrypt"), ("compress", "decompress"), ("upload", "download"), ("push", "pull"),
    ("import", "export"), ("open", "close"), ("show", "hide"), ("lock", "unlock"),
    ("install", "uninstall"), ("include", "exclude"), ("allow", "deny"), ("more", "less"),
    ("above", "below"), ("lowercase", "uppercase"), ("lower", "upper"), ("mount", "unmount"),
    ("connect", "disconnect"), ("attach", "detach"), ("zip", "unzip"), ("block", "unblock"),
    ("subscribe", "unsubscribe"), ("follow", "unfollow"), ("on", "off"), ("inside", "outside"),
    ("public", "private"), ("read", "write"), ("send", "receive"), ("buy", "sell"),
    ("turn on", "turn off"), ("true", "false"), ("with", "without"), ("enter", "exit"),
    ("serialize", "deserialize"), ("encode", "decode"), ("merge", "split"), ("join", "split"),
    ("insert", "delete"), ("create", "delete"), ("append", "prepend"), ("left", "right"),
    ("head", "tail"), ("start", "end"), ("begin", "end"), ("local", "remote"), ("up", "down"),
    ("increment", "decrement"), ("expand", "collapse"), ("sort", "shuffle"), ("hard", "soft"),
    ("staged", "unstaged"), ("tracked", "untracked"), ("recursive", "non-recursive"),
    ("case-sensitive", "case-insensitive"), ("synchronous", "asynchronous"), ("sync", "async"),
    ("earlier", "later"), ("today", "yesterday"), ("tomorrow", "yesterday"), ("cheap", "expensive"),
    ("hot", "cold"), ("long", "short"), ("fast", "slow"), ("new", "old"), ("win", "lose"),
]
_ANT = {}
for a, b in ANTONYMS:
    _ANT.setdefault(a, b)
    _ANT.setdefault(b, a)

# Entities of one kind: swapping one for another keeps the shape and changes the answer.
ENTITY_SETS = [
    ["python", "java", "javascript", "typescript", "rust", "go", "c++", "c#", "ruby", "php",
     "kotlin", "swift", "scala", "perl", "bash", "haskell"],
    ["mysql", "postgresql", "sqlite", "mongodb", "redis", "oracle", "cassandra"],
    ["linux", "windows", "macos", "ubuntu", "debian", "android", "ios", "fedora"],
    ["json", "yaml", "xml", "csv", "toml", "html", "markdown", "pdf"],
    ["string", "integer", "list", "dictionary", "tuple", "array", "float", "set", "dataframe",
     "int", "char", "byte", "boolean", "date", "datetime", "timestamp"],
    ["file", "directory", "folder", "symlink", "process", "user", "group", "branch", "tag",
     "commit", "container", "image", "volume", "package", "module", "function", "class",
     "variable", "column", "row", "table", "line", "word", "character"],
    ["git", "docker", "npm", "pip", "cargo", "apt", "kubectl", "yarn", "maven", "gradle"],
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"],
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"],
    ["paris", "london", "new york", "tokyo", "berlin", "boston", "chicago", "madrid", "rome",
     "seattle", "sydney", "toronto", "moscow", "delhi", "beijing"],
    ["chrome", "firefox", "safari", "edge"],
    ["aws", "azure", "gcp"],
    ["react", "angular", "vue", "django", "flask", "rails", "spring", "express"],
    ["pandas", "numpy", "matplotlib", "scipy", "tensorflow", "pytorch", "sklearn"],
    ["red", "blue", "green", "yellow", "black", "white"],
    ["dollars", "euros", "pounds", "yen"],
    ["days", "hours", "minutes", "seconds", "weeks", "months", "years"],
    ["kb", "mb", "gb", "tb"],
    ["stdout", "stderr", "stdin"],
    ["tcp", "udp", "http", "https", "ssh", "ftp"],
    ["spotify", "youtube", "netflix", "pandora"],
    ["alarm", "timer", "reminder"],
]
_ENT = {}
for group in ENTITY_SETS:
    for e in group:
        _ENT.setdefault(e, group)

SYNONYMS = [
    ["create", "make", "generate"], ["delete", "remove", "erase"], ["show", "display", "print"],
    ["find", "search for", "locate", "look for"], ["list", "show", "enumerate"],
    ["get", "retrieve", "obtain", "fetch"], ["change", "modify", "alter"],
    ["run", "execute"], ["check", "verify"], ["set", "configure"], ["use", "utilize"],
    ["directory", "folder"], ["quickly", "fast"], ["big", "large"], ["begin", "start"],
    ["convert", "transform", "turn"], ["combine", "merge", "join"], ["count", "tally"],
    ["compute", "calculate"], ["copy", "duplicate"], ["edit", "modify"], ["view", "see"],
    ["display", "show"], ["launch", "start"], ["terminate", "kill"], ["file's", "file"],
    ["every", "each", "all"], ["contents", "content"],
]
_SYN = {}
for group in SYNONYMS:
    for w in group:
        _SYN.setdefault(w, [x for x in group if x != w])

FRAMES = ["how do i {}", "how to {}", "how can i {}", "i want to {}", "{}", "please {}",
          "what is the way to {}", "is there a way to {}", "help me {}", "i need to {}"]
_FRAME_RX = re.compile(r"^(how (do|can|would|should) (i|you|we)|how to|i want to|i need to|"
                       r"please|is there a way to|what is the way to|help me|can you)\s+", re.I)


def _swap_word(text: str, table: dict, rng: random.Random) -> tuple[str, str, str] | None:
    words = list(re.finditer(r"(?<![\w/.<-])[A-Za-z][A-Za-z+#'-]*(?![\w/>])", text))
    rng.shuffle(words)
    for m in words:
        w = m.group(0)
        repl = table.get(w.lower())
        if repl is None:
            continue
        if isinstance(repl, list):
            choices = [x for x in repl if x != w.lower()]
            if not choices:
                continue
            repl = rng.choice(choices)
        if w[0].isupper():
            repl = repl[0].upper() + repl[1:]
        return text[: m.start()] + repl + text[m.end():], w, repl
    return None


def antonym(text, rng):
    r = _swap_word(text, _ANT, rng)
    return (r[0], f"antonym: {r[1]} -> {r[2]}") if r else None


def entity(text, rng):
    r = _swap_word(text, _ENT, rng)
    return (r[0], f"entity: {r[1]} -> {r[2]}") if r else None


def number(text, rng):
    nums = list(re.finditer(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", text))
    if not nums:
        return None
    m = rng.choice(nums)
    old = m.group(0)
    if "." in old:
        new = f"{float(old) * rng.choice([2, 0.5, 3]):g}"
    else:
        v = int(old)
        new = str(rng.choice([v + 1, v * 2 + 1, max(0, v - 1), v * 10, rng.randint(2, 500)]))
    if new == old:
        new = str(int(float(old)) + 7)
    return text[: m.start()] + new + text[m.end():], f"number: {old} -> {new}"


def version(text, rng):
    m = re.search(r"\b(\d+)\.(\d+)(?:\.(\d+))?\b", text)
    if not m:
        return None
    major, minor = int(m.group(1)), int(m.group(2))
    new = f"{major + rng.choice([1, -1 if major else 2])}.{minor}" if rng.random() < .5 else f"{major}.{minor + 1}"
    if m.group(3):
        new += f".{m.group(3)}"
    return text[: m.start()] + new + text[m.end():], f"version: {m.group(0)} -> {new}"


NEG_RULES = [
    (re.compile(r"\b(is|are|was|were|can|does|do|did|should|will|has|have)\b(?! not)", re.I), r"\1 not"),
    (re.compile(r"^(how (?:do|can) i|how to)\s+", re.I), r"\1 not "),
    (re.compile(r"\bwith\b", re.I), "without"),
    (re.compile(r"\bwithout\b", re.I), "with"),
    (re.compile(r"\ball\b", re.I), "none of the"),
    (re.compile(r"\b(\w+n't|not|never|no)\b ?", re.I), ""),
]


def negation(text, rng):
    rules = list(NEG_RULES)
    rng.shuffle(rules)
    for rx, repl in rules:
        if rx.search(text):
            new = rx.sub(repl, text, count=1)
            if new != text:
                return re.sub(r"\s+", " ", new).strip(), "negation"
    return None


def direction(text, rng):
    m = re.search(r"\bfrom ([\w.+#<>/-]+(?: [\w+#<>]+)?) (to|into) ([\w.+#<>/-]+(?: [\w+#<>]+)?)", text, re.I)
    if m:
        a, b = m.group(1), m.group(3)
        return text[: m.start()] + f"from {b} {m.group(2)} {a}" + text[m.end():], f"direction: {a} <-> {b}"
    m = re.search(r"\b([\w+#<>]+) (to|into) ([\w+#<>]+)\b", text)
    if m and m.group(1).lower() not in {"how", "want", "need", "way", "is", "i", "going", "have", "able"} \
            and m.group(3).lower() not in {"the", "a", "an", "be", "do", "make", "get", "use", "my"}:
        a, b = m.group(1), m.group(3)
        return text[: m.start()] + f"{b} {m.group(2)} {a}" + text[m.end():], f"direction: {a} <-> {b}"
    return None


OBJECTS = ["files", "directories", "lines", "words", "processes", "users", "branches", "commits",
           "tags", "packages", "containers", "images", "ports", "columns", "rows", "tables",
           "keys", "values", "emails", "contacts", "events", "songs", "photos", "logs",
           "dependencies", "tests", "functions", "comments", "errors", "warnings"]


def other_object(text, rng):
    words = list(re.finditer(r"\b(" + "|".join(OBJECTS) + r"|" + "|".join(o[:-1] for o in OBJECTS) + r")\b", text, re.I))
    if not words:
        return None
    m = rng.choice(words)
    w = m.group(0)
    plural = w.lower().endswith("s")
    pool = [o for o in OBJECTS if o.rstrip("s") != w.lower().rstrip("s")]
    new = rng.choice(pool)
    if not plural:
        new = new[:-3] + "y" if new.endswith("ies") else new[:-1]
    return text[: m.start()] + new + text[m.end():], f"object: {w} -> {new}"


GENERATORS = {
    "antonym": antonym, "entity": entity, "number": number, "version": version,
    "negation": negation, "direction": direction, "object": other_object,
}
# Kinds that survive masking: for plan texts numbers and versions become placeholders, so a
# changed number is the same plan with another value, never a negative.
PLAN_SAFE = ["antonym", "negation", "direction", "object", "entity"]


def hard_negatives(text: str, rng: random.Random, kinds=None, k: int = 2):
    """Up to k distinct near misses of `text` as (text, differs)."""
    kinds = list(kinds or GENERATORS)
    rng.shuffle(kinds)
    out, seen = [], {text.lower()}
    for kind in kinds:
        r = GENERATORS[kind](text, rng)
        if r and r[0].lower() not in seen and r[0].strip():
            out.append(r)
            seen.add(r[0].lower())
        if len(out) >= k:
            break
    return out


def paraphrase(text: str, rng: random.Random) -> str | None:
    """A light rewording that keeps the request: a synonym verb and/or another question frame."""
    new = text
    if rng.random() < 0.7:
        r = _swap_word(new, _SYN, rng)
        if r:
            new = r[0]
    if rng.random() < 0.6:
        core = _FRAME_RX.sub("", new.rstrip("?.!:")).strip()
        if core:
            core = core[0].lower() + core[1:]
            new = rng.choice(FRAMES).format(core)
            if new.startswith(("how", "what", "is there")):
                new += "?"
    if rng.random() < 0.3:
        new = new.lower()
    return new if new != text else None
