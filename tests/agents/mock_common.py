"""What refrain's four mock model servers (mock_anthropic, mock_chat, mock_gemini, mock_responses)
share: their command line (LOGDIR SCRIPT_JSON), the log of every request as LOGDIR/req-NNN.json,
the choice of a subagent's script by the marker its first user text holds, and serving on a free
loopback port written to LOGDIR/port. Each mock imports it from its own directory."""
import itertools
import json
import os
import sys
from http.server import ThreadingHTTPServer

LOGDIR, SCRIPT = sys.argv[1], json.load(open(sys.argv[2]))
os.makedirs(LOGDIR, exist_ok=True)
_counter = itertools.count(1)


def read_request(handler):
    """(n, body) of the request `handler` is answering, saved as LOGDIR/req-NNN.json. A body that
    is not JSON (e.g. compressed) is logged by its size and encoding."""
    n = next(_counter)
    raw = handler.rfile.read(int(handler.headers.get("content-length", 0)))
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        body = {"_undecodable_bytes": len(raw), "_encoding": handler.headers.get("content-encoding")}
    with open(f"{LOGDIR}/req-{n:03d}.json", "w") as f:
        json.dump({"path": handler.path, "body": body}, f, indent=1)
    return n, body


def first_user_text(messages):
    """The first user message's text in a messages-style body (Anthropic Messages and OpenAI Chat
    Completions alike): a string, or the text parts of a list."""
    for m in messages:
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else " ".join(p.get("text", "") for p in c or [] if isinstance(p, dict))
    return ""


def script_for(text):
    """The subagent script whose marker the request's first user text holds, else the main one."""
    for marker, script in (SCRIPT.get("agents") or {}).items():
        if marker in text:
            return script
    return SCRIPT


def serve(handler_class):
    """Serves forever on a free loopback port, written to LOGDIR/port once listening."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    with open(os.path.join(LOGDIR, "port.tmp"), "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(os.path.join(LOGDIR, "port.tmp"), os.path.join(LOGDIR, "port"))
    server.serve_forever()
