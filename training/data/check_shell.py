#!/usr/bin/env python3
"""Runs the shell family set against a real refrain binary over MCP stdio: stores each family's
plan (`plan_store` with members[0]'s text and the template), then looks up the other members
(expect a hit whose filled command is that member's command) and the written near misses
(expect a miss, or a hit that happens to give the near miss's own command).

  check_shell.py --refrain PATH [--model-dir DIR] [--split dev] [--limit N] shell.jsonl

A template rejected for its shape is a defect of the data (exit status 1); refusals and lookup
figures describe the binary. Uses a throwaway home and project. Standard library only.
"""

import argparse
import collections
import json
import sys

from mcp_client import serve


def served_command(out):
    hit = out.get("hit") or (out.get("lookup") or {}).get("hit")  # the lookup is flattened into the output
    if not hit:
        return None, None
    steps = hit.get("steps") or []
    cmd = steps[0].get("inputs", {}).get("command") if steps else None
    return hit.get("plan_id"), cmd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--refrain", required=True)
    ap.add_argument("--model-dir")
    ap.add_argument("--split", choices=["dev", "test"], help="only this split (default both)")
    ap.add_argument("--limit", type=int, default=0, help="at most this many families")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("file")
    a = ap.parse_args()
    fams = [json.loads(line) for line in open(a.file, encoding="utf-8") if line.strip()]
    fams = [f for f in fams if not a.split or f["split"] == a.split]
    if a.limit:
        fams = fams[: a.limit]
    stats = collections.defaultdict(collections.Counter)
    with serve(a.refrain, a.model_dir, "check_shell") as c:
        plan_of = {}
        for f in fams:
            s = stats[f["split"]]
            out, text = c.tool("plan_store", {"task": f["members"][0]["text"], "template": f["plan"]["template"]})
            if out is None:
                s["rejected"] += 1
                print(f"{f['id']}: REJECTED {text}")
            elif out is False:
                s["refused"] += 1
                if a.verbose:
                    print(f"{f['id']}: refused: {text}")
            else:
                s["stored"] += 1
                plan_of[f["id"]] = out.get("plan_id")
        for f in fams:
            if f["id"] not in plan_of:
                continue
            s = stats[f["split"]]
            for m in f["members"][1:]:
                out, text = c.tool("plan_lookup", {"task": m["text"]})
                s["paraphrases"] += 1
                pid, got = served_command(out) if out else (None, None)
                if pid is None:
                    continue
                s["hits"] += 1
                if got == m["answer"]["command"]:
                    s["right"] += 1
                elif a.verbose:
                    print(f"{f['id']}: {m['text']!r} served {got!r}, want {m['answer']['command']!r}")
            for g in f["negatives"]:
                if g.get("source") != "written":
                    continue
                out, text = c.tool("plan_lookup", {"task": g["text"]})
                s["near misses"] += 1
                pid, got = served_command(out) if out else (None, None)
                if pid is not None and got != g["answer"]["command"]:
                    s["near misses served"] += 1
                    if a.verbose:
                        print(f"{f['id']}: near miss {g['text']!r} served {got!r}")
    rejected = 0
    for sp in sorted(stats):
        s = stats[sp]
        rejected += s["rejected"]
        n = s["stored"] + s["refused"] + s["rejected"]
        pct = lambda x, y: f"{100 * x / y:.1f}%" if y else "-"  # noqa: E731
        print(f"{sp}: stored {s['stored']}/{n} (refused {s['refused']}, rejected {s['rejected']}); "
              f"paraphrases hit {pct(s['hits'], s['paraphrases'])} of {s['paraphrases']}, "
              f"right {pct(s['right'], s['hits'])} of hits; "
              f"near misses served a wrong plan {pct(s['near misses served'], s['near misses'])} "
              f"of {s['near misses']}")
    return 1 if rejected else 0


if __name__ == "__main__":
    sys.exit(main())
