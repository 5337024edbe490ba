"""Human approval through the Python client, against a real daemon: a harness's
token with ``relay: true`` relays a named human's answer; an agent's never
approves; the same answer relayed twice is a replay that runs nothing."""

import pytest
from conftest import AGENT, APPROVER, RELAY

from warden import WardenClient, WardenHTTPError

RESPONSE = {
    "message": {
        "tool_calls": [
            {"id": "call_1", "name": "bash", "args": {"command": "git push origin main"}},
            {"id": "call_2", "name": "read_file", "args": {"path": "CHANGELOG.md"}},
        ]
    }
}


def approve(outcome):
    return {"decisions": [{"request_id": r["request_id"], "decision": "approve"} for r in outcome["requests"]]}


def test_a_listed_call_pauses_and_a_relayed_answer_resumes_it(approval_daemon):
    client = WardenClient(approval_daemon.url, RELAY)
    outcome = client.submit_tool_calls("thread 1", "run-1", RESPONSE)
    assert outcome["run_state"] == "waiting_for_input"
    [pending] = client.approvals("thread 1")
    assert pending["approval_id"] == outcome["approval_id"]
    resolution = client.resume("thread 1", outcome["approval_id"], approve(outcome), reviewer="alice")
    assert [c["status"] for c in resolution["calls"]] == ["run", "run"]
    assert resolution["reviewer"] == "alice" and resolution["replayed"] is False
    assert client.approvals("thread 1") == []
    assert len(client.approvals("thread 1", include_resolved=True)) == 1


def test_the_same_answer_relayed_again_is_a_replay(approval_daemon):
    client = WardenClient(approval_daemon.url, RELAY)
    outcome = client.submit_tool_calls("t-3", "run-1", RESPONSE)
    first = client.resume("t-3", outcome["approval_id"], approve(outcome), reviewer="alice", idempotency_key="k-1")
    again = client.resume("t-3", outcome["approval_id"], approve(outcome), reviewer="alice", idempotency_key="k-1")
    assert first["replayed"] is False and again["replayed"] is True


def test_an_agents_token_never_approves_its_own_pause(approval_daemon):
    client = WardenClient(approval_daemon.url, AGENT)
    outcome = client.submit_tool_calls("t-4", "run-1", RESPONSE)
    with pytest.raises(WardenHTTPError) as err:
        client.resume("t-4", outcome["approval_id"], approve(outcome), reviewer="alice")
    assert err.value.status == 403 and err.value.code == "approver_required"


def test_a_thread_waiting_for_a_human_refuses_new_runs(approval_daemon):
    client = WardenClient(approval_daemon.url, RELAY)
    client.submit_tool_calls("t-2", "run-1", RESPONSE)
    with pytest.raises(WardenHTTPError) as err:
        client.submit_tool_calls("t-2", "run-2", RESPONSE)
    assert err.value.status == 409 and err.value.code == "approval_pending"
    # A single call on that thread is a deny the harness understands, not an error.
    decision = client.decide({"tool_name": "read_file", "tool_input": {"path": "x"}, "context": {"thread_id": "t-2"}})
    assert decision.verdict == "deny" and decision.reasons[0].code == "warden.approval_pending"


def test_an_approvers_grant_lets_the_same_call_run_and_revoking_it_pauses_again(approval_daemon):
    agent = WardenClient(approval_daemon.url, RELAY)
    approver = WardenClient(approval_daemon.url, APPROVER)
    outcome = agent.submit_tool_calls("t-5", "run-1", RESPONSE)
    answer = {
        "decisions": [
            {"request_id": r["request_id"], "decision": "approve", "grant": {"minutes": 10}}
            for r in outcome["requests"]
        ]
    }
    approver.resume("t-5", outcome["approval_id"], answer)
    [grant] = approver.grants()
    assert grant["granted_by"] == "alice" and grant["thread_id"] == "t-5"
    again = agent.submit_tool_calls("t-5", "run-2", RESPONSE)
    assert again["run_state"] == "running"
    assert again["calls"][0]["reasons"][0]["code"] == "warden.approval_grant"
    approver.revoke_grant(grant["grant_id"])
    assert approver.grants() == [] and len(approver.grants(include_inactive=True)) == 1
    assert agent.submit_tool_calls("t-5", "run-3", RESPONSE)["run_state"] == "waiting_for_input"
