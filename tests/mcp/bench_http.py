"""The latency a `tools/call` gains through `warden mcp http`, side by side in
one run with the same client (the Python `mcp` SDK's Streamable HTTP client,
legacy revision) and the same server (tests/mcp/http_server.py): the server
directly, behind `warden mcp http --config`, behind `warden mcp http --daemon`,
and the daemon's own `POST /v1/evaluate` round trip (one kept-alive
connection), timed in the same turns as the calls. The stdio proxy's figures
come from bench_stdio.py.

    target/mcp-venv/bin/python tests/mcp/bench_http.py [CALLS]

Prints median and p99 per path in microseconds, and the two overheads.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path

from bench_stdio import POLICY, TOKEN, WARDEN, report, timed_calls
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

HERE = Path(__file__).resolve().parent
UPSTREAM_TOKEN = "mcp-bench-upstream-token-0123456789abcdef"


def started(command: list[str], prefix: str, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL, env=env)
    line = process.stdout.readline().decode().strip()
    assert line.startswith(prefix), f"{command[0]} did not start: {line!r}"
    return process, line[len(prefix):]


async def interleaved(targets: dict[str, tuple[str, str]], n: int, evaluate: str) -> dict[str, list[float]]:
    """One session per path (URL, token), open together; call i goes through
    every path in turn, so that the machine's drift touches every path alike."""
    async with AsyncExitStack() as stack:
        clients = {}
        for name, (url, token) in targets.items():
            http = await stack.enter_async_context(
                create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
            clients[name] = await stack.enter_async_context(
                Client(streamable_http_client(url, http_client=http), mode="legacy"))
        return await timed_calls(clients, n, evaluate)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    processes: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory() as tmp:
        tokens = "server:\n  tokens:\n    - {name: bench, role: agent, token_env: WARDEN_MCP_TOKEN}\n"
        config = Path(tmp) / "warden.yaml"
        config.write_text(POLICY + tokens)
        env = {**os.environ, "WARDEN_MCP_TOKEN": TOKEN, "WARDEN_TEST_UPSTREAM_TOKEN": UPSTREAM_TOKEN}
        try:
            daemon, url = started(
                [WARDEN, "serve", "--config", str(config), "--listen", "127.0.0.1:0",
                 "--data-dir", str(Path(tmp) / "data"), "--no-watch"], "warden: listening on ", env)
            processes.append(daemon)
            server, upstream = started(
                [sys.executable, str(HERE / "http_server.py"), os.devnull], "listening on ", env)
            processes.append(server)
            proxy = [WARDEN, "mcp", "http", "--upstream", upstream, "--listen", "127.0.0.1:0",
                     "--server-name", "py", "--upstream-auth-env", "WARDEN_TEST_UPSTREAM_TOKEN"]
            in_process, in_process_url = started(
                [*proxy, "--config", str(config)], "warden: mcp http listening on ", env)
            processes.append(in_process)
            through_daemon, through_daemon_url = started(
                [*proxy, "--daemon", url, "--token-env", "WARDEN_MCP_TOKEN", "--client-tokens", str(config)],
                "warden: mcp http listening on ", env)
            processes.append(through_daemon)
            rows = asyncio.run(interleaved({
                "direct": (upstream, UPSTREAM_TOKEN),
                "--config": (in_process_url, TOKEN),
                "--daemon": (through_daemon_url, TOKEN),
            }, n, url))
        finally:
            for process in processes:
                process.terminate()
                process.wait()
    report(rows)


if __name__ == "__main__":
    main()
