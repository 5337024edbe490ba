"""Warden in-process on an asyncio event loop: the ``a*`` methods judge a call
on the loop itself when the configuration's worst case (the providers' and the
classifier's time limits, ``Warden.worst_case_ms``) is within the inline
budget and the call names no thread; otherwise on a worker thread, so that a
slow provider never holds the loop.

Which path a call took is read from the worker-thread hops the package makes
(``asyncio.to_thread``, recorded and passed on); whether the loop stayed free,
from a ticker task running beside the call. Needs the native module."""

import asyncio
import time

import pytest
from conftest import GUESTS, require_native

inprocess = require_native()
Warden = inprocess.Warden

HOSTILE = GUESTS / "hostile.wasm"
CLASSIFIER = GUESTS / "classifier.wasm"


# A new instance's configure gets room to spare on a loaded machine (1 ms
# would be refused there now and then); the budgets below are set from it.
CONFIGURE_MS = 20


def worst_case(timeout_ms, configure_ms=CONFIGURE_MS):
    """One provider's worst case: its limit waiting for an instance, then a
    limit and one tick (1 ms) twice: configuring a new instance, the call."""
    return timeout_ms + (configure_ms + 1) + (timeout_ms + 1)


BUDGET = worst_case(1)


def allowlist_yaml(timeout_ms, configure_ms=CONFIGURE_MS):
    return (
        "guardrails:\n  providers:\n"
        "    - {name: allowlist, wasm: builtin:allowlist, config: {allowed_tools: [bash]},"
        f" limits: {{timeout_ms: {timeout_ms}, configure_timeout_ms: {configure_ms}}}}}\n"
    )


def slow_yaml(ms, timeout_ms):
    """A provider that spins for ``ms`` of wall-clock time, then allows."""
    return (
        f"guardrails:\n  providers:\n    - {{name: slow, wasm: {HOSTILE}, config: {{behaviour: slow, ms: {ms}}},"
        f" limits: {{timeout_ms: {timeout_ms}, fuel: 1125899906842624}}}}\n"
    )


async def judged_beside_a_ticker(judge):
    """Runs ``judge()`` (a coroutine) beside a task that ticks every 5 ms;
    the decision, and how many ticks fell while it judged."""
    ticks = []
    stop = asyncio.Event()

    async def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            await asyncio.sleep(0.005)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.02)  # the ticker is running
    started = time.monotonic()
    decision = await judge()
    ended = time.monotonic()
    stop.set()
    await task
    return decision, sum(1 for t in ticks if started < t < ended)


def test_a_configuration_bounded_within_the_budget_is_judged_on_the_loop(tmp_path, hops):
    # One provider whose worst case (a wait for an instance, a new instance
    # configured, the call) is within the budget.
    warden = Warden.from_string(allowlist_yaml(1), data_dir=tmp_path, inline_budget_ms=BUDGET)
    assert warden.worst_case_ms == BUDGET
    assert warden.judges_inline()

    async def judge():
        return [
            await warden.aevaluate("bash", {"command": "ls"}),
            await warden.adecide({"tool_name": "rm", "tool_input": {}}),
            await warden.aevaluate_call({"tool_name": "bash", "tool_input": {"command": "ls"}}),
        ]

    verdicts = [d.verdict for d in asyncio.run(judge())]
    assert verdicts == ["allow", "deny", "allow"] and hops == []


def test_a_slow_provider_is_judged_off_the_loop_which_keeps_running(tmp_path, hops):
    # The provider may run for a second: far over the budget.
    warden = Warden.from_string(slow_yaml(300, 1000), data_dir=tmp_path)
    assert warden.worst_case_ms > warden.inline_budget_ms and not warden.judges_inline()
    decision, ticks = asyncio.run(judged_beside_a_ticker(lambda: warden.aevaluate("bash", {"command": "ls"})))
    assert decision.allow and hops == ["evaluate"]
    # 300 ms of judging: the ticker went on meanwhile (on the loop, it could not).
    assert ticks >= 5


def test_the_ticker_stops_while_a_call_is_judged_on_the_loop(tmp_path, hops):
    # The same provider with a budget that covers it: judged on the loop, which
    # holds the ticker for the whole call. (What the test above rules out.)
    warden = Warden.from_string(slow_yaml(100, 1000), data_dir=tmp_path, inline_budget_ms=10_000)
    assert warden.judges_inline()
    decision, ticks = asyncio.run(judged_beside_a_ticker(lambda: warden.aevaluate("bash", {"command": "ls"})))
    assert decision.allow and hops == [] and ticks == 0


def test_a_budget_of_zero_never_judges_on_the_loop(tmp_path, hops):
    warden = Warden.from_string(allowlist_yaml(1), data_dir=tmp_path, inline_budget_ms=0)
    assert not warden.judges_inline()
    assert asyncio.run(warden.aevaluate("bash", {"command": "ls"})).allow
    assert hops == ["evaluate"]


def test_a_call_naming_a_thread_is_judged_off_the_loop(tmp_path, hops):
    # Its thread's pause is looked up in the approval store (and an overdue
    # one expired there): not on the loop.
    warden = Warden.from_string(allowlist_yaml(1), data_dir=tmp_path, inline_budget_ms=BUDGET)
    call = {"tool_name": "bash", "tool_input": {"command": "ls"}, "context": {"thread_id": "t-1"}}
    assert warden.judges_inline() and not warden.judges_inline(call)
    assert asyncio.run(warden.adecide(call)).allow
    assert asyncio.run(warden.aevaluate("bash", {"command": "ls"}, context={"thread_id": "t-1"})).allow
    assert hops == ["decide", "evaluate"]


def test_the_budget_can_be_changed_on_a_running_warden(tmp_path):
    warden = Warden.from_string(allowlist_yaml(1), data_dir=tmp_path)
    warden.inline_budget_ms = BUDGET - 0.5
    assert not warden.judges_inline()
    warden.inline_budget_ms = BUDGET
    assert warden.judges_inline()


@pytest.mark.parametrize("budget", [-1, float("nan"), float("inf"), "5", True, None])
def test_an_inline_budget_that_is_not_a_duration_is_refused(tmp_path, budget):
    with pytest.raises(ValueError, match="inline_budget_ms"):
        Warden.from_string(allowlist_yaml(1), data_dir=tmp_path, inline_budget_ms=budget)


def test_the_worst_case_counts_every_provider_and_the_classifier(tmp_path):
    text = (
        allowlist_yaml(1)
        + f"    - {{name: slow, wasm: {HOSTILE}, config: {{behaviour: slow, ms: 0}},\n"
        + "       limits: {timeout_ms: 2, configure_timeout_ms: 2}}\n"
        + f"    - {{name: risk, wasm: {CLASSIFIER}, role: classifier,\n"
        + "       limits: {timeout_ms: 3, configure_timeout_ms: 3}}\n"
    )
    warden = Warden.from_string(text, data_dir=tmp_path)
    assert warden.worst_case_ms == worst_case(1) + worst_case(2, 2) + worst_case(3, 3)


def test_without_providers_every_call_is_judged_on_the_loop(tmp_path):
    warden = Warden.from_string("guardrails:\n  providers: []\n", data_dir=tmp_path)
    assert warden.worst_case_ms == 0.0 and warden.judges_inline()
    assert warden.inline_budget_ms == 5.0  # the default


def test_a_reload_changes_the_worst_case(tmp_path, hops):
    config = tmp_path / "warden.yaml"
    config.write_text(allowlist_yaml(1))
    warden = Warden.from_config(config, data_dir=tmp_path / "data", inline_budget_ms=BUDGET)
    assert warden.judges_inline()
    config.write_text(allowlist_yaml(50))
    warden.reload()
    assert warden.worst_case_ms == worst_case(50) and not warden.judges_inline()
    assert asyncio.run(warden.aevaluate("bash", {"command": "ls"})).allow
    assert hops == ["evaluate"]
