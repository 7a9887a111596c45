"""A minimal MCP client for the check scripts: runs `refrain serve` over stdio with a throwaway
home and project (so nothing of the user's own store is touched) and calls its tools.

check_plans.py and check_shell.py both drive a real refrain binary this way. Standard library only.
"""

import contextlib
import json
import pathlib
import subprocess
import tempfile


class Client:
    """One JSON-RPC message per line to and from a child process."""

    def __init__(self, cmd):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
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

    def tool(self, name, args):
        """(structured output, text) when the call succeeded; (False, text) when the tool
        refused; (None, message) when the request itself was rejected (a schema error)."""
        r = self.send("tools/call", {"name": name, "arguments": args})
        if "error" in r:
            return None, r["error"].get("message", "")
        res = r["result"]
        text = " ".join(x.get("text", "") for x in res.get("content", []))
        if res.get("isError"):
            return False, text
        return res.get("structuredContent") or {}, text

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@contextlib.contextmanager
def serve(refrain, model_dir, client_name):
    """An initialized client of `refrain serve` on a fresh home and project, closed on exit."""
    with tempfile.TemporaryDirectory() as tmp:
        home, project = pathlib.Path(tmp, "home"), pathlib.Path(tmp, "project")
        project.mkdir()
        cmd = [refrain, "--home", str(home), "--project", str(project)]
        if model_dir:
            cmd += ["--model-dir", model_dir]
        c = Client(cmd + ["serve"])
        c.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": client_name, "version": "1"}})
        c.send("notifications/initialized", notify=True)
        try:
            yield c
        finally:
            c.close()
