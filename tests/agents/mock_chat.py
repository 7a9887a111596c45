#!/usr/bin/env python3
"""refrain's own test mock of the OpenAI Chat Completions API (streamed or not), for driving the
real opencode and Qwen Code offline.

usage: mock_chat.py LOGDIR SCRIPT_JSON

Listens on 127.0.0.1 (a free port, written to LOGDIR/port) and plays a script: SCRIPT_JSON is
{"steps": [{"name": TOOL, "arguments": {...}}, ...], "final": "text"}. A request that offers the
script's first tool and holds N tool messages gets step N as a tool call, or the final text once
the steps are used up. Requests that offer no such tool (titles, summaries) get a short text answer.
A step whose tool is not offered ends the turn with a text naming it (the test then fails on it).
SCRIPT_JSON may also hold "agents": {MARKER: {"steps": [...], "final": "text"}}: a request whose first
user message contains MARKER (a subagent started with a prompt holding it) plays that script instead.
Every request is saved as LOGDIR/req-NNN.json ({path, body}). Loopback only; no key is checked."""
import json
import time
from http.server import BaseHTTPRequestHandler

from mock_common import first_user_text, read_request, script_for, serve

USAGE = {"prompt_tokens": 5000, "completion_tokens": 20, "total_tokens": 5020,
         "prompt_tokens_details": {"cached_tokens": 4096}}


def offered(body):
    return [(t.get("function") or {}).get("name") for t in body.get("tools") or []]


def script_of(body):
    first = first_user_text(body.get("messages") or [])
    return script_for(first)


def reply(body):
    """(text, tool_call) for this request."""
    script = script_of(body)
    steps, tools = script["steps"], offered(body)
    if not steps or steps[0]["name"] not in tools:
        return "OK.", None
    done = sum(1 for m in body.get("messages") or [] if m.get("role") == "tool")
    if done >= len(steps):
        return script.get("final", "Done."), None
    step = steps[done]
    if step["name"] not in tools:
        return f"MOCK: the tool {step['name']} was not offered", None
    return None, {"name": step["name"], "arguments": json.dumps(step.get("arguments", {}))}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, ctype, data):
        self.send_response(200)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_GET(self):
        self._send("application/json", json.dumps({"object": "list", "data": [
            {"id": "mock-model", "object": "model", "created": 0, "owned_by": "refrain"}]}).encode())

    def do_POST(self):
        n, body = read_request(self)
        text, call = reply(body)
        cid, created, model = f"chatcmpl-mock{n:04d}", int(time.time()), body.get("model", "mock-model")
        calls = [{"index": 0, "id": f"call_mock{n:04d}", "type": "function", "function": call}] if call else None
        finish = "tool_calls" if call else "stop"
        if not body.get("stream"):
            msg = {"role": "assistant", "content": text}
            if calls:
                msg["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
            return self._send("application/json", json.dumps({
                "id": cid, "object": "chat.completion", "created": created, "model": model,
                "choices": [{"index": 0, "message": msg, "finish_reason": finish}], "usage": USAGE}).encode())
        chunk = lambda delta, fin=None, **extra: {"id": cid, "object": "chat.completion.chunk", "created": created,
                                                   "model": model, "choices": [{"index": 0, "delta": delta,
                                                                                "finish_reason": fin}], **extra}
        events = [chunk({"role": "assistant", "content": text} if text else {"role": "assistant", "tool_calls": calls})]
        events.append(chunk({}, finish))
        events.append({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                       "choices": [], "usage": USAGE})
        data = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"
        self._send("text/event-stream", data)


serve(Handler)
