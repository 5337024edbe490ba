"""The human's answer as existing frontends send it, and who Warden is told gave
it: a real LangChain agent (and a real DeerFlow one) with Warden's middleware,
against a real daemon on the shipped DeerFlow example. LangChain's documented
resume (``{"decisions": [...]}``, no reviewer) and agent-chat-ui's
(``[{"type": "accept", "args": ...}]``) work unchanged; the human is the run's
authenticated user (``langgraph_auth_user``) or the operator's setting, never a
name the client writes."""

import pytest
from conftest import APPROVER, RELAY, require

require("langgraph")
require("langchain")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command  # noqa: E402
from scripted import RAN, answer, bash, call, read_file, run_config, scripted, tool_messages, write_file  # noqa: E402

from warden import WardenClient  # noqa: E402
from warden.langchain import WardenMiddleware  # noqa: E402

ASKS = [
    call("c1", "bash", command="git push origin main"),  # a permission rule asks
    call("c2", "write_file", path="/mnt/user-data/outputs/summary.md", content="ok"),  # under hitl_approval
    call("c3", "write_file", path="/mnt/user-data/outputs/extra.md", content="no"),  # under hitl_approval
]


def agent(daemon, calls, **middleware):
    return create_agent(
        scripted(calls),
        [bash, read_file, write_file],
        middleware=[WardenMiddleware(url=daemon.url, token=RELAY, **middleware)],
        checkpointer=InMemorySaver(),
    )


def pause(graph, config, **invoke):
    RAN.clear()
    state = graph.invoke({"messages": [HumanMessage("go")]}, config, **invoke)
    assert state["__interrupt__"] and RAN == []


def reviewer_recorded(daemon, thread):
    [view] = WardenClient(daemon.url, APPROVER).approvals(thread, include_resolved=True)
    return view["resolution"]["reviewer"]


def test_langchains_documented_resume_runs_the_approved_calls(deerflow_daemon, request):
    graph, config = agent(deerflow_daemon, ASKS[:1]), run_config(request.node.name)
    pause(graph, config)
    graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert RAN == [("bash", "git push origin main")]
    assert reviewer_recorded(deerflow_daemon, request.node.name) == "alice"


def test_agent_chat_uis_resume_accepts_edits_and_answers(deerflow_daemon, request):
    graph, config = agent(deerflow_daemon, ASKS), run_config(request.node.name)
    pause(graph, config)
    resume = [
        {"type": "accept", "args": None},
        {
            "type": "edit",
            "args": {"action": "write_file", "args": {"path": "/mnt/user-data/outputs/s.md", "content": "k"}},
        },
        {"type": "response", "args": "write it in French"},
    ]
    state = graph.invoke(Command(resume=resume), config)
    assert sorted(RAN) == [("bash", "git push origin main"), ("write_file", "/mnt/user-data/outputs/s.md")]
    assert "write it in French" in tool_messages(state)["c3"].content


def test_agent_chat_uis_ignore_runs_nothing(deerflow_daemon, request):
    graph, config = agent(deerflow_daemon, ASKS[:1]), run_config(request.node.name)
    pause(graph, config)
    state = graph.invoke(Command(resume=[{"type": "ignore", "args": None}]), config)
    assert RAN == []
    assert tool_messages(state)["c1"].status == "error"


def test_a_reviewer_the_client_names_is_not_believed(deerflow_daemon, request):
    # No authenticated user and no operator setting: the names in the runtime
    # context and in the resume value are the client's, and name nobody.
    graph, config = agent(deerflow_daemon, ASKS[:1]), run_config(request.node.name, user=None)
    claims = {"reviewer": "alice", "user_id": "alice"}
    pause(graph, config, context=claims)
    state = graph.invoke(Command(resume={"decisions": [{"type": "approve"}], **claims}), config, context=claims)
    assert RAN == []
    content = tool_messages(state)["c1"].content
    assert "(warden.invalid_answer)" in content and "langgraph_auth_user" in content


def test_the_operators_mapping_names_the_authenticated_user(deerflow_daemon, request):
    graph = agent(deerflow_daemon, ASKS[:1], reviewers={"user-42": "alice"})
    config = run_config(request.node.name, user="user-42")
    pause(graph, config)
    graph.invoke(Command(resume=answer({"type": "approve"})), config)
    assert RAN == [("bash", "git push origin main")]
    assert reviewer_recorded(deerflow_daemon, request.node.name) == "alice"


def test_the_operators_reviewer_names_the_human_of_a_run_without_a_user(deerflow_daemon, request):
    graph = agent(deerflow_daemon, ASKS[:1], reviewer="alice")
    config = run_config(request.node.name, user=None)
    pause(graph, config)
    graph.invoke(Command(resume=answer({"type": "approve"})), config)
    assert RAN == [("bash", "git push origin main")]


def test_an_authenticated_user_the_relay_token_is_not_granted_runs_nothing(deerflow_daemon, request):
    # The relay token is granted the reviewer name `alice` only.
    graph, config = agent(deerflow_daemon, ASKS[:1]), run_config(request.node.name, user="mallory")
    pause(graph, config)
    state = graph.invoke(Command(resume=answer({"type": "approve"})), config)
    assert RAN == []
    assert tool_messages(state)["c1"].status == "error"


@pytest.mark.parametrize(
    "resume",
    [{"decisions": [{"type": "approve"}]}, [{"type": "accept", "args": None}]],
    ids=["langchain", "agent-chat-ui"],
)
def test_deerflow_takes_both_resumes_and_no_client_named_reviewer(deerflow_daemon, request, resume):
    require("deerflow")
    from deerflow.agents.factory import create_deerflow_agent
    from deerflow.agents.features import RuntimeFeatures
    from deerflow.guardrails.middleware import GuardrailMiddleware

    from warden.deerflow import WardenProvider

    def deerflow_agent():
        provider = WardenProvider(url=deerflow_daemon.url, token=RELAY, framework="deerflow")
        return create_deerflow_agent(
            scripted(ASKS[:1]),
            [bash],
            features=RuntimeFeatures(
                sandbox=False, guardrail=GuardrailMiddleware(provider, fail_closed=False), loop_detection=False
            ),
            checkpointer=InMemorySaver(),
        )

    graph, config = deerflow_agent(), run_config(request.node.name)
    pause(graph, config)
    graph.invoke(Command(resume=resume), config)
    assert RAN == [("bash", "git push origin main")]

    claims = {"reviewer": "alice", "user_id": "alice"}
    graph, config = deerflow_agent(), run_config(request.node.name + "-claims", user=None)
    pause(graph, config, context=claims)
    state = graph.invoke(Command(resume=resume), config, context=claims)
    assert RAN == []
    assert "(warden.invalid_answer)" in tool_messages(state)["c1"].content
