"""Builds the labelled (stored, new, same?) pairs the verifier trains and is evaluated on.

Reads the public sets under $VERIFIER_DATA and refrain's own family sets, mines the nearest
non-duplicate of every request with the bi-encoder (what retrieval would hand the verifier),
adds generated near misses, and writes $VERIFIER_WORK/pairs/{train,dev,test}.jsonl with one pair
per line:
  {"a": stored, "b": new, "a_in": ..., "b_in": ..., "label": 0|1, "dataset": ..., "kind":
   "question"|"plan", "split": ..., "group": ..., "differs": ...}
`a_in`/`b_in` are what the model sees: masked text for plans, raw text for questions.

Splits are by group (family, intent, tldr page, question id), by hash (common.split_of); for
refrain's own sets the family's own `split` decides: its dev families are divided into train
and dev here, its test families are only ever evaluated.

Run: python build_data.py   (seeded; about 5 minutes on 2 cores, most of it embedding)
"""
from __future__ import annotations

import csv
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from common import DATA, SETS, SHELL, WORK, mask_texts, read_jsonl, seed_everything, split_of, write_jsonl
from embed import Embedder, nearest_others
from hardneg import PLAN_SAFE, hard_negatives, paraphrase

rng = seed_everything()
PAIRS: list[dict] = []
VALUES: dict[str, list[str]] = {}  # text -> its literal values, where a family set records them


def add(a, b, label, dataset, kind, group, differs="", split=None):
    if not a or not b:
        return
    PAIRS.append({"a": a, "b": b, "label": int(label), "dataset": dataset, "kind": kind,
                  "group": f"{dataset}:{group}", "split": split or split_of(f"{dataset}:{group}"),
                  "differs": differs})


def mined_negatives(dataset, kind, texts, groups, k=2, min_cos=0.35, splits=None):
    """The k nearest requests of other groups, as negatives for each text."""
    emb = EMB.encode(texts)
    for i, near in enumerate(nearest_others(emb, groups, k)):
        for j, cos in near:
            if cos < min_cos:
                continue
            # the pair belongs to the split of the stored side's group; a pair whose two sides
            # fall in different splits is kept only when both are train (no leak into dev/test)
            si = splits[i] if splits else split_of(f"{dataset}:{groups[i]}")
            sj = splits[j] if splits else split_of(f"{dataset}:{groups[j]}")
            if si != sj:
                continue
            add(texts[j], texts[i], 0, dataset, kind, groups[i], f"nearest other (cos {cos:.2f})", split=si)


def generated(dataset, kind, text, group, k=2, split=None):
    kinds = PLAN_SAFE if kind == "plan" else None
    for neg, differs in hard_negatives(text, rng, kinds, k):
        add(text, neg, 0, dataset, kind, group, differs, split)
    p = paraphrase(text, rng)
    if p:
        add(text, p, 1, dataset, kind, group, "paraphrase (generated)", split)


# --- public sets --------------------------------------------------------------------------------

def gptcache():
    rows = json.load(open(DATA / "gptcache/mock_data.json"))
    texts, groups = [], []
    for i, r in enumerate(rows):
        add(r["origin"], r["similar"], 1, "gptcache", "question", i)
        generated("gptcache", "question", r["origin"], i)
        texts += [r["origin"], r["similar"]]
        groups += [str(i), str(i)]
    mined_negatives("gptcache", "question", texts, groups)


def conala():
    rows = json.load(open(DATA / "conala/conala-train.json")) + json.load(open(DATA / "conala/conala-test.json"))
    by_q = defaultdict(set)
    for r in rows:
        by_q[r["question_id"]].add(r["intent"].strip())
        if r.get("rewritten_intent"):
            by_q[r["question_id"]].add(r["rewritten_intent"].strip())
    texts, groups = [], []
    for q, s in by_q.items():
        s = sorted(s)
        for i in range(len(s)):
            for j in range(i + 1, min(len(s), i + 3)):
                add(s[i], s[j], 1, "conala", "question", q, "same question")
        for t in s[:2]:
            generated("conala", "question", t, q)
        texts += s
        groups += [str(q)] * len(s)
    mined_negatives("conala", "question", texts, groups)


def stsb():
    with open(DATA / "stsb/stsb-permissive.tsv") as f:
        for i, r in enumerate(csv.DictReader(f, delimiter="\t")):
            s = float(r["score_0_5"])
            if s >= 4.6:
                add(r["sentence1"], r["sentence2"], 1, "stsb", "question", i, f"sts {s}")
            elif s <= 3.2:
                add(r["sentence1"], r["sentence2"], 0, "stsb", "question", i, f"sts {s}")


def clinc():
    """CLINC150: only cross-intent nearest neighbours (and out-of-scope) as negatives.

    Same-intent pairs are not used as positives: utterances of one intent carry different
    values ("translate hello into french" / "... goodbye into spanish") and different answers.
    """
    d = json.load(open(DATA / "clinc150/data_full.json"))
    texts, groups = [], []
    for part in ("train", "val", "test", "oos_train", "oos_val", "oos_test"):
        for t, intent in d[part]:
            if intent == "oos":
                intent = f"oos-{len(texts)}"
            texts.append(t)
            groups.append(intent)
    sel = rng.sample(range(len(texts)), 4000)
    texts = [texts[i] for i in sel]
    groups = [groups[i] for i in sel]
    mined_negatives("clinc", "question", texts, groups, k=1, min_cos=0.5)


SLOT = re.compile(r"\[\s*(\w+)\s*:\s*([^\]]+?)\s*\]")


def hwu64():
    """HWU64: same intent and the same slot values = same request; one slot value changed = not."""
    rows = read_jsonl(DATA / "hwu64/hwu64.jsonl")
    by_intent = defaultdict(list)
    for r in rows:
        slots = tuple(sorted((k, v.lower()) for k, v in SLOT.findall(r.get("annotated", ""))))
        by_intent[f"{r['scenario']}_{r['intent']}"].append((r["text"], slots))
    texts, groups = [], []
    for intent, items in by_intent.items():
        by_slots = defaultdict(list)
        for t, s in items:
            by_slots[s].append(t)
        for s, ts in by_slots.items():
            ts = sorted(set(ts))
            rng.shuffle(ts)
            for i in range(0, min(len(ts) - 1, 6 if s else 3), 2):
                add(ts[i], ts[i + 1], 1, "hwu64", "question", intent, "same intent and slots")
        # slot-swap negatives: same intent, one slot type with a different value
        keyed = [(t, s) for t, s in items if s]
        rng.shuffle(keyed)
        for (t1, s1), (t2, s2) in zip(keyed[::2], keyed[1::2]):
            if {k for k, _ in s1} == {k for k, _ in s2} and s1 != s2:
                add(t1, t2, 0, "hwu64", "question", intent, "same intent, other slot value")
        sample = rng.sample(items, min(len(items), 40))
        texts += [t for t, _ in sample]
        groups += [intent] * len(sample)
    mined_negatives("hwu64", "question", texts, groups, k=1, min_cos=0.5)


def tldr_examples():
    """(page, description) of every example in pages/common and pages/linux of tldr-pages."""
    out = []
    root = DATA / "tldr/pages"
    for sub in ("common", "linux"):
        for p in sorted((root / sub).glob("*.md")):
            for m in re.finditer(r"^- (.+?):?\s*$", p.read_text(), re.M):
                d = re.sub(r"\[(\w+)\]", r"\1", m.group(1))  # [c]reate -> create
                d = re.sub(r"(\w)\[(\w+)\]", r"\1\2", d)
                d = d.replace("{{", "").replace("}}", "").strip()
                out.append((p.stem, d))
    return out


def tldr(test_pages: set[str]):
    """Shell tasks: other tasks of the same utility are the hard negatives."""
    ex = [(p, d) for p, d in tldr_examples() if p not in test_pages]
    by_page = defaultdict(list)
    for p, d in ex:
        by_page[p].append(d)
    pages = sorted(by_page)
    rng.shuffle(pages)
    pages = pages[:1000]
    texts, groups = [], []
    for p in pages:
        ds = by_page[p]
        for i, d in enumerate(ds):
            par = paraphrase(d, rng)
            if par:
                add(d, par, 1, "tldr", "plan", f"{p}#{i}", "paraphrase (generated)", split=split_of(f"tldr:{p}"))
            for neg, differs in hard_negatives(d, rng, PLAN_SAFE, 1):
                add(d, neg, 0, "tldr", "plan", f"{p}#{i}", differs, split=split_of(f"tldr:{p}"))
        for i in range(len(ds)):
            j = rng.randrange(len(ds))
            if j != i:
                add(ds[i], ds[j], 0, "tldr", "plan", f"{p}#{i}", "same utility, other task", split=split_of(f"tldr:{p}"))
        texts += ds
        groups += [f"{p}#{i}" for i in range(len(ds))]
    splits = [split_of(f"tldr:{g.split('#')[0]}") for g in groups]
    mined_negatives("tldr", "plan", texts, groups, k=1, min_cos=0.5, splits=splits)


def shell_set_pages() -> set[str]:
    """The tldr pages refrain's shell family set is built from (`PAGES` in build_shell.py).

    Raw tldr pages must not teach the model the shell set's test tasks; when the set's split
    file is not at hand, leaving out all of its pages is the safe side.
    """
    src = Path(__file__).resolve().parents[1] / "data" / "build_shell.py"
    m = re.search(r'^PAGES = """(.*?)"""', src.read_text(), re.S | re.M) if src.exists() else None
    return {k.split("/")[-1] for k in m.group(1).split()} if m else set()


# --- refrain's own family sets ------------------------------------------------------------------

def families(path: Path, dataset: str):
    """members x members positives, members x negatives negatives, nearest other family negatives."""
    if not path.exists():
        print(f"  {dataset}: {path} not found, skipped", file=sys.stderr)
        return set()
    fams = read_jsonl(path)
    kind = "plan" if dataset in ("coding", "shell") else "question"
    texts, groups, splits = [], [], []
    test_groups = set()
    for f in fams:
        fid = f["id"]
        split = "test" if f["split"] == "test" else ("dev" if split_of(f"{dataset}:{fid}", 0.3, 0.0) == "dev" else "train")
        if f["split"] == "test":
            test_groups.add(fid)
        ms = [m["text"] for m in f["members"]]
        for x in f["members"] + f.get("negatives", []):
            if x.get("values"):
                VALUES[x["text"]] = [str(v) for v in x["values"]]
        for i in range(len(ms)):
            for j in range(len(ms)):
                if i != j:
                    add(ms[i], ms[j], 1, dataset, kind, fid, "same family", split)
        for n in f.get("negatives", []):
            for m in ms[:3]:
                add(m, n["text"], 0, dataset, kind, fid, n.get("differs", "negative"), split)
        texts += ms
        groups += [fid] * len(ms)
        splits += [split] * len(ms)
    mined_negatives(dataset, kind, texts, groups, k=2, min_cos=0.3, splits=splits)
    return test_groups


def identical():
    """A stored request asked again word for word must always be the same request."""
    pool = [p for p in PAIRS if p["label"] == 1]
    for p in rng.sample(pool, min(2000, len(pool))):
        t = p["a"]
        variants = [t, t.lower(), t.rstrip("?.!") + "?", t.strip() + " "]
        add(t, rng.choice(variants), 1, p["dataset"], p["kind"], p["group"].split(":", 1)[1],
            "identical", p["split"])


def main():
    global EMB
    EMB = Embedder()
    # tldr pages of the shell set's test utilities never reach training (nor their families)
    shell_path = Path(SHELL) if SHELL else DATA / "tldr-shell/shell.jsonl"
    shell_test_pages = set()
    split_file = shell_path.parent / "split.json"
    if split_file.exists():
        shell_test_pages = {u for u, s in json.load(open(split_file))["utilities"].items() if s == "test"}
    if shell_path.exists():
        shell_test_pages |= {f["page"].split("/")[-1] for f in read_jsonl(shell_path) if f["split"] == "test"}
    # without the shell set's split file, every page the shell set draws on stays out
    shell_test_pages |= shell_set_pages()
    print(f"  tldr: {len(shell_test_pages)} pages of the shell set left out", file=sys.stderr)
    steps = [("gptcache", gptcache), ("conala", conala), ("stsb", stsb), ("clinc", clinc),
             ("hwu64", hwu64), ("tldr", lambda: tldr(shell_test_pages)),
             ("coding", lambda: families(SETS / "coding.jsonl", "coding")),
             ("question", lambda: families(SETS / "question.jsonl", "question")),
             ("shell", lambda: families(shell_path, "shell"))]
    for name, fn in steps:
        n0 = len(PAIRS)
        fn()
        EMB.save()
        print(f"  {name}: {len(PAIRS) - n0} pairs", file=sys.stderr, flush=True)
    identical()
    # both orders: the stored request may be either side
    for p in list(PAIRS):
        if p["split"] == "train" and p["differs"] != "identical":
            q = dict(p, a=p["b"], b=p["a"])
            PAIRS.append(q)
    plan_texts = sorted({t for p in PAIRS if p["kind"] == "plan" for t in (p["a"], p["b"])})
    masked, masker = mask_texts(plan_texts, VALUES)
    m = dict(zip(plan_texts, masked))
    for p in PAIRS:
        p["a_in"] = m[p["a"]] if p["kind"] == "plan" else p["a"]
        p["b_in"] = m[p["b"]] if p["kind"] == "plan" else p["b"]
    # a near miss that masking (or case) makes identical to its request teaches nothing true
    PAIRS[:] = [p for p in PAIRS if p["label"] == 1 or p["a_in"].lower().strip() != p["b_in"].lower().strip()]
    # drop dev/test pairs whose text appears in train, per dataset (no memorised answers)
    seen = {(p["dataset"], t) for p in PAIRS if p["split"] == "train" for t in (p["a_in"], p["b_in"])}
    kept = [p for p in PAIRS if p["split"] == "train" or not ({(p["dataset"], p["a_in"]), (p["dataset"], p["b_in"])} & seen)]
    print(f"  masker: {masker}; dropped {len(PAIRS) - len(kept)} dev/test pairs overlapping train", file=sys.stderr)
    for split in ("train", "dev", "test"):
        rows = [p for p in kept if p["split"] == split]
        rng.shuffle(rows)
        n = write_jsonl(WORK / "pairs" / f"{split}.jsonl", rows)
        pos = sum(p["label"] for p in rows)
        print(f"{split}: {n} pairs ({pos} same, {n - pos} different)", file=sys.stderr)
    json.dump({"masker": masker}, open(WORK / "pairs" / "meta.json", "w"))


if __name__ == "__main__":
    main()
