"""Asks put to the client mid-call: `warden mcp stdio --daemon` in front of the
Python server, driven by the Python `mcp` SDK's client with an elicitation
callback (form mode, `2025-11-25`). The client's answer is recorded in the
daemon's approval store as client-attested; whether it may approve is the
operator's `mcp.client_attested`."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import mcp.types as types
from conftest import DAEMON_POLICY
from test_stdio import behind_warden, daemon_env, decision, run, through

# `mcp__py__note` asks by a permissions.ask rule (DAEMON_POLICY).
ALLOWED = DAEMON_POLICY + "mcp:\n  client_attested: allow\n"
DENIED = DAEMON_POLICY + "mcp:\n  client_attested:\n    mcp__py__note: deny\n"
# Named by the approval list, with no word on client-attested answers: the
# default rule lets no client approve it.
LISTED = DAEMON_POLICY + "hitl_approval:\n  tools: [mcp__py__note]\n"


class Client:
    """The client's side of the elicitation (form and URL declared): answers
    `answer`, and keeps what it was asked."""

    def __init__(self, answer: types.ElicitResult) -> None:
        self.answer = answer
        self.asked: list[Any] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params)
        return self.answer


APPROVE = types.ElicitResult(action="accept", content={"approve": True})


def note_twice(client: Any) -> Any:
    async def steps(session: Any) -> Any:
        first = await session.call_tool("note", {"text": "ship it"})
        second = await session.call_tool("note", {"text": "ship it"})
        return first, second

    return steps


def thread_of(tool: str, arguments: dict[str, Any]) -> str:
    """The thread an MCP call's ask is filed under (docs/mcp.md, "Asks")."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    return "mcp-" + hashlib.sha256(tool.encode() + b"\0" + digest.encode()).hexdigest()[:32]


def test_an_approving_answer_where_client_attested_allows_runs_the_call_once_and_is_recorded(
    warden_bin, start_daemon, py_server
):
    daemon = start_daemon(ALLOWED)
    client = Client(APPROVE)
    command = behind_warden(warden_bin, through(daemon), "py", py_server)
    first, second = run(command, "legacy", note_twice(client), env=daemon_env(), elicitation_callback=client)

    assert not first.is_error and first.content[0].text == "noted 1: ship it"
    # Every identical call is asked again: one answer ran one call.
    assert not second.is_error and second.content[0].text == "noted 2: ship it"
    assert len(client.asked) == 2
    question = client.asked[0]
    assert question.mode == "form"
    assert "mcp__py__note" in question.message and "rule mcp__py__note asks" in question.message
    assert question.requested_schema["properties"]["approve"]["type"] == "boolean"

    page = daemon.api("GET", f"/v1/threads/{thread_of('mcp__py__note', {'text': 'ship it'})}/approvals?all=true")
    answered = page["approvals"]
    assert len(answered) == 2
    for approval in answered:
        assert approval["kind"] == "mcp_call"
        assert approval["status"] == "resumed"
        assert approval["resolution"]["answered_by"] == "client_attested"
        assert approval["consumed_at"], "read by the call it answered"
        assert approval["approval_id"] in "".join(q.message for q in client.asked)


def test_where_client_attested_denies_no_form_is_asked_and_the_call_waits_for_a_human(
    warden_bin, start_daemon, py_server
):
    daemon = start_daemon(DENIED)
    client = Client(APPROVE)
    command = behind_warden(warden_bin, through(daemon), "py", py_server)

    async def steps(session: Any) -> Any:
        asked = await session.call_tool("note", {"text": "ship it"})
        added = await session.call_tool("add", {"a": 1, "b": 2})
        return asked, added

    asked, added = run(command, "legacy", steps, env=daemon_env(), elicitation_callback=client)
    assert [q.mode for q in client.asked] == ["url"], "a client whose answer cannot approve gets no form"
    denial = decision(asked)
    assert denial["code"] == "warden.approval_pending", denial
    assert added.content[0].text == "3"
    page = daemon.api("GET", f"/v1/threads/{thread_of('mcp__py__note', {'text': 'ship it'})}/approvals")
    assert [a["approval_id"] for a in page["approvals"]] == [denial["approval_id"]]


def test_a_tool_the_approval_list_names_is_not_approved_by_a_client_by_default(warden_bin, start_daemon, py_server):
    daemon = start_daemon(LISTED)
    client = Client(APPROVE)
    command = behind_warden(warden_bin, through(daemon), "py", py_server)
    first, _ = run(command, "legacy", note_twice(client), env=daemon_env(), elicitation_callback=client)
    assert [q.mode for q in client.asked] == ["url", "url"]
    assert decision(first)["code"] == "warden.approval_pending"


def test_a_declined_elicitation_denies_the_call_in_band_and_rejects_the_ask(warden_bin, start_daemon, py_server):
    daemon = start_daemon(ALLOWED)
    client = Client(types.ElicitResult(action="decline"))
    command = behind_warden(warden_bin, through(daemon), "py", py_server)

    async def steps(session: Any) -> Any:
        return await session.call_tool("note", {"text": "ship it"})

    result = run(command, "legacy", steps, env=daemon_env(), elicitation_callback=client)
    assert len(client.asked) == 1
    denial = decision(result)
    assert denial["code"] == "warden.approval_rejected", denial
    page = daemon.api("GET", f"/v1/threads/{thread_of('mcp__py__note', {'text': 'ship it'})}/approvals?all=true")
    (approval,) = page["approvals"]
    assert approval["status"] == "resumed"
    assert approval["resolution"]["calls"][0]["status"] == "denied"
    assert approval["resolution"]["answered_by"] == "client_attested"


def test_an_unanswered_elicitation_times_out_to_a_denial_naming_the_approval(warden_bin, start_daemon, py_server):
    daemon = start_daemon(ALLOWED)

    class Silent(Client):
        async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
            self.asked.append(params)
            import anyio

            await anyio.sleep_forever()

    client = Silent(APPROVE)
    command = behind_warden(warden_bin, [*through(daemon), "--elicitation-timeout", "1"], "py", py_server)

    async def steps(session: Any) -> Any:
        return await session.call_tool("note", {"text": "ship it"})

    result = run(command, "legacy", steps, env=daemon_env(), elicitation_callback=client)
    denial = decision(result)
    assert denial["code"] == "warden.approval_pending", denial
    # Still pending: a human can answer it, and the identical retry reads that.
    page = daemon.api("GET", f"/v1/threads/{thread_of('mcp__py__note', {'text': 'ship it'})}/approvals")
    assert [a["approval_id"] for a in page["approvals"]] == [denial["approval_id"]]


def test_a_url_elicitation_sends_the_client_to_the_consoles_page_and_the_approved_retry_runs_once(
    warden_bin, start_daemon, py_server
):
    daemon = start_daemon(DENIED)
    client = Client(types.ElicitResult(action="accept"))
    command = behind_warden(warden_bin, through(daemon), "py", py_server)
    thread = thread_of("mcp__py__note", {"text": "ship it"})

    async def steps(session: Any) -> Any:
        asked = await session.call_tool("note", {"text": "ship it"})
        approval = decision(asked)["approval_id"]
        # A human signed in to the console approves (here through the API).
        daemon.approve(thread, approval)
        retried = await session.call_tool("note", {"text": "ship it"})
        once_more = await session.call_tool("note", {"text": "ship it"})
        return asked, retried, once_more

    asked, retried, once_more = run(command, "legacy", steps, env=daemon_env(), elicitation_callback=client)
    denial = decision(asked)
    assert denial["code"] == "warden.approval_pending", denial
    question = client.asked[0]
    assert question.mode == "url"
    assert question.url == f"{daemon.url}/console/approvals/{denial['approval_id']}"
    assert question.elicitation_id == denial["approval_id"]
    assert not retried.is_error and retried.content[0].text == "noted 1: ship it"
    assert decision(once_more)["code"] == "warden.approval_pending"
    assert decision(once_more)["approval_id"] != denial["approval_id"]
    page = daemon.api("GET", f"/v1/threads/{thread}/approvals?all=true")
    (human,) = [a for a in page["approvals"] if a["approval_id"] == denial["approval_id"]]
    assert "answered_by" not in human["resolution"], "a human's answer"


def test_a_2026_07_28_client_is_asked_by_input_required_result_and_its_approving_retry_runs_once(
    warden_bin, start_daemon, py_server
):
    daemon = start_daemon(ALLOWED)
    client = Client(APPROVE)
    command = behind_warden(warden_bin, through(daemon), "py", py_server)
    first, second = run(command, "2026-07-28", note_twice(client), env=daemon_env(), elicitation_callback=client)

    assert not first.is_error and first.content[0].text == "noted 1: ship it", first
    assert not second.is_error and second.content[0].text == "noted 2: ship it", second
    assert [q.mode for q in client.asked] == ["form", "form"]
    page = daemon.api("GET", f"/v1/threads/{thread_of('mcp__py__note', {'text': 'ship it'})}/approvals?all=true")
    assert [a["resolution"]["answered_by"] for a in page["approvals"]] == ["client_attested"] * 2
    assert all(a["consumed_at"] for a in page["approvals"])


def test_a_2026_07_28_client_that_opens_urls_is_sent_to_the_consoles_page_and_its_retry_runs_once_approved(
    warden_bin, start_daemon, py_server
):
    daemon = start_daemon(DENIED)
    thread = thread_of("mcp__py__note", {"text": "ship it"})

    class OpensThePage(Client):
        """Its user opens the page and approves there (here through the API)
        before the client answers; the SDK then retries with Warden's state."""

        async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
            self.asked.append(params)
            daemon.approve(thread, params.elicitation_id)
            return types.ElicitResult(action="accept")

    client = OpensThePage(types.ElicitResult(action="accept"))
    command = behind_warden(warden_bin, through(daemon), "py", py_server)
    first, second = run(command, "2026-07-28", note_twice(client), env=daemon_env(), elicitation_callback=client)

    assert not first.is_error and first.content[0].text == "noted 1: ship it", first
    assert not second.is_error and second.content[0].text == "noted 2: ship it", second
    assert [q.mode for q in client.asked] == ["url", "url"]
    approvals = daemon.api("GET", f"/v1/threads/{thread}/approvals?all=true")["approvals"]
    assert [q.url for q in client.asked] == [f"{daemon.url}/console/approvals/{a['approval_id']}" for a in approvals]
    assert all("answered_by" not in a["resolution"] for a in approvals), "a human's answers"
    assert all(a["consumed_at"] for a in approvals)


def test_a_2026_07_28_client_declining_is_denied(warden_bin, start_daemon, py_server):
    daemon = start_daemon(ALLOWED)
    client = Client(types.ElicitResult(action="decline"))
    command = behind_warden(warden_bin, through(daemon), "py", py_server)

    async def steps(session: Any) -> Any:
        return await session.call_tool("note", {"text": "ship it"})

    result = run(command, "2026-07-28", steps, env=daemon_env(), elicitation_callback=client)
    assert len(client.asked) == 1
    assert decision(result)["code"] == "warden.approval_rejected"


def test_a_dual_era_client_in_front_of_a_legacy_only_server_falls_back_to_the_handshake(
    warden_bin, config, data, fs_server
):
    """Warden relays `server/discover`; server-filesystem (2025-11-25 only)
    answers it `-32601`, and the client falls back to `initialize`."""
    command = behind_warden(warden_bin, ["--config", str(config)], "fs", [*fs_server, str(data)])

    async def steps(session: Any) -> Any:
        listed = [tool.name for tool in (await session.list_tools()).tools]
        read = await session.call_tool("read_text_file", {"path": str(data / "hello.txt")})
        return session.protocol_version, listed, read

    version, listed, read = run(command, "auto", steps)
    assert version == "2025-11-25"
    assert "move_file" not in listed
    assert "hello from the server" in read.content[0].text
