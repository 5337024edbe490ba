"""The latency a `tools/call` gains through `warden mcp stdio`, side by side in
one run with the same client (the Python `mcp` SDK's, legacy revision) and the
same server (tests/mcp/py_server.py): the server directly, behind
`warden mcp stdio --config`, behind `warden mcp stdio --daemon`, and the
daemon's own `POST /v1/evaluate` round trip (one kept-alive connection), timed
in the same turns as the calls.

    target/mcp-venv/bin/python tests/mcp/bench_stdio.py [CALLS]

Prints median and p99 per path in microseconds, and the two overheads.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WARDEN = os.environ.get("WARDEN_BIN", str(ROOT / "target" / "debug" / "warden"))
SERVER = [sys.executable, str(HERE / "py_server.py")]
TOKEN = "mcp-bench-token-0123456789abcdef0123"
POLICY = 'permissions:\n  mode: full_auto\n  deny: ["mcp__py__shout"]\n'


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


async def interleaved(commands: dict[str, list[str]], n: int, env: dict[str, str], evaluate: str) -> dict[str, list[float]]:
    """One session per path, open together; call i goes through every path in
    turn, so that the machine's drift touches every path alike."""
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        clients = {}
        for name, command in commands.items():
            params = StdioServerParameters(command=command[0], args=command[1:], env=env)
            clients[name] = await stack.enter_async_context(Client(params, mode="legacy"))
        return await timed_calls(clients, n, evaluate)


async def timed_calls(clients: dict[str, Client], n: int, evaluate: str | None = None) -> dict[str, list[float]]:
    """`add` n times through every client in turn (after 50 to warm up): the
    microseconds each call took, per client. Given the daemon's URL, each turn
    also times the daemon's own `POST /v1/evaluate` of the same call (row
    `evaluate`), so that the daemon is as warm, or as cold, for it as for the
    proxy's."""
    samples: dict[str, list[float]] = {name: [] for name in clients}
    round_trip = EvaluateRoundTrip(evaluate) if evaluate else None
    if round_trip:
        samples["evaluate"] = []
    for i in range(n + 50):
        for name, client in clients.items():
            start = time.perf_counter_ns()
            result = await client.call_tool("add", {"a": i, "b": 1})
            elapsed = (time.perf_counter_ns() - start) / 1000
            assert not result.is_error
            if i >= 50:  # the first 50 warm up
                samples[name].append(elapsed)
        if round_trip:
            elapsed = round_trip.once()
            if i >= 50:
                samples["evaluate"].append(elapsed)
    return samples


class EvaluateRoundTrip:
    """The daemon's `POST /v1/evaluate` of the proxied call, on one kept-alive
    connection."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port))
        self.body = json.dumps({"tool_name": "mcp__py__add", "tool_input": {"a": 1, "b": 2}})
        self.headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}

    def once(self) -> float:
        start = time.perf_counter_ns()
        self.connection.request("POST", "/v1/evaluate", self.body, self.headers)
        response = self.connection.getresponse()
        response.read()
        elapsed = (time.perf_counter_ns() - start) / 1000
        assert response.status == 200
        return elapsed


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "warden.yaml"
        config.write_text(POLICY)
        serve = Path(tmp) / "serve.yaml"
        serve.write_text(POLICY + "server:\n  tokens:\n    - {name: bench, role: agent, token_env: WARDEN_MCP_TOKEN}\n")
        env = {**os.environ, "WARDEN_MCP_TOKEN": TOKEN}
        daemon = subprocess.Popen(
            [WARDEN, "serve", "--config", str(serve), "--listen", "127.0.0.1:0", "--data-dir", str(Path(tmp) / "data"), "--no-watch"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env,
        )
        try:
            url = daemon.stdout.readline().decode().strip().removeprefix("warden: listening on ")
            proxy = [WARDEN, "mcp", "stdio"]
            rows = asyncio.run(
                interleaved(
                    {
                        "direct": SERVER,
                        "--config": [*proxy, "--config", str(config), "--server-name", "py", "--", *SERVER],
                        "--daemon": [*proxy, "--daemon", url, "--token-env", "WARDEN_MCP_TOKEN", "--server-name", "py", "--", *SERVER],
                    },
                    n,
                    env,
                    url,
                )
            )
        finally:
            daemon.terminate()
            daemon.wait()
    report(rows)


def report(rows: dict[str, list[float]]) -> None:
    """Median and p99 per path, and what each proxy adds."""
    for name, samples in rows.items():
        print(f"{name:10} median {statistics.median(samples):8.0f} µs   p99 {percentile(samples, 0.99):8.0f} µs   ({len(samples)} calls)")
    med = {name: statistics.median(samples) for name, samples in rows.items()}
    # The turns are interleaved: turn i of every row ran side by side, so the
    # median of the per-turn differences is also given (drift cancels in it).
    turns = list(zip(rows["direct"], rows["--config"], rows["--daemon"], rows["evaluate"]))
    config = statistics.median(c - d for d, c, _, _ in turns)
    daemon = statistics.median(m - d - e for d, _, m, e in turns)
    print(f"--config over direct: {med['--config'] - med['direct']:.0f} µs (difference of medians), {config:.0f} µs (median of per-turn differences)")
    print(f"--daemon over direct + evaluate: {med['--daemon'] - med['direct'] - med['evaluate']:.0f} µs (difference of medians), {daemon:.0f} µs (median of per-turn differences)")


if __name__ == "__main__":
    main()
