#!/usr/bin/env python3
"""Drives refrain with the official MCP Python SDK (`mcp` 2.x from PyPI), as an outside client.

usage: sdk_client.py stdio CMD [ARGS...] | sdk_client.py http URL

Connects in the SDK's default `auto` mode (a `server/discover` probe, then `initialize` if the
probe does not settle the protocol), lists the tools and calls `cache_stats`. Prints one JSON
object on the last line of stdout for the Rust test (tests/it/python_sdk.rs) to check.
"""
import asyncio
import json
import os
import sys

from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters

PROBES = []

_send_discover = ClientSession.send_discover


async def recording_send_discover(self, version):
    """Records each `server/discover` probe and what the server answered."""
    try:
        raw = await _send_discover(self, version)
    except Exception as e:  # the SDK falls back to initialize on errors; record which
        PROBES.append({"version": version, "answer": "error", "code": getattr(e, "code", None), "detail": str(e)})
        raise
    PROBES.append({"version": version, "answer": "result", "supported": raw.get("supportedVersions")})
    return raw


ClientSession.send_discover = recording_send_discover


async def main():
    kind = sys.argv[1]
    if kind == "stdio":
        # The SDK passes only a few variables to the child by default; refrain needs REFRAIN_*.
        target = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:], env=dict(os.environ))
    elif kind == "http":
        target = sys.argv[2]
    else:
        raise SystemExit(f"unknown transport {kind!r}: use stdio or http")
    async with Client(target) as c:
        session = c.session
        info = c.server_info
        tools = await c.list_tools()
        result = await c.call_tool("cache_stats", {})
        print(json.dumps({
            "protocol": c.protocol_version,
            "discover_probes": PROBES,
            "adopted_discover": session.discover_result is not None,
            "server_name": info.name if info else None,
            "server_version": info.version if info else None,
            "instructions": c.instructions,
            "tools": [t.name for t in tools.tools],
            "call_is_error": bool(result.is_error),
            "call_structured": result.structured_content,
        }))


asyncio.run(main())
