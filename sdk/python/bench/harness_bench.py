"""What Warden's Python adapters add, per call, over the daemon itself, measured
in one run next to DeerFlow's own AllowlistProvider (docs/benchmarks.md).

    target/deerflow-venv/bin/python sdk/python/bench/harness_bench.py \
        --warden target/release/warden --calls 5000

Scenarios, each a closed loop on one connection, median and p99 in µs:

- ``daemon``: the bare round trip, a prebuilt request body over ``http.client``
  and the answer parsed: what any client pays.
- ``provider``: ``WardenProvider.evaluate`` on a DeerFlow ``GuardrailRequest``.
- ``middleware+warden``: DeerFlow's ``GuardrailMiddleware.wrap_tool_call`` with the
  WardenProvider, for an allowed call (the tool's handler returns at once).
- ``middleware+allowlist``: the same with DeerFlow's own ``AllowlistProvider``.
- ``pause``: the pause path, a call that needs a human: Warden's gate records
  the pause and the interrupt is raised (``Relay.judge`` up to LangGraph's
  ``interrupt``), on a new thread each time.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

TOKEN = "bench-relay-token-0123456789abcdef"
CONFIG = f"""guardrails:
  providers:
    - name: allowlist
      wasm: builtin:allowlist
      config: {{allowed_tools: [bash, read_file, web_search, write_file]}}
hitl_approval:
  tools: [write_file]
  max_pending_per_principal: 1000000
server:
  watch_config: false
  tokens:
    - {{name: deerflow, role: agent, relay: true, token: {TOKEN}}}
"""


def start(binary: str, directory: pathlib.Path):
    (directory / "warden.yaml").write_text(CONFIG)
    process = subprocess.Popen(
        [binary, "serve", "--config", "warden.yaml", "--listen", "127.0.0.1:0", "--data-dir", "data", "--no-watch"],
        cwd=directory,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    line = process.stdout.readline().decode().strip()
    return process, line.rsplit(" ", 1)[-1]


def measure(name, calls, fn, warmup=200):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(calls):
        t = time.perf_counter_ns()
        fn()
        times.append((time.perf_counter_ns() - t) / 1000)
    times.sort()
    p50 = statistics.median(times)
    p99 = times[int(len(times) * 0.99) - 1]
    print(f"{name:24} p50 {p50:9.1f} µs   p99 {p99:9.1f} µs   ({calls} calls)")
    return p50, p99


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--warden", default="target/release/warden")
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--pauses", type=int, default=500)
    args = parser.parse_args()

    from deerflow.guardrails.builtin import AllowlistProvider
    from deerflow.guardrails.middleware import GuardrailMiddleware
    from deerflow.guardrails.provider import GuardrailRequest
    from langchain_core.messages import ToolMessage
    from langgraph.prebuilt.tool_node import ToolCallRequest

    from warden.approval import Relay
    from warden.client import WardenClient
    from warden.deerflow import WardenProvider

    directory = pathlib.Path(tempfile.mkdtemp(prefix="warden-bench-"))
    process, url = start(str(pathlib.Path(args.warden).resolve()), directory)
    try:
        host, port = url.split("//", 1)[1].split(":")
        results = {}

        conn = http.client.HTTPConnection(host, int(port))
        body = json.dumps({"tool_name": "bash", "tool_input": {"command": "git status"}}).encode()
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}

        def bare():
            conn.request("POST", "/v1/evaluate", body=body, headers=headers)
            json.loads(conn.getresponse().read())

        provider = WardenProvider(url=url, token=TOKEN, framework="deerflow")
        request = GuardrailRequest(tool_name="bash", tool_input={"command": "git status"}, timestamp="")

        def evaluate():
            assert provider.evaluate(request).allow

        tool_call = {"name": "bash", "args": {"command": "git status"}, "id": "call-1", "type": "tool_call"}
        call_request = ToolCallRequest(tool_call=tool_call, tool=None, state={}, runtime=None)

        def handler(_):
            return ToolMessage(content="ok", tool_call_id="call-1")

        warden_mw = GuardrailMiddleware(provider, fail_closed=True)
        allowlist_mw = GuardrailMiddleware(AllowlistProvider(allowed_tools=["bash"]), fail_closed=True)

        def through(middleware):
            def run():
                assert middleware.wrap_tool_call(call_request, handler).content == "ok"

            return run

        # Alternate the scenarios in rounds: the machine is shared and noisy.
        rounds = 3
        per_round = max(args.calls // rounds, 1)
        for name, fn in [
            ("daemon", bare),
            ("provider", evaluate),
            ("middleware+warden", through(warden_mw)),
            ("middleware+allowlist", through(allowlist_mw)),
        ] * rounds:
            results.setdefault(name, []).append(measure(name, per_round, fn))

        client = WardenClient(url, TOKEN)

        class Paused(Exception):
            pass

        def interrupt(value):
            raise Paused(value)

        relay = Relay(client, interrupt)
        message = {"tool_calls": [{"id": "c1", "name": "write_file", "args": {"path": "a.md", "content": "x"}}]}
        counter = iter(range(10**9))

        def pause():
            n = next(counter)
            try:
                relay.judge(f"bench-{os.getpid()}-{n}", "run-1", message, {})
            except Paused:
                return
            raise AssertionError("did not pause")

        results["pause"] = [measure("pause", args.pauses, pause, warmup=20)]

        print()
        median = {name: statistics.median(p50 for p50, _ in runs) for name, runs in results.items()}
        print(f"provider over the daemon:           p50 +{median['provider'] - median['daemon']:.1f} µs")
        print(f"middleware+warden over the daemon:  p50 +{median['middleware+warden'] - median['daemon']:.1f} µs")
        print(f"pause path:                         p50 {median['pause']:.1f} µs")
    finally:
        process.terminate()
        process.wait()


if __name__ == "__main__":
    sys.exit(main())
