"""The DeerFlow provider against a real daemon: DeerFlow's request and decision
shapes, and its fail-closed contract (raise when Warden cannot be reached)."""

import asyncio
import importlib
import socket
from datetime import datetime, timezone

import pytest

from warden import WardenClient, WardenError
from warden.deerflow import GuardrailRequest, WardenProvider, to_decision
from conftest import AGENT


def request(tool_name, tool_input=None, **kw):
    return GuardrailRequest(tool_name=tool_name, tool_input=tool_input or {}, **kw)


def provider(daemon):
    return WardenProvider(url=daemon.url, token=AGENT, framework="deerflow")


def test_deerflow_can_load_the_provider_from_its_use_string():
    module, _, name = "warden.deerflow:WardenProvider".partition(":")
    cls = getattr(importlib.import_module(module), name)
    p = cls(url="http://127.0.0.1:8787", token_env="WARDEN_TOKEN", framework="deerflow")
    assert p.name == "warden"


def test_an_allowed_call_is_an_allow_decision(daemon):
    decision = provider(daemon).evaluate(request("bash", {"command": "ls"}))
    assert decision.allow is True
    assert [r.code for r in decision.reasons] == ["oap.allowed"]
    assert decision.metadata["warden"]["verdict"] == "allow"


def test_a_denied_call_carries_deerflows_reason_code_and_message(daemon):
    decision = provider(daemon).evaluate(request("rm", {"path": "/"}))
    assert decision.allow is False
    assert decision.reasons[0].code == "oap.tool_not_allowed"
    assert decision.reasons[0].message == "tool 'rm' not in allowlist"
    assert decision.policy_id is None


def test_aevaluate_gives_the_same_decision(daemon):
    decision = asyncio.run(provider(daemon).aevaluate(request("web_search", {"query": "x"})))
    assert decision.allow is True


def test_a_deerflow_shaped_request_with_attribution_is_accepted(daemon):
    decision = provider(daemon).evaluate(
        request(
            "bash",
            {"command": "ls"},
            agent_id="passport-1",
            thread_id="t-1",
            run_id="r-1",
            tool_call_id="call-1",
            user_id="u-1",
            user_role="admin",
            oauth_provider="github",
            oauth_id="42",
            is_subagent=False,
            # As DeerFlow's middleware stamps it.
            timestamp=datetime.now(timezone.utc).isoformat(),
            channel_user_id="slack-u",
            authz_attributes={"team": "x"},
        )
    )
    assert decision.allow is True
    assert decision.metadata["warden"]["decision_id"]


def test_an_ask_is_not_an_allow(asking_daemon):
    decision = WardenProvider(url=asking_daemon.url, token=AGENT).evaluate(request("bash", {"command": "ls"}))
    assert decision.allow is False
    assert decision.metadata["warden"]["verdict"] == "ask"
    assert decision.reasons[0].code == "test.needs_human"


def test_an_ask_converts_to_a_decision_that_keeps_the_verdict(asking_daemon):
    evaluation = WardenClient(asking_daemon.url, AGENT).evaluate("bash", {"command": "ls"})
    assert evaluation.verdict == "ask"
    assert to_decision(evaluation).metadata["warden"]["verdict"] == "ask"


def test_a_subagents_ask_is_a_deny(asking_daemon):
    decision = WardenProvider(url=asking_daemon.url, token=AGENT).evaluate(
        request("bash", {"command": "ls"}, is_subagent=True)
    )
    assert decision.allow is False
    assert decision.metadata["warden"]["verdict"] == "deny"
    assert decision.reasons[0].code == "warden.ask_unavailable"


def test_an_unreachable_daemon_raises_so_deerflow_fails_closed():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = WardenProvider(url=f"http://127.0.0.1:{port}", token=AGENT, timeout=2)
    with pytest.raises(ConnectionError):
        p.evaluate(request("bash", {"command": "ls"}))
    with pytest.raises(WardenError):
        asyncio.run(p.aevaluate(request("bash", {"command": "ls"})))


def test_a_refused_token_raises_rather_than_deciding(daemon):
    p = WardenProvider(url=daemon.url, token="wrong-token-0123456789abcdef")
    with pytest.raises(WardenError):
        p.evaluate(request("bash", {"command": "ls"}))
