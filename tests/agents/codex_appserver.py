#!/usr/bin/env python3
"""refrain's own probe of `codex app-server` (JSON-RPC, one JSON object per line on stdio): lists
the MCP servers and their tools, starts a thread and calls one MCP tool directly (no model needed).

usage: codex_appserver.py CODEX_BIN SERVER TOOL JSON_ARGS CWD
Prints one JSON report on stdout: {"servers": <mcpServerStatus/list result>, "call": <tool call result>}."""
import json
import queue
import subprocess
import sys
import threading

codex, server, tool, args, cwd = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5]
proc = subprocess.Popen([codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, text=True, cwd=cwd)
inbox = queue.Queue()
threading.Thread(target=lambda: [inbox.put(json.loads(line)) for line in proc.stdout], daemon=True).start()
next_id = [0]


def request(method, params, timeout=60):
    next_id[0] += 1
    i = next_id[0]
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    proc.stdin.flush()
    while True:
        m = inbox.get(timeout=timeout)
        if m.get("id") == i and ("result" in m or "error" in m):
            if "error" in m:
                raise SystemExit(f"{method} failed: {json.dumps(m['error'])}")
            return m["result"]


request("initialize", {"clientInfo": {"name": "refrain-test", "version": "0.1"}})
proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "initialized"}) + "\n")
proc.stdin.flush()
servers = request("mcpServerStatus/list", {})
thread = request("thread/start", {"cwd": cwd})["thread"]["id"]
call = request("mcpServer/tool/call", {"server": server, "threadId": thread, "tool": tool, "arguments": args})
print(json.dumps({"servers": servers, "call": call}))
proc.stdin.close()
proc.terminate()
