"""Human approval through the Python client, against a real daemon."""

import pytest

from warden import WardenClient, WardenHTTPError
from conftest import AGENT

RESPONSE = {
    "message": {
        "tool_calls": [
            {"id": "call_1", "name": "bash", "args": {"command": "git push origin main"}},
            {"id": "call_2", "name": "read_file", "args": {"path": "CHANGELOG.md"}},
        ]
    }
}


def test_a_listed_call_pauses_and_a_resume_answers_it(approval_daemon):
    client = WardenClient(approval_daemon.url, AGENT)
    outcome = client.submit_tool_calls("thread 1", "run-1", RESPONSE)
    assert outcome["run_state"] == "waiting_for_input"
    [pending] = client.approvals("thread 1")
    assert pending["approval_id"] == outcome["approval_id"]
    request_id = outcome["requests"][0]["request_id"]
    resolution = client.resume(
        "thread 1", outcome["approval_id"], {"decisions": [{"request_id": request_id, "decision": "approve"}]}
    )
    assert [c["status"] for c in resolution["calls"]] == ["run", "run"]
    assert client.approvals("thread 1") == []
    assert len(client.approvals("thread 1", include_resolved=True)) == 1


def test_a_thread_waiting_for_a_human_refuses_new_runs(approval_daemon):
    client = WardenClient(approval_daemon.url, AGENT)
    client.submit_tool_calls("t-2", "run-1", RESPONSE)
    with pytest.raises(WardenHTTPError) as err:
        client.submit_tool_calls("t-2", "run-2", RESPONSE)
    assert err.value.status == 409 and err.value.code == "approval_pending"
