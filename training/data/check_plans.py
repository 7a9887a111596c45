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
import subprocess
import sys
import tempfile


class Client:
    def __init__(self, cmd):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.next_id = 0

    def send(self, method, params=None, notify=False):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notify:
            self.next_id += 1
            msg["id"] = self.next_id
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        if notify:
            return None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("refrain closed its stdout")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--refrain", required=True)
    ap.add_argument("--model-dir")
    ap.add_argument("file", nargs="?", default=str(pathlib.Path(__file__).with_name("coding.jsonl")))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, project = pathlib.Path(tmp, "home"), pathlib.Path(tmp, "project")
        project.mkdir()
        cmd = [a.refrain, "--home", str(home), "--project", str(project)]
        if a.model_dir:
            cmd += ["--model-dir", a.model_dir]
        c = Client(cmd + ["serve"])
        c.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "check_plans", "version": "1"}})
        c.send("notifications/initialized", notify=True)
        stored = refused = broken = 0
        for line in open(a.file, encoding="utf-8"):
            f = json.loads(line)
            task = f["members"][0]["text"]
            r = c.send("tools/call", {"name": "plan_store", "arguments": {"task": task, "trace": f["plan"]["trace"]}})
            if "error" in r:
                broken += 1
                print(f"{f['id']}: REJECTED {r['error'].get('message')}")
                continue
            res = r["result"]
            text = " ".join(x.get("text", "") for x in res.get("content", []))
            if res.get("isError"):
                refused += 1
                print(f"{f['id']}: refused: {text}")
            else:
                stored += 1
                print(f"{f['id']}: {text}")
        c.close()
    print(f"stored {stored}, refused {refused}, rejected for shape {broken}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
