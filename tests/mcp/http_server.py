"""A small MCP server written with the Python `mcp` SDK, over Streamable HTTP,
for the `warden mcp http` tests: `python http_server.py RECORD` serves on a
free port of 127.0.0.1 and prints `listening on URL` first.

It accepts only the operator's bearer token (the environment variable
WARDEN_TEST_UPSTREAM_TOKEN): any other `Authorization` gets a 401. Every
request it receives is appended to the file RECORD as one JSON line: its
method, its `Authorization` header, and the JSON-RPC method and tool name of
its body, so a test sees what reached the server and with which credential."""

from __future__ import annotations

import json
import os
import socket
import sys

import uvicorn
from mcp.server import MCPServer

mcp = MCPServer("warden-test-http")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool()
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def recording(app, record: str, token: str):
    """An ASGI layer: records each request, refuses any credential but the operator's."""

    async def layer(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        chunks = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            parsed = json.loads(body) if body else {}
        except ValueError:
            parsed = {}
        params = parsed.get("params") if isinstance(parsed, dict) else None
        entry = {
            "http": scope["method"],
            "authorization": headers.get("authorization"),
            "method": parsed.get("method") if isinstance(parsed, dict) else None,
            "tool": params.get("name") if isinstance(params, dict) else None,
        }
        with open(record, "a") as out:
            out.write(json.dumps(entry) + "\n")
        if headers.get("authorization") != f"Bearer {token}":
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"www-authenticate", b'Bearer realm="upstream"'),
                                    (b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": b'{"error": "invalid_token"}'})
            return None
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await app(scope, replay, send)

    return layer


def main() -> None:
    record = sys.argv[1]
    token = os.environ["WARDEN_TEST_UPSTREAM_TOKEN"]
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # Listening before saying so: a connection waits in the backlog until
    # uvicorn accepts it.
    sock.listen(128)
    app = recording(mcp.streamable_http_app(), record, token)
    print(f"listening on http://127.0.0.1:{port}/mcp", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
