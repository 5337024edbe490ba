"""The DeerFlow provider against a real daemon, outside an agent graph: DeerFlow's
request and decision shapes (its own classes when DeerFlow is installed, the
stand-ins otherwise), and its fail-closed contract: a deny for everything but a
Warden that cannot be reached at all. (In a graph: test_deerflow_agent.py.)"""

import asyncio
import importlib
import inspect
import math
import socket
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest
from conftest import ADMIN, AGENT, INTERNAL

from warden import WardenClient
from warden.deerflow import GuardrailRequest, WardenProvider, to_decision, to_tool_call


def request(tool_name, tool_input=None, **kw):
    """A request with only the fields DeerFlow 0.1.7 has."""
    return GuardrailRequest(tool_name=tool_name, tool_input=tool_input or {}, **kw)


def newer_request(tool_name, tool_input=None, **kw):
    """A newer DeerFlow's request: more fields than 0.1.7's."""
    return SimpleNamespace(tool_name=tool_name, tool_input=tool_input or {}, **kw)


def provider(daemon, token=AGENT, **kw):
    return WardenProvider(url=daemon.url, token=token, framework="deerflow", **kw)


def codes(decision):
    return [r.code for r in decision.reasons]


def test_deerflow_can_load_the_provider_from_its_use_string_with_framework_injected():
    module, _, name = "warden.deerflow:WardenProvider".partition(":")
    cls = getattr(importlib.import_module(module), name)
    params = inspect.signature(cls.__init__).parameters.values()
    # DeerFlow adds framework="deerflow" when the constructor takes it or **kwargs.
    assert any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params)
    p = cls(url="http://127.0.0.1:8787", token="t" * 24, framework="deerflow")
    assert p.name == "warden"


def test_a_misspelt_setting_is_an_error_at_construction_naming_the_right_one():
    with pytest.raises(ValueError, match=r"`interaction-mode` \(did you mean `interaction_mode`\?\)"):
        WardenProvider(url="http://127.0.0.1:8787", token="t" * 24, **{"interaction-mode": "scheduled"})


def test_an_unknown_setting_is_an_error_at_construction():
    with pytest.raises(ValueError, match="unknown settings `some_future_setting`"):
        WardenProvider(url="http://127.0.0.1:8787", token="t" * 24, some_future_setting=True)


def test_the_provider_refuses_to_start_without_a_token(monkeypatch):
    monkeypatch.delenv("WARDEN_TOKEN", raising=False)
    with pytest.raises(ValueError, match="WARDEN_TOKEN"):
        WardenProvider(url="http://127.0.0.1:8787")


def test_an_unknown_fixed_mode_is_refused_at_start():
    with pytest.raises(ValueError, match="interactive, scheduled, webhook, autonomous"):
        WardenProvider(token="t" * 24, interaction_mode="nightly")


def test_an_allowed_call_is_an_allow_decision(daemon):
    decision = provider(daemon).evaluate(request("bash", {"command": "ls"}))
    assert decision.allow is True
    assert codes(decision) == ["oap.allowed"]
    assert decision.metadata["warden"]["verdict"] == "allow"


def test_a_denied_call_carries_deerflows_reason_code_and_message(daemon):
    decision = provider(daemon).evaluate(request("rm", {"path": "/"}))
    assert decision.allow is False
    assert decision.reasons[0].code == "oap.tool_not_allowed"
    assert decision.reasons[0].message == "tool 'rm' not in allowlist"


def test_aevaluate_gives_the_same_decision(daemon):
    decision = asyncio.run(provider(daemon).aevaluate(request("web_search", {"query": "x"})))
    assert decision.allow is True


def test_a_newer_deerflows_request_fields_are_forwarded(daemon):
    decision = provider(daemon).evaluate(
        newer_request(
            "bash",
            {"command": "ls"},
            agent_id="passport-1",
            thread_id="t-1",
            run_id="r-1",
            tool_call_id="call-1",
            user_id="u-1",
            user_role="viewer",
            oauth_provider="github",
            oauth_id="42",
            is_subagent=False,
            timestamp=datetime.now(timezone.utc).isoformat(),
            channel_user_id="slack-u",
            is_internal=True,
            authz_attributes={"team": "x"},
        )
    )
    assert decision.allow is True
    assert decision.metadata["warden"]["decision_id"]
    line = next(d for d in daemon.decisions() if d["decision_id"] == decision.metadata["warden"]["decision_id"])
    assert (line["thread_id"], line["run_id"], line["tool_call_id"]) == ("t-1", "r-1", "call-1")


def test_to_tool_call_ignores_fields_warden_does_not_know():
    body = to_tool_call(newer_request("bash", {"command": "ls"}, channel_user_id="x", is_internal=True))
    assert set(body["context"]) <= {"is_subagent"}


# --- refusals are denies, whatever DeerFlow's fail_closed says -----------------


def test_nan_in_a_spare_argument_is_a_deny(daemon):
    decision = provider(daemon).evaluate(request("bash", {"command": "cat ~/.ssh/id_rsa", "timeout": math.nan}))
    assert decision.allow is False and codes(decision) == ["warden.unencodable_input"]


def test_a_lone_surrogate_is_a_deny(daemon):
    decision = provider(daemon).evaluate(request("bash", {"command": "ls \ud800"}))
    assert decision.allow is False and codes(decision) == ["warden.unencodable_input"]


def test_arguments_nested_past_the_limit_are_a_deny(daemon):
    deep = {}
    node = deep
    for _ in range(80):
        node["a"] = {}
        node = node["a"]
    decision = provider(daemon).evaluate(request("bash", deep))
    assert decision.allow is False and codes(decision) == ["warden.input_too_deep"]


def test_arguments_over_a_mebibyte_are_a_deny(daemon):
    decision = provider(daemon).evaluate(request("bash", {"command": "x" * (1 << 20)}))
    assert decision.allow is False and codes(decision) == ["warden.input_too_large"]


@pytest.mark.parametrize("name", ["", "read file"])
def test_a_bad_tool_name_is_a_deny(daemon, name):
    decision = provider(daemon).evaluate(request(name, {}))
    assert decision.allow is False and codes(decision) == ["oap.invalid_tool_name"]


def test_a_refused_token_is_a_deny_saying_so(daemon):
    decision = provider(daemon, token="wrong-token-0123456789abcdef").evaluate(request("bash", {"command": "ls"}))
    assert decision.allow is False and codes(decision) == ["warden.unauthorized"]


def test_an_admins_token_is_a_deny_saying_so(daemon):
    decision = provider(daemon, token=ADMIN).evaluate(request("bash", {"command": "ls"}))
    assert decision.allow is False and codes(decision) == ["warden.forbidden"]


def test_an_unreachable_daemon_raises_so_deerflows_fail_closed_decides():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = WardenProvider(url=f"http://127.0.0.1:{port}", token=AGENT)
    with pytest.raises(ConnectionError):
        p.evaluate(request("bash", {"command": "ls"}))
    with pytest.raises(ConnectionError):
        asyncio.run(p.aevaluate(request("bash", {"command": "ls"})))


# --- asks outside a graph: nobody can be asked --------------------------------


def test_an_ask_outside_a_graph_is_a_deny_that_invites_no_workaround(asking_daemon):
    decision = provider(asking_daemon).evaluate(request("bash", {"command": "ls"}))
    assert decision.allow is False
    assert codes(decision)[0] == "warden.ask_unavailable"
    assert "Do not retry it or try to reach the same result another way" in decision.reasons[0].message


def test_an_ask_converts_to_a_decision_that_keeps_the_verdict(asking_daemon):
    evaluation = WardenClient(asking_daemon.url, AGENT).evaluate("bash", {"command": "ls"})
    assert evaluation.verdict == "ask"
    decision = to_decision(evaluation)
    assert decision.allow is False and decision.metadata["warden"]["verdict"] == "ask"


def test_a_subagents_ask_is_a_deny(asking_daemon):
    decision = provider(asking_daemon).evaluate(request("bash", {"command": "ls"}, is_subagent=True))
    assert decision.allow is False
    assert decision.reasons[0].code == "warden.ask_unavailable"


# --- the run's mode -------------------------------------------------------------


def test_a_fixed_mode_reaches_warden_with_an_internal_token(daemon):
    p = provider(daemon, token=INTERNAL, interaction_mode="scheduled")
    decision = p.evaluate(request("bash", {"command": "ls"}))
    assert decision.allow is True
    assert decision.metadata["warden"]["interaction_mode"] == "scheduled"


def test_an_agent_token_never_sends_the_mode_but_an_unattended_run_still_cannot_pause(asking_daemon):
    p = provider(asking_daemon, interaction_mode="scheduled")
    decision = p.evaluate(request("bash", {"command": "ls"}))
    assert decision.allow is False and decision.reasons[0].code == "warden.ask_unavailable"
    assert "warden.context_keys_dropped" not in codes(decision)
