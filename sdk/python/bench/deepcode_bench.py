"""Warden's ``permission_checker`` for DeepCode beside DeepCode's own
permission engine (``core/harness/permissions.py``), on the same calls,
interleaved call by call in one run (docs/benchmarks.md).

    scripts/build-python-native target/deerflow-venv          # or --release, for the release figures
    target/deerflow-venv/bin/python sdk/python/bench/deepcode_bench.py --calls 20000

Judges only (no tool runs): DeepCode's ``engine.evaluate(name, args)`` as its
product wires it (``make_engine`` with the coding tools' read-only names and
rules), against ``WardenChecker(config=...)`` (Warden in this process, the
equivalent permission rules, no guardrail providers), its sync ``check`` and
its async ``await checker(...)`` (on one event loop: in-process judging is
within the inline budget, so it stays on the loop), and ``Warden.decide`` on
the request the checker makes (Warden's share; the rest is the checker's). Every answer is checked
against the expected decision so that a fast wrong answer cannot count.
"""

from __future__ import annotations

import argparse
import asyncio
import pathlib
import statistics
import tempfile
import time
from typing import Any, Callable, Dict, List, Tuple

RULES = {"bash": {"git push *": "ask", "git status*": "allow", "rm -rf *": "deny"}, "write": {"src/*": "allow"}}
CONFIG = """guardrails:
  providers: []
permissions:
  mode: default
  allow: ["Bash(git status*)", "Edit(src/**)"]
  ask: ["Bash(git push *)"]
  deny: ["Bash(rm -rf *)"]
"""


def calls(home: str) -> Dict[str, Tuple[str, Dict[str, Any], str]]:
    return {
        "bash `git status` (allow)": ("bash", {"command": "git status"}, "allow"),
        "write `src/a.py` (allow)": ("write", {"file_path": "src/a.py", "content": "x = 1\n"}, "allow"),
        "read `~/.ssh/id_rsa` (deny)": ("read", {"file_path": f"{home}/.ssh/id_rsa"}, "deny"),
        "bash `rm -rf build` (deny)": ("bash", {"command": "rm -rf build"}, "deny"),
    }


def summary(times: List[float]) -> Tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20000, help="calls per judge and call kind")
    args = parser.parse_args()

    from core.harness.permissions import make_engine
    from core.harness.tools import default_coding_tools

    from warden.deepcode import WardenChecker

    with tempfile.TemporaryDirectory() as tmp:
        ws = pathlib.Path(tmp) / "ws"
        ws.mkdir()
        (pathlib.Path(tmp) / "warden.yaml").write_text(CONFIG)
        registry = default_coding_tools(str(ws))
        engine = make_engine("default", rules_config=RULES, cwd=str(ws), extra_read_only=registry.read_only_tool_names)
        checker = WardenChecker(config=str(pathlib.Path(tmp) / "warden.yaml"), data_dir=f"{tmp}/data", workspace=ws)
        loop = asyncio.new_event_loop()

        def deepcode(name: str, a: Dict[str, Any]) -> str:
            return str(engine.evaluate(name, a)[0].value)

        def warden_sync(name: str, a: Dict[str, Any]) -> str:
            return checker.check(name, a)[0]

        async def timed(name: str, a: Dict[str, Any]) -> Tuple[str, float]:
            # Timed inside the loop, as DeepCode's runner awaits it: the loop's own turn is not the checker's.
            start = time.perf_counter_ns()
            answer = await checker(name, a)
            return answer[0], (time.perf_counter_ns() - start) / 1000

        def warden_async(name: str, a: Dict[str, Any]) -> str:
            answer, took = loop.run_until_complete(timed(name, a))
            inner.append(took)
            return answer

        inner: List[float] = []

        def core(name: str, a: Dict[str, Any]) -> str:
            # Warden's own share: the request the checker sends, judged by the face alone.
            return checker.client.decide(checker._calls(name, a)[0]).verdict

        judges: Dict[str, Callable[[str, Dict[str, Any]], str]] = {
            "DeepCode's engine": deepcode,
            "Warden.decide alone": core,
            "warden.deepcode, sync": warden_sync,
            "warden.deepcode, async": warden_async,
        }

        print(f"{args.calls} calls per row, interleaved; µs per call (async: timed inside the event loop)")
        print(f"{'call':30} {'judge':24} {'p50':>8} {'p99':>8} {'vs engine p50':>14}")
        for label, (name, a, expected) in calls(str(pathlib.Path.home())).items():
            times: Dict[str, List[float]] = {j: [] for j in judges}
            for judge, fn in judges.items():  # warm, and check the answer
                got = fn(name, dict(a))
                inner.clear()
                if got != expected:
                    raise SystemExit(f"{judge} answered {got} for {label}, expected {expected}")
            for _ in range(args.calls):
                for judge, fn in judges.items():
                    start = time.perf_counter_ns()
                    fn(name, a)
                    took = (time.perf_counter_ns() - start) / 1000
                    times[judge].append(inner.pop() if judge.endswith("async") else took)
            base = summary(times["DeepCode's engine"])[0]
            for judge in judges:
                p50, p99 = summary(times[judge])
                print(f"{label:30} {judge:24} {p50:8.1f} {p99:8.1f} {p50 / base:13.2f}x")
        loop.close()


if __name__ == "__main__":
    main()
