#!/usr/bin/env python3
"""Hook latency with a warm owner: starts `refrain serve` in a scratch project (the owner), then runs
`refrain hook <agent> <event>` 60 times per captured payload and prints p50/p99/max.
usage: benches/hook_latency.py BIN PROJECT_DIR REFRAIN_HOME   (run from the repository root)"""
import json, subprocess, sys, time, os, statistics
bin_, proj, home = sys.argv[1], sys.argv[2], sys.argv[3]
env = dict(os.environ, REFRAIN_HOME=home, REFRAIN__MODEL__ENABLED="false")
env.pop("REFRAIN_PROJECT", None)
owner = subprocess.Popen([bin_, "serve"], cwd=proj, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
time.sleep(1.0)
fx = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "hooks") + "/"
cases = [("claude", "UserPromptSubmit", "claude-UserPromptSubmit-1795311204932778601.json"),
         ("claude", "PostToolUse", "claude-PostToolUse-Read.json"),
         ("codex", "PostToolUse", "codex-PostToolUse-1795311377782581679.json"),
         ("claude", "PreCompact", "claude-PreCompact-1795311470987647626.json")]
for agent, event, f in cases:
    p = json.load(open(fx + f)); p["cwd"] = proj
    data = json.dumps(p).encode()
    ts = []
    for i in range(60):
        t = time.perf_counter()
        r = subprocess.run([bin_, "hook", agent, event], cwd=proj, env=env, input=data, capture_output=True)
        ts.append((time.perf_counter() - t) * 1000)
        assert r.returncode == 0
    ts.sort()
    print(f"{agent} {event}: p50 {statistics.median(ts):.1f} ms  p99 {ts[int(len(ts)*0.99)-1]:.1f} ms  max {ts[-1]:.1f} ms  (n={len(ts)}, out={r.stdout[:60]!r})")
owner.stdin.close(); owner.wait(timeout=5)
