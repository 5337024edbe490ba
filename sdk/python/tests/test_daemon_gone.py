"""Once Warden has asked for a human, or the human has answered, no daemon gone
since turns the call into a run: real DeerFlow (``fail_closed: false``, which
runs the call of a provider that raises) and a real LangChain agent, each
against a real ``warden serve`` on the shipped DeerFlow example that is killed
mid-way. Only a daemon unreachable before it answered is left to the harness."""

import pytest
from conftest import RELAY, ROOT, Daemon, require

require("deerflow")

from deerflow.agents.factory import create_deerflow_agent  # noqa: E402
from deerflow.agents.features import RuntimeFeatures  # noqa: E402
from deerflow.guardrails.middleware import GuardrailMiddleware  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command  # noqa: E402
from scripted import RAN, answer, bash, call, read_file, run_config, scripted, tool_messages  # noqa: E402

from warden import WardenClient  # noqa: E402
from warden.deerflow import WardenProvider  # noqa: E402
from warden.langchain import WardenMiddleware  # noqa: E402

PUSH = call("c1", "bash", command="git push origin main")  # a permission rule asks


@pytest.fixture
def daemon(tmp_path):
    """A daemon of this test's own, which the test kills."""
    d = Daemon(tmp_path / "warden", config=ROOT / "examples" / "deerflow" / "warden.yaml")
    yield d
    d.stop()


class DiesAfterAnswering(WardenClient):
    """The real client; the daemon is killed right after it answers a call."""

    def __init__(self, daemon):
        super().__init__(daemon.url, RELAY)
        self.daemon = daemon

    def decide(self, call):
        evaluation = super().decide(call)
        self.daemon.stop()
        return evaluation


def deerflow_agent(provider, calls):
    guardrail = GuardrailMiddleware(provider, fail_closed=False)
    return create_deerflow_agent(
        scripted(calls),
        [bash],
        features=RuntimeFeatures(sandbox=False, guardrail=guardrail, loop_detection=False),
        checkpointer=InMemorySaver(),
    )


def start(graph, thread):
    RAN.clear()
    config = run_config(thread)
    return config, graph.invoke({"messages": [HumanMessage("go")]}, config)


@pytest.mark.parametrize(
    "decision",
    [{"type": "reject", "message": "not on a Friday"}, {"type": "approve"}],
    ids=["reject", "approve"],
)
def test_deerflow_a_humans_answer_runs_nothing_once_the_daemon_is_gone(daemon, request, decision):
    graph = deerflow_agent(WardenProvider(url=daemon.url, token=RELAY, framework="deerflow"), [PUSH])
    config, state = start(graph, request.node.name)
    assert state["__interrupt__"]
    daemon.stop()
    state = graph.invoke(Command(resume=answer(decision)), config)
    assert RAN == []
    content = tool_messages(state)["c1"].content
    assert "(warden.no_answer)" in content and "after a human answered" in content


def test_deerflow_an_ask_is_a_deny_when_the_daemon_dies_before_the_pause_is_recorded(daemon, request):
    graph = deerflow_agent(WardenProvider(client=DiesAfterAnswering(daemon), framework="deerflow"), [PUSH])
    _, state = start(graph, request.node.name)
    assert "__interrupt__" not in state and RAN == []
    content = tool_messages(state)["c1"].content
    assert "(warden.no_answer)" in content and "after it asked for a human" in content


def test_deerflow_an_unreachable_daemon_before_any_answer_is_left_to_fail_closed(daemon, request):
    provider = WardenProvider(url=daemon.url, token=RELAY, framework="deerflow")
    graph = create_deerflow_agent(
        scripted([PUSH]),
        [bash],
        features=RuntimeFeatures(
            sandbox=False, guardrail=GuardrailMiddleware(provider, fail_closed=True), loop_detection=False
        ),
        checkpointer=InMemorySaver(),
    )
    daemon.stop()
    _, state = start(graph, request.node.name)
    assert RAN == []
    assert "oap.evaluator_error" in tool_messages(state)["c1"].content


def test_langchain_a_humans_answer_runs_nothing_once_the_daemon_is_gone(daemon, request):
    calls = [call("c0", "read_file", path="/mnt/user-data/uploads/brief.md"), PUSH]
    graph = create_agent(
        scripted(calls),
        [bash, read_file],
        middleware=[WardenMiddleware(url=daemon.url, token=RELAY)],
        checkpointer=InMemorySaver(),
    )
    config, state = start(graph, request.node.name)
    assert state["__interrupt__"]
    daemon.stop()
    state = graph.invoke(Command(resume=answer({"type": "approve"})), config)
    assert RAN == []
    notes = tool_messages(state)
    assert all("(warden.no_answer)" in notes[c].content for c in ("c0", "c1"))
