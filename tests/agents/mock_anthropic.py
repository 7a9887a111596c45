#!/usr/bin/env python3
"""refrain's own test mock of the Anthropic Messages API, for driving the real Claude Code offline.

usage: mock_anthropic.py LOGDIR SCRIPT_JSON

Listens on 127.0.0.1 (a free port, written to LOGDIR/port) and plays a script: SCRIPT_JSON is
{"steps": [{"name": TOOL, "input": {...}}, ...], "final": "text"}. A request that offers the
script's first tool and holds N tool results gets step N as a tool_use block, or the final text
once the steps are used up. Requests that offer no such tool (titles, summaries, quota checks) get
a short text answer. A step whose tool is not offered ends the turn with a text naming it (the test
then fails on it). SCRIPT_JSON may also hold "agents": {MARKER: {"steps": [...], "final": "text"}}: a
request whose first user message contains MARKER (a subagent started with a prompt holding it) plays
that script instead. Every request is saved as LOGDIR/req-NNN.json ({path, body}). Loopback only."""
import json
from http.server import BaseHTTPRequestHandler

from mock_common import first_user_text, read_request, script_for, serve

USAGE = {"input_tokens": 12, "cache_creation_input_tokens": 3000, "cache_read_input_tokens": 9000, "output_tokens": 7}


def sse(event, data):
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def tool_results(messages):
    return sum(1 for m in messages if isinstance(m.get("content"), list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")


def script_of(body):
    first = first_user_text(body.get("messages", []))
    return script_for(first)


def reply(n, body):
    script = script_of(body)
    steps = script["steps"]
    tools = [t.get("name") for t in body.get("tools") or []]
    done = tool_results(body.get("messages", []))
    if not steps or steps[0]["name"] not in tools:
        return [{"type": "text", "text": "OK."}], "end_turn"
    if done >= len(steps):
        return [{"type": "text", "text": script.get("final", "Done.")}], "end_turn"
    step = steps[done]
    if step["name"] not in tools:
        return [{"type": "text", "text": f"MOCK: the tool {step['name']} was not offered"}], "end_turn"
    return [{"type": "text", "text": f"Step {done + 1}."},
            {"type": "tool_use", "id": f"toolu_mock{n:04d}", "name": step["name"], "input": step["input"]}], "tool_use"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _json(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._json({"data": [], "has_more": False})

    def do_POST(self):
        n, body = read_request(self)
        if "count_tokens" in self.path:
            return self._json({"input_tokens": 42})
        blocks, stop = reply(n, body)
        msg = {"id": f"msg_mock{n:04d}", "type": "message", "role": "assistant", "model": body.get("model", "mock"),
               "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": USAGE}
        if not body.get("stream"):
            return self._json(msg)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        start = {**msg, "content": [], "stop_reason": None, "usage": {**USAGE, "output_tokens": 1}}
        out = [sse("message_start", {"type": "message_start", "message": start})]
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                first, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": b["text"]}
            else:
                first = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
            out.append(sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": first}))
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
            out.append(sse("content_block_stop", {"type": "content_block_stop", "index": i}))
        out.append(sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": 7}}))
        out.append(sse("message_stop", {"type": "message_stop"}))
        for chunk in out:
            self.wfile.write(chunk)
            self.wfile.flush()


serve(Handler)
