"""The Python client against a real daemon."""

import asyncio
import socket

import pytest
from conftest import ADMIN, AGENT, INTERNAL

from warden import WardenClient, WardenHTTPError, WardenUnavailable


def test_a_listed_tool_is_allowed(daemon):
    decision = WardenClient(daemon.url, AGENT).evaluate("bash", {"command": "git status"})
    assert decision.verdict == "allow" and decision.allow
    assert decision.decided_by == "provider:allowlist"
    assert decision.generation >= 1


def test_a_tool_outside_the_allowlist_is_denied_with_its_reason(daemon):
    decision = WardenClient(daemon.url, AGENT).evaluate("delete_database", {})
    assert decision.verdict == "deny" and not decision.allow
    assert decision.reasons[0].code == "oap.tool_not_allowed"
    assert decision.reasons[0].message == "tool 'delete_database' not in allowlist"


def test_each_decision_carries_its_decision_log_id(daemon):
    decision = WardenClient(daemon.url, AGENT).evaluate("bash", {"command": "ls"})
    assert decision.decision_id and len(decision.decision_id) == 36


def test_the_context_reaches_the_daemon(daemon):
    client = WardenClient(daemon.url, AGENT)
    decision = client.evaluate(
        "bash", {"command": "ls"}, tool_call_id="call-9", context={"thread_id": "t-9", "interaction_mode": "autonomous"}
    )
    # An agent token may not choose the interaction mode: the key is dropped.
    assert decision.interaction_mode == "interactive"
    assert "warden.context_keys_dropped" in [r.code for r in decision.reasons]


def test_aevaluate_does_not_block_the_event_loop(daemon):
    client = WardenClient(daemon.url, AGENT)

    async def many():
        return await asyncio.gather(*(client.aevaluate("read_file", {"path": "a"}) for _ in range(8)))

    decisions = asyncio.run(many())
    assert all(d.allow for d in decisions)


def test_one_client_serves_many_calls_on_one_connection(daemon):
    client = WardenClient(daemon.url, AGENT)
    assert all(client.evaluate("bash", {"command": str(i)}).allow for i in range(50))


def test_a_wrong_token_raises_401(daemon):
    with pytest.raises(WardenHTTPError) as err:
        WardenClient(daemon.url, "not-the-token-0123456789").evaluate("bash", {})
    assert err.value.status == 401 and err.value.code == "unauthorized"


def test_an_agent_token_cannot_reload(daemon):
    with pytest.raises(WardenHTTPError) as err:
        WardenClient(daemon.url, AGENT).reload()
    assert err.value.status == 403


def test_a_malformed_call_raises_400_saying_why(daemon):
    with pytest.raises(WardenHTTPError) as err:
        WardenClient(daemon.url, AGENT).evaluate_call({"tool_name": "bash", "tool_inptu": {}})
    assert err.value.status == 400 and "tool_inptu" in err.value.message


def test_admin_reloads_and_lists_providers(daemon):
    admin = WardenClient(daemon.url, ADMIN)
    before = admin.health()["generation"]
    report = admin.reload()
    assert report["previous_generation"] == before
    assert report["generation"] > before
    listed = admin.providers()
    assert listed["generation"] == report["generation"]
    assert listed["providers"][0]["name"] == "allowlist"


def test_an_unreachable_daemon_raises_unavailable():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(WardenUnavailable):
        WardenClient(f"http://127.0.0.1:{port}", AGENT, timeout=2).evaluate("bash", {})


def test_interaction_names_the_mode_and_the_callers_role(daemon):
    report = WardenClient(daemon.url, AGENT).interaction()
    assert report["mode"] == "interactive" and report["can_ask_human"] is True
    assert report["caller"] == {"token": "deerflow", "role": "agent"}


def test_interaction_of_a_scheduled_run_withholds_clarification(daemon):
    report = WardenClient(daemon.url, INTERNAL).interaction(
        {"interaction_mode": "scheduled"}, tools=["bash", "ask_clarification"]
    )
    assert report["mode"] == "scheduled" and report["can_ask_human"] is False
    assert report["offered_tools"] == ["bash"] and report["withheld_tools"] == ["ask_clarification"]
    assert "BLOCKED" in report["guidance"]


def test_the_token_is_read_from_the_environment(daemon, monkeypatch):
    monkeypatch.setenv("WARDEN_TOKEN", AGENT)
    assert WardenClient(daemon.url).evaluate("bash", {"command": "ls"}).allow


def test_the_client_works_without_the_native_module_and_warden_warden_says_how_to_get_it():
    import subprocess
    import sys

    # `sys.modules[name] = None` makes importing it fail, as when it is not installed.
    script = (
        "import sys; sys.modules['warden._native'] = None\n"
        "import warden; warden.WardenClient('http://127.0.0.1:1')\n"
        "try:\n    from warden import Warden\nexcept ImportError as err:\n    print(err)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert "warden._native" in out and "pip install warden-guardrails-native" in out
