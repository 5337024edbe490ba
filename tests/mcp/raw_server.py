"""A misbehaving MCP server of raw JSON-RPC lines: before answering the tool
`noisy` it writes a line that is not JSON-RPC to stdout (which the Python
SDK's own servers never let through). It answers `initialize`, `tools/list`
and `tools/call` (`add`, `noisy`, `getenv`, and `echo`, which answers the
very line it read, as does any other request's answer in `line`)."""

import json
import os
import sys

TOOLS = [
    {"name": "add", "inputSchema": {"type": "object"}},
    {"name": "noisy", "inputSchema": {"type": "object"}},
    {"name": "getenv", "inputSchema": {"type": "object"}},
    {"name": "echo", "inputSchema": {"type": "object"}},
]


def answer(id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    if id is None:
        continue
    if method == "initialize":
        answer(id, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "raw", "version": "0"}})
    elif method == "tools/list":
        answer(id, {"tools": TOOLS})
    elif method == "tools/call":
        params = message["params"]
        if params["name"] == "noisy":
            sys.stdout.write("this line is not JSON-RPC\n")
            text = "done"
        elif params["name"] == "echo":
            text = line.rstrip("\n")
        elif params["name"] == "getenv":
            text = os.environ.get(params["arguments"]["name"], "<unset>")
        else:
            text = str(params["arguments"]["a"] + params["arguments"]["b"])
        answer(id, {"content": [{"type": "text", "text": text}]})
    else:
        answer(id, {"line": line.rstrip("\n")})
