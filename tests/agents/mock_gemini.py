#!/usr/bin/env python3
"""refrain's own test mock of the Gemini API (generateContent / streamGenerateContent), for driving
the real Gemini CLI offline.

usage: mock_gemini.py LOGDIR SCRIPT_JSON

Listens on 127.0.0.1 (a free port, written to LOGDIR/port) and plays a script: SCRIPT_JSON is
{"steps": [{"name": TOOL, "args": {...}}, ...], "final": "text"}. A request that offers the
script's first tool and holds N function responses gets step N as a functionCall part, or the final
text once the steps are used up. Requests that offer no such tool (routing, next-speaker checks,
summaries) get a short text answer ("{}" when they ask for JSON). A step whose tool is not offered
ends the turn with a text naming it (the test then fails on it). Every request is saved as
LOGDIR/req-NNN.json ({path, body}). SCRIPT_JSON may also hold "agents": {MARKER: {"steps": [...],
"final": "text"}}: a request whose first user content contains MARKER (a subagent started with a
request holding it) plays that script instead. Loopback only; the API key is not checked."""
import json
from http.server import BaseHTTPRequestHandler

from mock_common import read_request, script_for, serve

USAGE = {"promptTokenCount": 5000, "cachedContentTokenCount": 4096, "candidatesTokenCount": 20, "totalTokenCount": 5020}


def offered(body):
    return [d.get("name") for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]


def responses(body):
    return sum(1 for c in body.get("contents") or [] for p in c.get("parts") or []
               if isinstance(p, dict) and "functionResponse" in p)


def script_of(body):
    users = [c for c in body.get("contents") or [] if c.get("role") == "user"]
    first = " ".join(p.get("text", "") for p in (users[0].get("parts") or []) if isinstance(p, dict)) if users else ""
    return script_for(first)


def reply(body):
    script = script_of(body)
    steps, tools = script["steps"], offered(body)
    wants_json = (body.get("generationConfig") or {}).get("responseMimeType") == "application/json"
    if not steps or steps[0]["name"] not in tools:
        return [{"text": "{}" if wants_json else "OK."}]
    done = responses(body)
    if done >= len(steps):
        return [{"text": script.get("final", "Done.")}]
    step = steps[done]
    if step["name"] not in tools:
        return [{"text": f"MOCK: the tool {step['name']} was not offered"}]
    return [{"functionCall": {"name": step["name"], "args": step.get("args", {})}}]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, status, ctype, data):
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_GET(self):
        self._send(200, "application/json", b'{"models":[]}')

    def do_POST(self):
        n, body = read_request(self)
        if ":countTokens" in self.path:
            return self._send(200, "application/json", b'{"totalTokens": 42}')
        parts = reply(body)
        chunk = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": USAGE, "modelVersion": "mock-model", "responseId": f"mock{n:04d}"}
        if ":streamGenerateContent" in self.path:
            return self._send(200, "text/event-stream", f"data: {json.dumps(chunk)}\r\n\r\n".encode())
        self._send(200, "application/json", json.dumps(chunk).encode())


serve(Handler)
