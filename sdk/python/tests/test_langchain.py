"""``warden.langchain.WardenMiddleware`` in a real LangChain 1.x agent (real
``langchain`` and ``langgraph``, a scripted fake chat model: no network, no
keys) against a real daemon on the shipped DeerFlow example: a message's calls
are judged as one, what waits for a human pauses the graph once, a relayed
answer runs exactly the approved and edited calls, and a second resume of the
same interrupt runs nothing."""

from types import SimpleNamespace

import pytest
from conftest import APPROVER, INTERNAL, RELAY, require

require("langgraph")
require("langchain")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command  # noqa: E402
from scripted import RAN, answer, bash, call, read_file, run_config, scripted, tool_messages, write_file  # noqa: E402

from warden import WardenClient  # noqa: E402
from warden.langchain import WardenMiddleware  # noqa: E402

MIXED = [
    call("c1", "read_file", path="/mnt/user-data/uploads/brief.md"),  # allowed
    call("c2", "bash", command="git push origin main"),  # a permission rule asks
    call("c3", "write_file", path="/mnt/user-data/outputs/summary.md", content="ok"),  # under hitl_approval
    call("c4", "bash", command="rm -rf /mnt/user-data/workspace"),  # denied
    call("c5", "write_file", path="/mnt/user-data/outputs/extra.md", content="no"),  # under hitl_approval
]


def agent(daemon, calls, checkpointer=True, **middleware):
    model = scripted(calls)
    mw = WardenMiddleware(url=daemon.url, token=middleware.pop("token", RELAY), **middleware)
    return create_agent(
        model,
        [bash, read_file, write_file],
        middleware=[mw],
        checkpointer=InMemorySaver() if checkpointer else None,
    )


def start(graph, thread):
    RAN.clear()
    config = run_config(thread)
    return config, graph.invoke({"messages": [HumanMessage("go")]}, config)


APPROVE = {"type": "approve"}
REJECT = {"type": "reject", "message": "not this one"}


def edit(name, **args):
    return {"type": "edit", "edited_action": {"name": name, "args": args}}


@pytest.fixture
def paused(deerflow_daemon, request):
    graph = agent(deerflow_daemon, MIXED)
    config, state = start(graph, request.node.name)
    return deerflow_daemon, graph, config, state


def test_a_message_with_an_ask_pauses_once_and_runs_nothing_yet(paused):
    _, _, _, state = paused
    [pause] = state["__interrupt__"]
    requests = pause.value["action_requests"]
    assert [(r["name"], r["args"].get("command") or r["args"].get("path")) for r in requests] == [
        ("bash", "git push origin main"),
        ("write_file", "/mnt/user-data/outputs/summary.md"),
        ("write_file", "/mnt/user-data/outputs/extra.md"),
    ]
    assert [c["allowed_decisions"] for c in pause.value["review_configs"]] == [["approve", "edit", "reject"]] * 3
    assert pause.value["warden"]["approval_id"].startswith("apr_")
    assert RAN == []


def test_a_resume_with_mixed_decisions_runs_exactly_the_approved_and_edited_calls(paused):
    daemon, graph, config, _ = paused
    state = graph.invoke(
        Command(resume=answer(edit("bash", command="git push --dry-run origin main"), APPROVE, REJECT)), config
    )
    assert sorted(RAN) == [
        ("bash", "git push --dry-run origin main"),
        ("read_file", "/mnt/user-data/uploads/brief.md"),
        ("write_file", "/mnt/user-data/outputs/summary.md"),
    ]
    notes = tool_messages(state)
    assert notes["c4"].status == "error" and "perm.rule_deny" in notes["c4"].content
    assert notes["c5"].status == "error" and "not this one" in notes["c5"].content
    assert state["messages"][-1].content == "done"
    # Warden recorded the human and the relaying harness.
    thread = config["configurable"]["thread_id"]
    [view] = WardenClient(daemon.url, APPROVER).approvals(thread, include_resolved=True)
    assert view["resolution"]["reviewer"] == "alice" and view["resolution"]["relayed_by"] == "deerflow"


def test_two_resumes_of_the_same_interrupt_run_the_calls_once(paused):
    _, graph, config, _ = paused
    # The checkpoint's config, run by the same authenticated user.
    at_pause = {"configurable": {**graph.get_state(config).config["configurable"], **config["configurable"]}}
    resume = Command(resume=answer(APPROVE, APPROVE, APPROVE))
    graph.invoke(resume, at_pause)
    once = sorted(RAN)
    assert len(once) == 4
    state = graph.invoke(resume, at_pause)
    assert sorted(RAN) == once, "the second resume ran nothing"
    assert all("already" in m.content for m in tool_messages(state).values() if m.tool_call_id != "c4")


def test_an_answer_nobody_can_be_named_for_runs_nothing(paused):
    _, graph, config, _ = paused
    unauthenticated = run_config(config["configurable"]["thread_id"], user=None)
    state = graph.invoke(Command(resume=answer(APPROVE, APPROVE, APPROVE)), unauthenticated)
    assert RAN == []
    content = tool_messages(state)["c2"].content
    assert "(warden.invalid_answer)" in content and "langgraph_auth_user" in content


def test_without_a_checkpointer_nothing_waits_and_asks_are_denied(deerflow_daemon):
    graph = agent(deerflow_daemon, MIXED, checkpointer=False)
    RAN.clear()
    state = graph.invoke({"messages": [HumanMessage("go")]})
    assert "__interrupt__" not in state
    assert RAN == [("read_file", "/mnt/user-data/uploads/brief.md")]
    notes = tool_messages(state)
    assert "warden.ask_unavailable" in notes["c2"].content
    assert "warden.approval_unavailable" in notes["c3"].content
    assert "Do not retry it" in notes["c2"].content


def test_a_scheduled_run_denies_what_would_wait(deerflow_daemon):
    graph = agent(deerflow_daemon, MIXED, token=INTERNAL, interaction_mode="scheduled")
    _config, state = start(graph, "t-scheduled")
    assert "__interrupt__" not in state
    assert RAN == [("read_file", "/mnt/user-data/uploads/brief.md")]


def test_a_call_warden_did_not_judge_never_runs(deerflow_daemon):
    mw = WardenMiddleware(url=deerflow_daemon.url, token=RELAY)
    unjudged = call("x1", "bash", command="ls")
    request = SimpleNamespace(tool_call=unjudged, state={"messages": [AIMessage(content="", tool_calls=[unjudged])]})
    ran = []
    result = mw.wrap_tool_call(request, lambda r: ran.append(r))
    assert ran == [] and result.status == "error" and "warden.not_judged" in result.content


def recursive():
    args = {"command": "cat ~/.ssh/id_rsa"}
    args["again"] = args
    return args


def nested(levels):
    value = {}
    for _ in range(levels):
        value = {"a": value}
    return {"command": "ls", "nested": value}


@pytest.mark.parametrize(
    "args", [recursive(), nested(1500), nested(5000)], ids=["recursive", "nested-1500", "nested-5000"]
)
def test_arguments_python_cannot_encode_are_denied_not_raised(deerflow_daemon, args):
    # No checkpointer: LangGraph's own cannot store such a message.
    graph = agent(
        deerflow_daemon, [call("c1", "bash", **args), call("c2", "read_file", path="a.md")], checkpointer=False
    )
    RAN.clear()
    state = graph.invoke({"messages": [HumanMessage("go")]})
    assert RAN == []
    notes = tool_messages(state)
    assert "(warden.input_too_deep)" in notes["c1"].content and "(warden.input_too_deep)" in notes["c2"].content


def test_a_call_whose_arguments_cannot_be_digested_never_runs(deerflow_daemon):
    mw = WardenMiddleware(url=deerflow_daemon.url, token=RELAY)
    unjudged = call("x1", "bash", **recursive())
    request = SimpleNamespace(tool_call=unjudged, state={"messages": [AIMessage(content="", tool_calls=[])]})
    ran = []
    result = mw.wrap_tool_call(request, lambda r: ran.append(r))
    assert ran == [] and result.status == "error" and "warden.not_judged" in result.content


def test_any_other_failure_in_the_middleware_denies_every_call_naming_it(deerflow_daemon):
    class Broken(WardenClient):
        def submit_tool_calls(self, thread_id, run_id, response):
            raise KeyError("a bug")

    middleware = WardenMiddleware(Broken(deerflow_daemon.url, RELAY))
    graph = create_agent(scripted([call("c1", "read_file", path="a.md")]), [read_file], middleware=[middleware])
    RAN.clear()
    state = graph.invoke({"messages": [HumanMessage("go")]})
    assert RAN == []
    note = tool_messages(state)["c1"].content
    assert "(warden.adapter_failed)" in note and "KeyError" in note


def test_an_async_agent_pauses_and_resumes_the_same_way(deerflow_daemon, request):
    import asyncio

    graph = agent(deerflow_daemon, MIXED[:2])
    config = run_config(request.node.name)
    RAN.clear()

    async def go():
        paused = await graph.ainvoke({"messages": [HumanMessage("go")]}, config)
        assert len(paused["__interrupt__"][0].value["action_requests"]) == 1
        return await graph.ainvoke(Command(resume=answer(APPROVE)), config)

    asyncio.run(go())
    assert sorted(RAN) == [("bash", "git push origin main"), ("read_file", "/mnt/user-data/uploads/brief.md")]
