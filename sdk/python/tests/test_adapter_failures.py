"""Every exception an adapter meets once a call was built is a deny naming its
cause, never a run and never a silent end: real DeerFlow (``fail_closed:
false``, which runs the call of a provider that raises) and a real LangChain
agent, against a real daemon, with the client's transport made to raise
(``RecursionError``, ``MemoryError``, an exception nobody expects, one that
cannot even be printed) and with no worker thread to be had. Also: a call
Warden's answer leaves out gets a tool message, never nothing."""

import asyncio
import http.client

import pytest
from conftest import RELAY, require

require("deerflow")

from deerflow.agents.factory import create_deerflow_agent  # noqa: E402
from deerflow.agents.features import RuntimeFeatures  # noqa: E402
from deerflow.guardrails.middleware import GuardrailMiddleware  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from scripted import RAN, bash, call, read_file, scripted, tool_messages  # noqa: E402

from warden.deerflow import WardenProvider  # noqa: E402
from warden.langchain import WardenMiddleware  # noqa: E402


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no text for this exception")


FAILURES = [
    RecursionError("maximum recursion depth exceeded"),
    MemoryError(),
    LookupError("a transport bug"),
    Unprintable(),
]
IDS = ["recursion", "memory", "unexpected", "unprintable"]


@pytest.fixture
def transport_raises(monkeypatch):
    """Makes the client's transport raise ``err`` once the request was sent."""

    def arm(err):
        def getresponse(self, *args, **kwargs):
            raise err

        monkeypatch.setattr(http.client.HTTPConnection, "getresponse", getresponse)

    return arm


@pytest.fixture
def no_worker_thread(monkeypatch):
    """``asyncio.to_thread`` fails for the package's functions, as it does when
    no thread can be started."""
    to_thread = asyncio.to_thread

    async def failing(func, /, *args, **kwargs):
        if getattr(func, "__module__", "").startswith("warden"):
            raise RuntimeError("can't start new thread")
        return await to_thread(func, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", failing)


def deerflow_agent(daemon, calls):
    provider = WardenProvider(url=daemon.url, token=RELAY, framework="deerflow")
    return create_deerflow_agent(
        scripted(calls),
        [bash, read_file],
        features=RuntimeFeatures(
            sandbox=False, guardrail=GuardrailMiddleware(provider, fail_closed=False), loop_detection=False
        ),
    )


def langchain_agent(daemon, calls):
    return create_agent(scripted(calls), [bash, read_file], middleware=[WardenMiddleware(url=daemon.url, token=RELAY)])


def invoke(graph):
    RAN.clear()
    return graph.invoke({"messages": [HumanMessage("go")]})


def ainvoke(graph):
    RAN.clear()
    return asyncio.run(graph.ainvoke({"messages": [HumanMessage("go")]}))


def assert_denied_for(state, err, ids):
    assert RAN == []
    notes = tool_messages(state)
    for c in ids:
        assert "(warden.adapter_failed)" in notes[c].content and type(err).__name__ in notes[c].content


@pytest.mark.parametrize("err", FAILURES, ids=IDS)
def test_deerflow_a_transport_that_raises_is_a_deny(deerflow_daemon, transport_raises, err):
    graph = deerflow_agent(deerflow_daemon, [call("c1", "read_file", path="/mnt/user-data/uploads/brief.md")])
    transport_raises(err)
    assert_denied_for(invoke(graph), err, ["c1"])


def test_deerflow_async_without_a_worker_thread_is_a_deny(deerflow_daemon, no_worker_thread):
    graph = deerflow_agent(deerflow_daemon, [call("c1", "read_file", path="/mnt/user-data/uploads/brief.md")])
    assert_denied_for(ainvoke(graph), RuntimeError(), ["c1"])


@pytest.mark.parametrize("err", FAILURES, ids=IDS)
def test_langchain_a_transport_that_raises_denies_every_call(deerflow_daemon, transport_raises, err):
    calls = [call("c1", "read_file", path="/mnt/user-data/uploads/brief.md"), call("c2", "bash", command="ls")]
    graph = langchain_agent(deerflow_daemon, calls)
    transport_raises(err)
    assert_denied_for(invoke(graph), err, ["c1", "c2"])


def test_langchain_async_without_a_worker_thread_denies_every_call(deerflow_daemon, no_worker_thread):
    graph = langchain_agent(deerflow_daemon, [call("c1", "read_file", path="/mnt/user-data/uploads/brief.md")])
    assert_denied_for(ainvoke(graph), RuntimeError(), ["c1"])


def nested(levels):
    value = {}
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.mark.parametrize("levels", [125, 130, 200])
def test_langchain_a_call_nested_too_deep_for_the_route_is_denied_with_a_tool_message(deerflow_daemon, levels):
    calls = [call("c1", "bash", command="ls", nested=nested(levels))]
    state = invoke(langchain_agent(deerflow_daemon, calls))
    assert RAN == []
    note = tool_messages(state)["c1"]
    assert note.status == "error" and "bash" in note.content
