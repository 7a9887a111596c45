#!/usr/bin/env python3
"""refrain's own test mock of the OpenAI Responses API (SSE), for driving the real Codex CLI offline.

usage: mock_responses.py LOGDIR SCRIPT_JSON

Listens on 127.0.0.1 (a free port, written to LOGDIR/port) and plays a script: SCRIPT_JSON is
{"steps": [{"name": TOOL, "arguments": {...}} | {"name": TOOL, "input": "freeform text"}, ...],
 "final": "text"}. A request whose input holds N tool outputs gets step N as a tool call, or the
final message once the steps are used up. A step whose tool the request does not offer ends the
turn with a message naming the missing tool (the test then fails on it). Every request is saved as
LOGDIR/req-NNN.json ({path, body}). SCRIPT_JSON may also hold "agents": {MARKER: {"steps": [...],
"final": "text"}}: a request whose input holds a user message containing MARKER (a subagent started
with a task holding it) plays that script instead. In a step's arguments, "$SPAWNED_AGENT_ID" stands for
the agent_id of the last spawn_agent output in the request (to wait for that agent). Loopback only; no
API key is checked."""
import json
from http.server import BaseHTTPRequestHandler

from mock_common import read_request, script_for, serve

OUTPUTS = ("function_call_output", "custom_tool_call_output")


def offered(tools):
    """(namespace, name, type) of every tool in the request, flattening namespaces."""
    out = []
    for t in tools or []:
        if "tools" in t:
            out += [(t.get("name") or "", s.get("name") or "", s.get("type") or "function") for s in t["tools"]]
        else:
            out.append(("", t.get("name") or "", t.get("type") or "function"))
    return out


def find(tools, name):
    for ns, nm, kind in offered(tools):
        if nm and (nm == name or ns + nm == name or f"{ns}__{nm}" == name):
            return ns, nm, kind
    return None


def script_of(items):
    return script_for(json.dumps([i for i in items if isinstance(i, dict) and i.get("role") == "user"]))


def spawned_agent_id(items):
    found = ""
    for i in items:
        if isinstance(i, dict) and i.get("type") in OUTPUTS:
            try:
                found = json.loads(i.get("output") or "").get("agent_id") or found
            except (ValueError, AttributeError):
                pass
    return found


def sse(obj):
    return f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n".encode()


def message(n, text):
    return {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        data = b'{"models":[],"data":[]}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n, body = read_request(self)
        items = body.get("input", []) if isinstance(body, dict) else []
        done = sum(1 for i in items if isinstance(i, dict) and i.get("type") in OUTPUTS)
        script = script_of(items)
        steps = script["steps"]
        if done >= len(steps):
            item = message(n, script.get("final", "Done."))
        else:
            step = steps[done]
            hit = find(body.get("tools"), step["name"])
            if hit is None:
                item = message(n, f"MOCK: the tool {step['name']} was not offered")
            elif hit[2] == "custom":
                item = {"type": "custom_tool_call", "id": f"ctc_{n}", "call_id": f"call_mock{n:04d}",
                        "name": hit[1], "input": step["input"], "status": "completed"}
            else:
                arguments = json.dumps(step.get("arguments", {})).replace("$SPAWNED_AGENT_ID", spawned_agent_id(items))
                item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_mock{n:04d}", "name": hit[1],
                        "arguments": arguments, "status": "completed"}
                if hit[0]:
                    item["namespace"] = hit[0]
        rid = f"resp_mock{n:04d}"
        usage = {"input_tokens": 5000, "input_tokens_details": {"cached_tokens": 4096}, "output_tokens": 20,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 5020}
        events = [
            {"type": "response.created", "response": {"id": rid, "object": "response", "status": "in_progress", "output": []}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed",
             "response": {"id": rid, "object": "response", "status": "completed", "output": [item], "usage": usage}},
        ]
        payload = b"".join(sse(e) for e in events)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()


serve(Handler)
