"""DeerFlow's provider with Warden inside DeerFlow's process (``config:`` a
warden.yaml instead of ``url:``): no daemon, the same decisions and pauses.
The graph tests need the real DeerFlow (skipped without it, as in
test_deerflow_agent.py); all need the native module."""

import importlib

import pytest
from conftest import ROOT, require, require_native

from warden.deerflow import GuardrailRequest, WardenProvider

require_native()

EXAMPLE = ROOT / "examples" / "deerflow" / "warden.yaml"


def codes(decision):
    return [r.code for r in decision.reasons]


@pytest.fixture
def provider(tmp_path):
    return WardenProvider(config=str(EXAMPLE), data_dir=str(tmp_path), framework="deerflow")


def test_neither_url_nor_config_is_refused_naming_both():
    with pytest.raises(ValueError, match=r"exactly one of `url`.*and `config`.*neither"):
        WardenProvider(token="t" * 24)


def test_both_url_and_config_are_refused_naming_both():
    with pytest.raises(ValueError, match=r"exactly one of `url`.*and `config`.*both"):
        WardenProvider(url="http://127.0.0.1:8787", config=str(EXAMPLE), token="t" * 24)


def test_a_config_that_does_not_load_stops_deerflow_from_starting(tmp_path):
    bad = tmp_path / "warden.yaml"
    bad.write_text("guardrails:\n  providers: 3\n")
    with pytest.raises(ValueError, match=r"guardrails\.providers"):
        WardenProvider(config=str(bad), data_dir=str(tmp_path))


def test_in_process_needs_no_token(provider, monkeypatch):
    monkeypatch.delenv("WARDEN_TOKEN", raising=False)
    assert provider.client.is_internal()


def test_an_allowed_call_is_an_allow_decision(provider):
    decision = provider.evaluate(GuardrailRequest(tool_name="web_search", tool_input={"query": "x"}))
    assert decision.allow is True and decision.metadata["warden"]["verdict"] == "allow"


def test_a_denied_call_carries_the_reason_code(provider):
    decision = provider.evaluate(GuardrailRequest(tool_name="delete_database", tool_input={}))
    assert decision.allow is False and codes(decision)[0] == "oap.tool_not_allowed"


def test_a_malformed_call_is_a_deny(provider):
    decision = provider.evaluate(GuardrailRequest(tool_name="ba sh", tool_input={"command": "ls"}))
    assert decision.allow is False and codes(decision) == ["oap.invalid_tool_name"]


def test_an_ask_outside_a_graph_is_a_deny(provider):
    # Nobody can be asked without LangGraph's run: autonomy never silently escalates.
    decision = provider.evaluate(GuardrailRequest(tool_name="bash", tool_input={"command": "git push origin main"}))
    assert decision.allow is False and codes(decision)[0] == "warden.ask_unavailable"


# --- in DeerFlow's own agent graph -------------------------------------------------------


@pytest.fixture
def deerflow():
    """The real DeerFlow, or a skip (a failure under WARDEN_REQUIRE_HARNESSES=1)."""
    return require("deerflow")


def deerflow_agent(tmp_path, calls, checkpointer=True, **config):
    require("deerflow")
    from deerflow.agents.factory import create_deerflow_agent
    from deerflow.agents.features import RuntimeFeatures
    from deerflow.config.guardrails_config import GuardrailsConfig
    from deerflow.guardrails.middleware import GuardrailMiddleware
    from deerflow.reflection import resolve_variable
    from langgraph.checkpoint.memory import InMemorySaver
    from scripted import RAN, bash, scripted, web_search, write_file

    RAN.clear()  # what the graph's tools run, from here on
    guardrails = GuardrailsConfig.model_validate(
        {
            "enabled": True,
            "fail_closed": False,
            "provider": {
                "use": "warden.deerflow:WardenProvider",
                "config": {"config": str(EXAMPLE), "data_dir": str(tmp_path), **config},
            },
        }
    )
    cls = resolve_variable(guardrails.provider.use)
    guardrail = GuardrailMiddleware(cls(**guardrails.provider.config, framework="deerflow"), fail_closed=False)
    return create_deerflow_agent(
        scripted(calls),
        [bash, write_file, web_search],
        features=RuntimeFeatures(sandbox=False, guardrail=guardrail, loop_detection=False),
        checkpointer=InMemorySaver() if checkpointer else None,
    )


def run(graph, thread, context=None):
    from langchain_core.messages import HumanMessage
    from scripted import RAN, run_config

    RAN.clear()
    config = run_config(thread)
    return config, graph.invoke({"messages": [HumanMessage("go")]}, config, context=context)


def test_in_a_graph_an_allowed_call_runs(deerflow, tmp_path, request):
    graph = deerflow_agent(tmp_path, [_call("c1", "web_search", query="guardrails")])
    run(graph, request.node.name)
    assert _ran() == [("web_search", "guardrails")]


def test_in_a_graph_a_denied_call_does_not_run_even_failing_open(deerflow, tmp_path, request):
    from scripted import tool_messages

    graph = deerflow_agent(tmp_path, [_call("c1", "bash", command="rm -rf /mnt/user-data/workspace")])
    _, state = run(graph, request.node.name)
    assert _ran() == []
    assert "(perm.rule_deny)" in tool_messages(state)["c1"].content


def test_in_a_graph_an_ask_pauses_and_the_relayed_approval_runs_it(deerflow, tmp_path, request):
    from langgraph.types import Command
    from scripted import answer

    graph = deerflow_agent(tmp_path, [_call("c1", "bash", command="git push origin main")])
    config, state = run(graph, request.node.name)
    [pause] = state["__interrupt__"]
    assert pause.value["action_requests"][0]["args"] == {"command": "git push origin main"}
    assert _ran() == []
    graph.invoke(Command(resume=answer({"type": "approve"})), config)
    assert _ran() == [("bash", "git push origin main")]


def test_in_a_graph_a_scheduled_runs_ask_is_a_deny(deerflow, tmp_path, request):
    from scripted import tool_messages

    graph = deerflow_agent(tmp_path, [_call("c1", "bash", command="git push origin main")])
    # In-process the caller is internal: the run's mode reaches Warden.
    _, state = run(graph, request.node.name, context={"run_interaction_mode": "scheduled"})
    assert "__interrupt__" not in state and _ran() == []
    content = tool_messages(state)["c1"].content
    assert "(warden.ask_unavailable)" in content and "scheduled" in content


# --- DeerFlow's async path: on the event loop where the budget allows -------------------


@pytest.fixture
def judged(monkeypatch):
    """The evaluations warden.Warden.decide returned, in order."""
    from warden.inprocess import Warden

    answers = []
    decide = Warden.decide

    def recording(self, call):
        answers.append(decide(self, call))
        return answers[-1]

    monkeypatch.setattr(Warden, "decide", recording)
    return answers


def test_in_an_async_graph_a_call_is_judged_on_the_loop_with_the_runs_context(deerflow, tmp_path, hops, judged):
    import asyncio

    from langchain_core.messages import HumanMessage

    # No checkpointer, no thread: nothing touches the store; the budget covers
    # the example's limits (its providers keep the 100 ms default).
    graph = deerflow_agent(
        tmp_path, [_call("c1", "web_search", query="guardrails")], checkpointer=False, inline_budget_ms=10_000
    )
    messages = {"messages": [HumanMessage("go")]}
    asyncio.run(graph.ainvoke(messages, context={"run_interaction_mode": "scheduled"}))
    # The run's mode came from LangGraph's context, read on the loop.
    assert [(e.verdict, e.interaction_mode) for e in judged] == [("allow", "scheduled")]
    assert _ran() == [("web_search", "guardrails")] and hops == []


def test_in_an_async_graph_over_the_budget_the_call_is_judged_off_the_loop(deerflow, tmp_path, hops):
    import asyncio

    from langchain_core.messages import HumanMessage

    graph = deerflow_agent(tmp_path, [_call("c1", "web_search", query="guardrails")], checkpointer=False)
    asyncio.run(graph.ainvoke({"messages": [HumanMessage("go")]}))
    assert _ran() == [("web_search", "guardrails")] and hops == ["evaluate"]


def test_in_an_async_graph_an_ask_pauses_and_the_relayed_approval_runs_it(deerflow, tmp_path, request, hops):
    import asyncio

    from langchain_core.messages import HumanMessage
    from langgraph.types import Command
    from scripted import answer, run_config

    # A thread: judged off the loop (its pause is in the store); LangGraph's
    # interrupt() still reaches the graph from the worker thread.
    graph = deerflow_agent(tmp_path, [_call("c1", "bash", command="git push origin main")], inline_budget_ms=10_000)
    config = run_config(request.node.name)
    state = asyncio.run(graph.ainvoke({"messages": [HumanMessage("go")]}, config))
    [pause] = state["__interrupt__"]
    assert pause.value["action_requests"][0]["args"] == {"command": "git push origin main"}
    assert _ran() == [] and hops == ["_judge"]
    asyncio.run(graph.ainvoke(Command(resume=answer({"type": "approve"})), config))
    assert _ran() == [("bash", "git push origin main")]


class OlderClient:
    """A client of the caller's own, written before WardenAPI had judges_inline."""

    def __init__(self, warden):
        self._warden = warden

    def is_internal(self):
        return self._warden.is_internal()

    def decide(self, call):
        return self._warden.decide(call)


def test_a_client_without_judges_inline_is_judged_off_the_loop_as_before(provider, hops):
    import asyncio

    older = WardenProvider(client=OlderClient(provider.client))
    decision = asyncio.run(older.aevaluate(GuardrailRequest(tool_name="web_search", tool_input={"query": "x"})))
    assert decision.allow is True and hops == ["evaluate"]


def _call(id, name, **args):
    return importlib.import_module("scripted").call(id, name, **args)


def _ran():
    return list(importlib.import_module("scripted").RAN)
