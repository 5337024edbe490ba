"""The real DeerFlow (PyPI ``deerflow-kernel``): its ``GuardrailMiddleware`` with
``warden.deerflow:WardenProvider`` in a DeerFlow agent graph driven by a
scripted fake model, against a real ``warden serve`` on the shipped DeerFlow
example. Every refusal is a deny even under ``fail_closed: false``; a
permission ask pauses the graph and a relayed answer approves, edits or
rejects; a scheduled run's ask is a deny; a tool under ``hitl_approval`` never
runs without approval."""

import math

import pytest
from conftest import ADMIN, INTERNAL, RELAY, require

require("deerflow")

from deerflow.agents.factory import create_deerflow_agent  # noqa: E402
from deerflow.agents.features import RuntimeFeatures  # noqa: E402
from deerflow.config.guardrails_config import GuardrailsConfig  # noqa: E402
from deerflow.guardrails.middleware import GuardrailMiddleware  # noqa: E402
from deerflow.reflection import resolve_variable  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command  # noqa: E402
from scripted import RAN, answer, bash, call, run_config, scripted, tool_messages, web_search, write_file  # noqa: E402


def provider(daemon, **config):
    """The provider as DeerFlow builds it from config.yaml: `use` resolved by
    DeerFlow's own reflection, `framework` injected."""
    guardrails = GuardrailsConfig.model_validate(
        {
            "enabled": True,
            "fail_closed": False,
            "provider": {"use": "warden.deerflow:WardenProvider", "config": {"url": daemon.url, **config}},
        }
    )
    cls = resolve_variable(guardrails.provider.use)
    return cls(**guardrails.provider.config, framework="deerflow")


def deerflow_agent(daemon, calls, *, checkpointer=True, **config):
    config.setdefault("token", RELAY)
    model = scripted(calls)
    guardrail = GuardrailMiddleware(provider(daemon, **config), fail_closed=False)
    return create_deerflow_agent(
        model,
        [bash, write_file, web_search],
        features=RuntimeFeatures(sandbox=False, guardrail=guardrail, loop_detection=False),
        checkpointer=InMemorySaver() if checkpointer else None,
    )


def run(graph, thread, context=None):
    RAN.clear()
    config = run_config(thread)
    state = graph.invoke({"messages": [HumanMessage("go")]}, config, context=context)
    return config, state


def resume(*decisions):
    return Command(resume=answer(*decisions))


# --- every refusal is a deny under fail_closed: false --------------------------------


def deep(levels=80):
    value = {}
    node = value
    for _ in range(levels):
        node["a"] = {}
        node = node["a"]
    return value


def recursive():
    args = {"command": "cat ~/.ssh/id_rsa"}
    args["again"] = args
    return args


@pytest.mark.parametrize(
    "name, args, code",
    [
        ("bash", {"command": "cat ~/.ssh/id_rsa", "timeout": math.nan}, "warden.unencodable_input"),
        ("bash", {"command": "cat ~/.ssh/id_rsa \ud800"}, "warden.unencodable_input"),
        ("bash", {"command": "ls", "nested": deep()}, "warden.input_too_deep"),
        ("bash", {"command": "x" * (1 << 20)}, "warden.input_too_large"),
        ("", {"command": "ls"}, "oap.invalid_tool_name"),
        ("ba sh", {"command": "ls"}, "oap.invalid_tool_name"),
    ],
    ids=["nan", "lone-surrogate", "too-deep", "too-large", "empty-name", "name-with-space"],
)
def test_what_the_model_wrote_is_a_deny_not_a_run(deerflow_daemon, request, name, args, code):
    graph = deerflow_agent(deerflow_daemon, [call("c1", name, **args)])
    _, state = run(graph, request.node.name)
    assert RAN == []
    assert f"({code})" in tool_messages(state)["c1"].content


@pytest.mark.parametrize(
    "args",
    [{"command": "ls", "nested": deep(1500)}, {"command": "ls", "nested": deep(5000)}, recursive()],
    ids=["nested-1500", "nested-5000", "recursive"],
)
def test_arguments_python_cannot_encode_are_a_deny_not_a_run(deerflow_daemon, request, args):
    # No checkpointer: LangGraph's own cannot store such a message (it fails
    # after the deny, with nothing run).
    graph = deerflow_agent(deerflow_daemon, [call("c1", "bash", **args)], checkpointer=False)
    _, state = run(graph, request.node.name)
    assert RAN == []
    assert "(warden.input_too_deep)" in tool_messages(state)["c1"].content


@pytest.mark.parametrize(
    "token, code", [("not-a-token-0123456789abcdef", "warden.unauthorized"), (ADMIN, "warden.forbidden")]
)
def test_a_refused_token_is_a_deny_not_a_run(deerflow_daemon, request, token, code):
    graph = deerflow_agent(deerflow_daemon, [call("c1", "bash", command="ls")], token=token)
    _, state = run(graph, request.node.name)
    assert RAN == []
    assert f"({code})" in tool_messages(state)["c1"].content


def test_a_token_variable_that_is_unset_stops_deerflow_from_starting(deerflow_daemon, monkeypatch):
    monkeypatch.delenv("WARDEN_UNSET_TOKEN", raising=False)
    with pytest.raises(ValueError, match="WARDEN_UNSET_TOKEN"):
        provider(deerflow_daemon, token_env="WARDEN_UNSET_TOKEN")


def test_a_thread_waiting_for_a_human_denies_other_calls(deerflow_daemon, request):
    thread = request.node.name
    paused = deerflow_agent(deerflow_daemon, [call("c1", "bash", command="git push origin main")])
    _, state = run(paused, thread)
    assert state["__interrupt__"]
    other = deerflow_agent(deerflow_daemon, [call("c2", "bash", command="ls")])
    _, state = run(other, thread)
    assert RAN == []
    assert "(warden.approval_pending)" in tool_messages(state)["c2"].content


def test_an_allowed_call_runs(deerflow_daemon, request):
    graph = deerflow_agent(deerflow_daemon, [call("c1", "web_search", query="deerflow guardrails")])
    run(graph, request.node.name)
    assert RAN == [("web_search", "deerflow guardrails")]


# --- a permission ask pauses; the human approves, edits or rejects --------------------


@pytest.fixture
def paused_push(deerflow_daemon, request):
    graph = deerflow_agent(deerflow_daemon, [call("c1", "bash", command="git push origin main")])
    config, state = run(graph, request.node.name)
    return graph, config, state


def test_a_permission_ask_pauses_the_graph_in_the_hitl_shape(paused_push):
    _, _, state = paused_push
    [pause] = state["__interrupt__"]
    [action] = pause.value["action_requests"]
    assert action["name"] == "bash" and action["args"] == {"command": "git push origin main"}
    assert "Bash(git push *)" in action["description"]
    assert pause.value["review_configs"][0]["allowed_decisions"] == ["approve", "edit", "reject"]
    assert RAN == []


def test_an_approval_runs_the_call(paused_push):
    graph, config, _ = paused_push
    graph.invoke(resume({"type": "approve"}), config)
    assert RAN == [("bash", "git push origin main")]


def test_an_edit_runs_the_edited_call(paused_push):
    graph, config, _ = paused_push
    edit = {"type": "edit", "edited_action": {"name": "bash", "args": {"command": "git push --dry-run origin main"}}}
    graph.invoke(resume(edit), config)
    assert RAN == [("bash", "git push --dry-run origin main")]


def test_a_rejection_runs_nothing_and_tells_the_model_why(paused_push):
    graph, config, _ = paused_push
    state = graph.invoke(resume({"type": "reject", "message": "not on a Friday"}), config)
    assert RAN == []
    assert "not on a Friday" in tool_messages(state)["c1"].content


def test_an_edit_the_policy_denies_does_not_run(paused_push):
    graph, config, _ = paused_push
    edit = {"type": "edit", "edited_action": {"name": "bash", "args": {"command": "rm -rf /mnt/user-data/workspace"}}}
    state = graph.invoke(resume(edit), config)
    assert RAN == []
    assert "perm.rule_deny" in tool_messages(state)["c1"].content


# --- nobody can be asked --------------------------------------------------------------


def test_a_scheduled_deployments_ask_is_a_deny(deerflow_daemon, request):
    graph = deerflow_agent(
        deerflow_daemon, [call("c1", "bash", command="git push origin main")], interaction_mode="scheduled"
    )
    _, state = run(graph, request.node.name)
    assert "__interrupt__" not in state and RAN == []
    assert "(warden.ask_unavailable)" in tool_messages(state)["c1"].content


def test_a_scheduled_runs_mode_reaches_warden_from_the_runtime_context(deerflow_daemon, request):
    graph = deerflow_agent(deerflow_daemon, [call("c1", "bash", command="git push origin main")], token=INTERNAL)
    _, state = run(graph, request.node.name, context={"run_interaction_mode": "scheduled"})
    assert "__interrupt__" not in state and RAN == []
    content = tool_messages(state)["c1"].content
    assert "(warden.ask_unavailable)" in content and "scheduled" in content


def test_an_ask_without_a_checkpointer_is_a_deny(deerflow_daemon, request):
    graph = deerflow_agent(deerflow_daemon, [call("c1", "bash", command="git push origin main")], checkpointer=False)
    state = graph.invoke({"messages": [HumanMessage("go")]})
    assert "__interrupt__" not in state
    assert "(warden.ask_unavailable)" in tool_messages(state)["c1"].content


# --- a listed tool never runs without approval ---------------------------------------


def test_a_listed_tool_pauses_and_runs_only_once_approved(deerflow_daemon, request):
    graph = deerflow_agent(deerflow_daemon, [call("c1", "write_file", path="/mnt/user-data/outputs/a.md", content="x")])
    config, state = run(graph, request.node.name)
    assert state["__interrupt__"] and RAN == []
    graph.invoke(resume({"type": "approve"}), config)
    assert RAN == [("write_file", "/mnt/user-data/outputs/a.md")]


def test_a_listed_tool_is_denied_in_a_scheduled_run(deerflow_daemon, request):
    graph = deerflow_agent(
        deerflow_daemon,
        [call("c1", "write_file", path="/mnt/user-data/outputs/a.md", content="x")],
        token=INTERNAL,
        interaction_mode="scheduled",
    )
    _, state = run(graph, request.node.name)
    assert "__interrupt__" not in state and RAN == []
    assert "(warden.approval_unavailable)" in tool_messages(state)["c1"].content
