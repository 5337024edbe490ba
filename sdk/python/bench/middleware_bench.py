"""The guardrail's share of a tool call through DeerFlow's own middleware
(``GuardrailMiddleware``), sync and async: Warden in this process
(``WardenProvider(config=...)``) next to DeerFlow's ``AllowlistProvider``, on
the same calls, interleaved call by call in one run (docs/benchmarks.md).

    scripts/build-python-native target/deerflow-venv
    target/deerflow-venv/bin/python sdk/python/bench/middleware_bench.py --calls 20000

Each call goes through ``wrap_tool_call`` (sync) or ``awrap_tool_call`` (awaited
on one asyncio event loop) with a tool handler that returns a prebuilt
message; ``none`` calls the handler alone. A provider's share is its time less
``none``'s, at the median. Calls: ``web_search`` (allowlist only: Warden reads
no command) and ``bash`` with ``git status`` (a shell call: Warden parses the
command), both allowed. Providers:

- ``allowlist``: DeerFlow's ``AllowlistProvider`` (it reads the tool name).
- ``warden``: ``WardenProvider`` over ``warden.Warden`` with the allowlist
  provider under ``limits: {timeout_ms: 1, configure_timeout_ms: 1}``: its
  worst case (5 ms: the wait for an instance, a new one's ``configure``, the
  call) is within the default inline budget, so the async path judges on the
  event loop.
- ``warden, off the loop``: the same with ``inline_budget_ms: 0``: the async
  path hops to a worker thread (``asyncio.to_thread``), as every async call
  did before.
- ``warden core, no adapter`` (a bound, not a provider to use): the same
  ``warden.Warden`` called straight from a provider that passes the tool's
  name, arguments and timestamp and answers a bare allow or deny: what
  ``WardenProvider`` would cost if the adapter's own Python (the run's context,
  the request's fields, DeerFlow's decision with Warden's reasons and
  metadata, pauses) took no time.

Three passes, sync then async in each: the floor and ``allowlist`` interleaved
with ``warden``, then with ``warden, off the loop`` (whose worker threads would
otherwise still hold the GIL when an on-the-loop call starts), then with
``warden core, no adapter``; the table shows ``none`` and ``allowlist`` from the
first pass, each ratio is within its pass.

A call a provider denies (with ``timeout_ms: 1``, a call the machine's load
holds past its deadline fails closed: ``oap.evaluator_error``) is counted and
reported; its time is kept.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import pathlib
import statistics
import tempfile
import time
from typing import Any, Callable, Dict, List, Tuple

TOOLS = ["bash", "read_file", "web_search", "write_file"]
CONFIG = f"""guardrails:
  providers:
    - name: allowlist
      wasm: builtin:allowlist
      config: {{allowed_tools: [{", ".join(TOOLS)}]}}
      limits: {{timeout_ms: 1, configure_timeout_ms: 1}}
"""
CALLS = {
    "allowlist-only call": ("web_search", {"query": "deerflow guardrails"}),
    "shell call": ("bash", {"command": "git status"}),
}


def summary(times: List[float]) -> Tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000, help="calls per scenario")
    parser.add_argument("--warmup", type=int, default=2000)
    args = parser.parse_args()

    from deerflow.guardrails.builtin import AllowlistProvider
    from deerflow.guardrails.middleware import GuardrailMiddleware
    from deerflow.guardrails.provider import GuardrailDecision
    from langchain_core.messages import ToolMessage
    from langgraph.prebuilt.tool_node import ToolCallRequest

    from warden import Warden
    from warden.deerflow import WardenProvider

    logging.getLogger("deerflow").setLevel(logging.ERROR)  # a deny is counted, not logged
    directory = pathlib.Path(tempfile.mkdtemp(prefix="warden-middleware-bench-"))
    config = directory / "warden.yaml"
    config.write_text(CONFIG)
    providers: Dict[str, Any] = {
        "none": None,
        "allowlist": AllowlistProvider(allowed_tools=TOOLS),
        "warden": WardenProvider(config=str(config), data_dir=str(directory / "data")),
        "warden, off the loop": WardenProvider(
            config=str(config), data_dir=str(directory / "data-off"), inline_budget_ms=0
        ),
    }
    core = Warden.from_config(config, data_dir=directory / "data-core")
    core_allow, core_deny = GuardrailDecision(allow=True), GuardrailDecision(allow=False)

    class CoreAlone:
        name = "warden core, no adapter"

        def evaluate(self, request: Any) -> Any:
            context = {"timestamp": request.timestamp} if request.timestamp else None
            evaluation = core.evaluate(request.tool_name, request.tool_input, context=context)
            return core_allow if evaluation.allow else core_deny

        async def aevaluate(self, request: Any) -> Any:
            return self.evaluate(request)

    providers["warden core, no adapter"] = CoreAlone()
    assert providers["warden"].client.judges_inline()
    assert not providers["warden, off the loop"].client.judges_inline()
    middlewares = {name: GuardrailMiddleware(p) for name, p in providers.items() if p is not None}

    done = ToolMessage(content="ok", tool_call_id="call-1", name="tool")

    def handler(request: Any) -> Any:
        return done

    async def ahandler(request: Any) -> Any:
        return done

    requests = {
        call: ToolCallRequest(
            tool_call={"name": name, "args": tool_input, "id": "call-1", "type": "tool_call"},
            tool=None,
            state={},
            runtime=None,  # type: ignore[arg-type]
        )
        for call, (name, tool_input) in CALLS.items()
    }

    def sync_scenario(name: str, request: Any) -> Callable[[], Any]:
        if name == "none":
            return lambda: handler(request)
        middleware = middlewares[name]
        return lambda: middleware.wrap_tool_call(request, handler)

    def async_scenario(name: str, request: Any) -> Callable[[], Any]:
        if name == "none":
            return lambda: ahandler(request)
        middleware = middlewares[name]
        return lambda: middleware.awrap_tool_call(request, ahandler)

    for call in CALLS:
        for name in providers:
            result = sync_scenario(name, requests[call])()
            assert result is done, f"{name} did not allow the {call}: {result}"

    clock = time.perf_counter_ns
    denied: Dict[Tuple[str, str, str], int] = {}

    def run_sync(keys: List[Tuple[str, str]]) -> Dict[Tuple[str, str], List[float]]:
        times: Dict[Tuple[str, str], List[float]] = {key: [] for key in keys}
        fns = {key: sync_scenario(key[1], requests[key[0]]) for key in keys}
        for i in range(args.warmup + args.calls):
            for key, fn in fns.items():
                t = clock()
                result = fn()
                if i >= args.warmup:
                    times[key].append((clock() - t) / 1000)
                if result is not done:
                    denied[(*key, "sync")] = denied.get((*key, "sync"), 0) + 1
        return times

    async def run_async(keys: List[Tuple[str, str]]) -> Dict[Tuple[str, str], List[float]]:
        times: Dict[Tuple[str, str], List[float]] = {key: [] for key in keys}
        fns = {key: async_scenario(key[1], requests[key[0]]) for key in keys}
        for i in range(args.warmup + args.calls):
            for key, fn in fns.items():
                t = clock()
                result = await fn()
                if i >= args.warmup:
                    times[key].append((clock() - t) / 1000)
                if result is not done:
                    denied[(*key, "async")] = denied.get((*key, "async"), 0) + 1
        return times

    # A pass for each of Warden's, interleaving it with the floor and
    # DeerFlow's provider: the worker threads of the off-the-loop pass would otherwise
    # still hold the GIL when the next call starts on the loop.
    wardens = ("warden", "warden, off the loop", "warden core, no adapter")
    results: Dict[Tuple[str, str, str, str], Tuple[float, float, float]] = {}  # p50, p99, share
    for warden in wardens:
        names = ("none", "allowlist", warden)
        keys = [(call, name) for call in CALLS for name in names]
        for mode, times in (("sync", run_sync(keys)), ("async", asyncio.run(run_async(keys)))):
            for call in CALLS:
                floor = summary(times[(call, "none")])[0]
                for name in names:
                    p50, p99 = summary(times[(call, name)])
                    results[(warden, call, name, mode)] = (p50, p99, p50 - floor)

    print(f"{args.calls} calls per scenario, interleaved call by call; µs (none and allowlist: the first pass)")
    print()
    print("| call | provider | sync p50 | sync p99 | sync share p50 | async p50 | async p99 | async share p50 |")
    print("|---|---|---|---|---|---|---|---|")
    for call in CALLS:
        for name in ("none", "allowlist", *wardens):
            row = [call, name]
            for mode in ("sync", "async"):
                p50, p99, share = results[(name if name in wardens else "warden", call, name, mode)]
                row += [f"{p50:.2f}", f"{p99:.2f}", "" if name == "none" else f"{share:.2f}"]
            print("| " + " | ".join(row) + " |")
    print()
    for call in CALLS:
        for mode in ("sync", "async"):
            for warden in wardens:
                ratio = results[(warden, call, warden, mode)][2] / results[(warden, call, "allowlist", mode)][2]
                print(f"{call}, {mode}: {warden} share ÷ allowlist share (same pass) = {ratio:.2f}")
    total = args.warmup + args.calls
    for (call, name, mode), count in sorted(denied.items()):
        print(f"denied: {call}, {name}, {mode}: {count} of {total} calls")


if __name__ == "__main__":
    main()
