"""Warden inside the Python process (``warden.Warden``, the native module) next
to DeerFlow's own in-process AllowlistProvider and to the daemon through the
Python HTTP client, on the same call, in one run (docs/benchmarks.md).

    scripts/build-python-native --release
    target/deerflow-venv/bin/python sdk/python/bench/inprocess_bench.py \
        --warden target/release/warden --calls 20000

The call is ``bash`` with ``git status``. Scenarios, each a closed loop, the
median and p99 per call in µs:

- ``in-process``: ``Warden.evaluate`` (the native core, the permission engine
  and the allowlist provider, a wasm component; the answer as the client's
  ``Evaluation``), on a configuration with only the allowlist provider.
- ``in-process core``: the native module's own ``evaluate`` (which makes the
  ``Evaluation`` itself), without the Python method around it.
- ``in-process, shipped config``: ``Warden.evaluate`` on examples/warden.yaml
  (allowlist, OAP passport and rules providers, triage).
- ``deerflow allowlist``: DeerFlow's ``AllowlistProvider.evaluate`` on its
  ``GuardrailRequest`` (it judges the tool name alone).
- ``daemon over HTTP``: ``WardenClient.evaluate`` against ``warden serve`` on
  loopback with the same allowlist configuration.

Then the throughput of each with 1 Python thread and with 2 threads calling at
once (each thread its own closed loop; calls per second over both), and, as a
control for the machine, the same for ``hashlib.sha256`` of 1 MiB, which runs
without the GIL: what two threads can gain at most while it is measured (on a
shared machine the second core may be busy).
"""

from __future__ import annotations

import argparse
import hashlib
import pathlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[3]
TOKEN = "bench-agent-token-0123456789abcdef"
ALLOWLIST = """guardrails:
  providers:
    - name: allowlist
      wasm: builtin:allowlist
      config: {allowed_tools: [bash, read_file, web_search, write_file]}
"""
SERVER = f"""server:
  watch_config: false
  tokens:
    - {{name: deerflow, role: internal, token: {TOKEN}}}
"""


def start(binary: str, directory: pathlib.Path):
    (directory / "warden.yaml").write_text(ALLOWLIST + SERVER)
    process = subprocess.Popen(
        [binary, "serve", "--config", "warden.yaml", "--listen", "127.0.0.1:0", "--data-dir", "data", "--no-watch"],
        cwd=directory,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    line = process.stdout.readline().decode().strip()
    return process, line.rsplit(" ", 1)[-1]


def latency(calls, fn, warmup=2000):
    for _ in range(warmup):
        fn()
    times = []
    clock = time.perf_counter_ns
    for _ in range(calls):
        t = clock()
        fn()
        times.append(clock() - t)
    times.sort()
    return statistics.median(times) / 1000, times[int(len(times) * 0.99) - 1] / 1000


def throughput(threads, calls, make):
    """Calls per second over `threads` threads, each calling `calls` times its own `make()`."""
    fns = [make() for _ in range(threads)]
    for fn in fns:
        for _ in range(200):
            fn()
    barrier = threading.Barrier(threads + 1)

    def loop(fn):
        barrier.wait()
        for _ in range(calls):
            fn()

    workers = [threading.Thread(target=loop, args=(fn,)) for fn in fns]
    for w in workers:
        w.start()
    barrier.wait()
    started = time.perf_counter()
    for w in workers:
        w.join()
    return threads * calls / (time.perf_counter() - started)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--warden", default=str(ROOT / "target" / "release" / "warden"))
    parser.add_argument("--calls", type=int, default=20000, help="calls per latency scenario")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from deerflow.guardrails.builtin import AllowlistProvider
    from deerflow.guardrails.provider import GuardrailRequest

    from warden import Warden, WardenClient

    directory = pathlib.Path(tempfile.mkdtemp(prefix="warden-inprocess-bench-"))
    process, url = start(str(pathlib.Path(args.warden).resolve()), directory)
    try:
        local = Warden.from_string(ALLOWLIST, data_dir=directory / "inprocess")
        shipped = Warden.from_config(ROOT / "examples" / "warden.yaml", data_dir=directory / "shipped")
        tool_input = {"command": "git status"}
        assert local.evaluate("bash", tool_input).allow
        assert shipped.evaluate("bash", tool_input).allow

        def in_process():
            return lambda: local.evaluate("bash", tool_input)

        core = local._core

        def in_process_core():
            return lambda: core.evaluate("bash", tool_input)

        def in_process_shipped():
            return lambda: shipped.evaluate("bash", tool_input)

        allowlist = AllowlistProvider(allowed_tools=["bash", "read_file", "web_search", "write_file"])
        request = GuardrailRequest(tool_name="bash", tool_input=tool_input, timestamp="")
        assert allowlist.evaluate(request).allow

        def deerflow():
            return lambda: allowlist.evaluate(request)

        def daemon():
            client = WardenClient(url, TOKEN)  # one keep-alive connection per thread
            assert client.evaluate("bash", tool_input).allow
            return lambda: client.evaluate("bash", tool_input)

        scenarios = [
            ("in-process", in_process),
            ("in-process core", in_process_core),
            ("in-process, shipped config", in_process_shipped),
            ("deerflow allowlist", deerflow),
            ("daemon over HTTP", daemon),
        ]
        results = {name: [] for name, _ in scenarios}
        # Alternate the scenarios in rounds: the machine is shared and noisy.
        for _ in range(args.rounds):
            for name, make in scenarios:
                calls = args.calls if name != "daemon over HTTP" else max(args.calls // 10, 1000)
                p50, p99 = latency(calls, make())
                results[name].append((p50, p99))
                print(f"{name:28} p50 {p50:8.2f} µs   p99 {p99:8.2f} µs   ({calls} calls)", flush=True)

        block = b"x" * (1 << 20)

        def control():
            return lambda: hashlib.sha256(block).digest()

        # Throughput: about half a second per measurement, 1 and 2 threads
        # alternated in rounds too; the medians are reported.
        rates = {}
        loops = [*scenarios, ("control: sha256 of 1 MiB, no GIL", control)]
        for _ in range(args.rounds):
            for name, make in loops:
                calls = {"daemon over HTTP": 2000, "control: sha256 of 1 MiB, no GIL": 300}.get(name, args.calls * 2)
                one = throughput(1, calls, make)
                two = throughput(2, calls, make)
                rates.setdefault(name, []).append((one, two))
                print(f"{name:28} 1 thread {one:9.0f}/s   2 threads {two:9.0f}/s", flush=True)
        rates = {
            name: (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
            for name, runs in rates.items()
        }

        print()
        print("| scenario | p50 µs (median of rounds) | p99 µs (median of rounds) ", end="")
        print("| calls/s, 1 thread | calls/s, 2 threads |")
        print("|---|---|---|---|---|")
        for name, _ in scenarios:
            p50 = statistics.median(r[0] for r in results[name])
            p99 = statistics.median(r[1] for r in results[name])
            one, two = rates[name]
            print(f"| {name} | {p50:.2f} | {p99:.2f} | {one:.0f} | {two:.0f} |")
        one, two = rates["control: sha256 of 1 MiB, no GIL"]
        print(f"| control: sha256 of 1 MiB, no GIL | | | {one:.0f} | {two:.0f} |")
    finally:
        process.terminate()
        process.wait()


if __name__ == "__main__":
    sys.exit(main())
