#!/usr/bin/env python3
"""Stores every coding family's plan through a real refrain binary, as the Stop hook does
(`plan_store` with the task and the trace), and reports which were stored and which refused.

Usage: python3 training/data/check_plans.py --refrain PATH [--model-dir DIR] [FILE]
It runs `refrain serve` over stdio with a throwaway home and project, so nothing of the
user's own store is touched. Standard library only. Exit status 1 when a trace is rejected
for its shape (a schema error), which is a defect of the data; refusals on the content are
only reported.
"""

import argparse
import json
import pathlib
import sys

from mcp_client import serve


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--refrain", required=True)
    ap.add_argument("--model-dir")
    ap.add_argument("file", nargs="?", default=str(pathlib.Path(__file__).with_name("coding.jsonl")))
    a = ap.parse_args()
    stored = refused = broken = 0
    with serve(a.refrain, a.model_dir, "check_plans") as c:
        for line in open(a.file, encoding="utf-8"):
            f = json.loads(line)
            task = f["members"][0]["text"]
            out, text = c.tool("plan_store", {"task": task, "trace": f["plan"]["trace"]})
            if out is None:
                broken += 1
                print(f"{f['id']}: REJECTED {text}")
            elif out is False:
                refused += 1
                print(f"{f['id']}: refused: {text}")
            else:
                stored += 1
                print(f"{f['id']}: {text}")
    print(f"stored {stored}, refused {refused}, rejected for shape {broken}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
