"""`warden mcp http` in front of a Python `mcp` SDK server over Streamable
HTTP, driven by that SDK's Streamable HTTP client in both protocol revisions,
and by raw HTTP requests for the transport's own statuses. The server accepts
only the operator's credential and records every request it receives."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import DAEMON_POLICY, DAEMON_TOKEN
from test_stdio import (
    add_and_shout,
    decision,
    logged_calls,
    logging_config,
    relisting_after_a_hot_swap,
    relisting_on_a_listen_stream_after_a_hot_swap,
)

HERE = Path(__file__).resolve().parent
REVISIONS = ["legacy", "2026-07-28"]

OPERATOR_TOKEN = "operator-upstream-token-0123456789abcdef"
CLIENT_TOKEN = "mcp-http-client-token-0123456789abcdef"
APPROVER_TOKEN = "mcp-http-approver-token-0123456789abcdef"

POLICY = """\
permissions:
  mode: full_auto
  deny: ["mcp__py__shout"]
server:
  tokens:
    - {name: mcp-client, role: agent, token_env: WARDEN_TEST_CLIENT_TOKEN}
    - {name: alice, role: approver, token_env: WARDEN_TEST_APPROVER_TOKEN}
"""


class Process:
    """A process whose first stdout line says where it listens."""

    def __init__(self, command: list[str], prefix: str, env: dict[str, str], log: Path) -> None:
        self.log = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL, env=env
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().decode().strip()
        if not line.startswith(prefix):
            self.stop()
            raise RuntimeError(f"{command[0]} did not start: {line!r}\n{log.read_text()}")
        self.url = line[len(prefix):]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()
        self.log.close()


class Upstream(Process):
    def __init__(self, directory: Path) -> None:
        self.record = directory / "upstream-requests.jsonl"
        self.record.touch()
        env = {**os.environ, "WARDEN_TEST_UPSTREAM_TOKEN": OPERATOR_TOKEN}
        super().__init__([sys.executable, str(HERE / "http_server.py"), str(self.record)],
                         "listening on ", env, directory / "upstream.log")

    def requests(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def calls(self) -> list[str]:
        return [r["tool"] for r in self.requests() if r["method"] == "tools/call"]


@pytest.fixture()
def upstream(tmp_path: Path):
    server = Upstream(tmp_path)
    yield server
    server.stop()


def start_proxy(warden: str, upstream: Upstream, policy: list[str], directory: Path) -> Process:
    env = {**os.environ, "WARDEN_TEST_CLIENT_TOKEN": CLIENT_TOKEN, "WARDEN_TEST_APPROVER_TOKEN": APPROVER_TOKEN,
           "WARDEN_TEST_OPERATOR_TOKEN": OPERATOR_TOKEN, "WARDEN_MCP_TOKEN": DAEMON_TOKEN}
    return Process(
        [warden, "mcp", "http", "--upstream", upstream.url, "--listen", "127.0.0.1:0", *policy,
         "--server-name", "py", "--upstream-auth-env", "WARDEN_TEST_OPERATOR_TOKEN"],
        "warden: mcp http listening on ", env, directory / "proxy.log")


@pytest.fixture()
def proxy(warden_bin: str, upstream: Upstream, tmp_path: Path):
    config = tmp_path / "warden.yaml"
    config.write_text(POLICY)
    running = start_proxy(warden_bin, upstream, ["--config", str(config)], tmp_path)
    yield running
    running.stop()


def run(url: str, mode: str, steps, token: str = CLIENT_TOKEN, **options: Any) -> Any:
    """The SDK's Streamable HTTP client at `url`, presenting `token` (with
    `options`, such as its `message_handler`), runs `steps(client)`."""

    async def session() -> Any:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http, Client(streamable_http_client(url, http_client=http), mode=mode,
                                read_timeout_seconds=30, **options) as client:
            return await steps(client)

    return asyncio.run(session())


def post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Message, bytes]:
    """A raw POST: the status, the headers (read without regard to case) and
    the body, whatever the status."""
    data = json.dumps(body).encode() if not isinstance(body, bytes) else body
    request = urllib.request.Request(url, data=data, method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "raw-http-peer", "version": "0"}}}


def test_the_upstream_refuses_the_clients_token(upstream):
    status, headers, _ = post(upstream.url, INITIALIZE, {"Authorization": f"Bearer {CLIENT_TOKEN}"})
    assert status == 401


@pytest.mark.parametrize("mode", REVISIONS)
def test_the_upstream_sees_the_operators_credential_never_the_clients(proxy, upstream, mode):
    async def steps(client: Any) -> Any:
        return await client.call_tool("add", {"a": 2, "b": 3})

    result = run(proxy.url, mode, steps)
    assert not result.is_error, result
    seen = {r["authorization"] for r in upstream.requests()}
    assert seen == {f"Bearer {OPERATOR_TOKEN}"}
    assert CLIENT_TOKEN not in upstream.record.read_text()


@pytest.mark.parametrize("mode", REVISIONS)
def test_an_allowed_call_reaches_the_upstream(proxy, upstream, mode):
    async def steps(client: Any) -> Any:
        return await client.call_tool("add", {"a": 20, "b": 22})

    result = run(proxy.url, mode, steps)
    assert not result.is_error, result
    assert result.content[0].text == "42"
    assert upstream.calls() == ["add"]


@pytest.mark.parametrize("mode", REVISIONS)
def test_a_denied_call_is_answered_in_band_and_never_reaches_the_upstream(proxy, upstream, mode):
    async def steps(client: Any) -> Any:
        return await client.call_tool("shout", {"text": "hi"})

    result = run(proxy.url, mode, steps)
    assert decision(result)["code"] == "perm.rule_deny"
    assert "shout" not in upstream.calls()


@pytest.mark.parametrize("mode", REVISIONS)
def test_a_tool_denied_by_name_is_not_listed(proxy, mode):
    async def steps(client: Any) -> Any:
        return [tool.name for tool in (await client.list_tools()).tools]

    assert run(proxy.url, mode, steps) == ["add"]


def test_a_client_without_a_token_gets_401_with_www_authenticate(proxy, upstream):
    status, headers, _ = post(proxy.url, INITIALIZE)
    assert status == 401
    assert headers.get("WWW-Authenticate", "").startswith("Bearer")
    assert upstream.requests() == []


def test_a_client_with_a_wrong_token_gets_401_with_www_authenticate(proxy, upstream):
    status, headers, _ = post(proxy.url, INITIALIZE, {"Authorization": "Bearer not-a-token-0123456789abcdef"})
    assert status == 401
    assert 'error="invalid_token"' in headers.get("WWW-Authenticate", "")
    assert upstream.requests() == []


def test_an_approvers_token_is_refused_403(proxy, upstream):
    status, _, _ = post(proxy.url, INITIALIZE, {"Authorization": f"Bearer {APPROVER_TOKEN}"})
    assert status == 403
    assert upstream.requests() == []


def test_an_unknown_session_gets_404(proxy, upstream):
    status, _, body = post(proxy.url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                           {"Authorization": f"Bearer {CLIENT_TOKEN}", "Mcp-Session-Id": "no-such-session"})
    assert status == 404
    assert json.loads(body)["error"]
    assert upstream.requests() == []


def test_the_session_id_is_the_proxys_own_and_the_upstreams_is_never_shown(proxy, upstream):
    status, headers, _ = post(proxy.url, INITIALIZE, {"Authorization": f"Bearer {CLIENT_TOKEN}"})
    assert status == 200
    ours = headers["mcp-session-id"]
    status, _, body = post(proxy.url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                           {"Authorization": f"Bearer {CLIENT_TOKEN}", "Mcp-Session-Id": ours,
                            "MCP-Protocol-Version": "2025-11-25"})
    assert status == 200, body
    assert b'"add"' in body and b'"shout"' not in body
    # The upstream got its own id, which the client never saw.
    assert ours not in upstream.record.read_text()


def test_a_body_that_is_not_json_content_gets_415(proxy, upstream):
    request = urllib.request.Request(proxy.url, data=b"{}", method="POST")
    request.add_header("Content-Type", "text/plain")
    request.add_header("Accept", "application/json, text/event-stream")
    request.add_header("Authorization", f"Bearer {CLIENT_TOKEN}")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 415


def test_a_client_that_does_not_accept_sse_gets_406(proxy, upstream):
    status, _, _ = post(proxy.url, INITIALIZE, {"Authorization": f"Bearer {CLIENT_TOKEN}", "Accept": "application/json"})
    assert status == 406


def test_a_call_the_upstream_cannot_answer_is_a_json_rpc_error_in_a_200(proxy, upstream):
    upstream.stop()
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}
    status, _, body = post(proxy.url, call, {"Authorization": f"Bearer {CLIENT_TOKEN}"})
    assert status == 200
    answer = json.loads(body)
    assert answer["id"] == 9 and answer["error"]["code"] == -32603


@pytest.mark.parametrize("mode", REVISIONS)
def test_through_the_daemon_a_denial_is_logged_and_an_allowed_call_runs(warden_bin, daemon, upstream, tmp_path, mode):
    running = through_daemon(warden_bin, daemon, upstream, tmp_path)
    try:
        allowed, denied = run(running.url, mode, add_and_shout)
    finally:
        running.stop()
    assert allowed.content[0].text == "5"
    denial = decision(denied)
    assert denial["code"] == "perm.rule_deny"
    assert daemon.logged(denial["decision_id"])["tool_name"] == "mcp__py__shout"
    assert upstream.calls() == ["add"]


def relisted_without_add(warden_bin: str, daemon: Any, upstream: Upstream, directory: Path, mode: str,
                         steps: Any, **options: Any) -> None:
    """`steps` (a hot swap that also denies `add`, as test_stdio's) through
    `warden mcp http --daemon`: `add` listed before, gone after, then denied,
    and the upstream never called."""
    running = through_daemon(warden_bin, daemon, upstream, directory)
    try:
        before, after, denied = run(running.url, mode, steps, **options)
    finally:
        running.stop()
    assert before == ["add"]
    assert after == []
    assert decision(denied)["code"] == "perm.rule_deny"
    assert upstream.calls() == []


def test_through_the_daemon_a_hot_swap_tells_the_client_on_its_get_stream_to_list_the_tools_again(
    warden_bin, daemon, upstream, tmp_path
):
    on_message, steps = relisting_after_a_hot_swap(daemon)
    relisted_without_add(warden_bin, daemon, upstream, tmp_path, "legacy", steps, message_handler=on_message)


def test_through_the_daemon_a_hot_swap_is_told_on_a_2026_07_28_clients_listen_stream(
    warden_bin, daemon, upstream, tmp_path
):
    steps = relisting_on_a_listen_stream_after_a_hot_swap(daemon)
    relisted_without_add(warden_bin, daemon, upstream, tmp_path, "2026-07-28", steps)


def test_with_config_and_decision_log_each_judged_call_is_logged_with_its_server(warden_bin, upstream, tmp_path):
    config = logging_config(tmp_path, POLICY)
    running = start_proxy(warden_bin, upstream, ["--config", str(config), "--decision-log"], tmp_path)
    try:
        allowed, denied = run(running.url, "legacy", add_and_shout)
    finally:
        running.stop()
    assert not allowed.is_error and denied.is_error
    assert logged_calls(tmp_path) == [("mcp__py__add", "allow", "py"), ("mcp__py__shout", "deny", "py")]


def test_an_https_upstream_is_refused_at_start_with_what_to_do_instead(warden_bin, tmp_path):
    config = tmp_path / "warden.yaml"
    config.write_text(POLICY)
    out = subprocess.run(
        [warden_bin, "mcp", "http", "--upstream", "https://mcp.example/mcp", "--listen", "127.0.0.1:0",
         "--config", str(config), "--server-name", "py"],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "WARDEN_TEST_CLIENT_TOKEN": CLIENT_TOKEN, "WARDEN_TEST_APPROVER_TOKEN": APPROVER_TOKEN},
    )
    assert out.returncode != 0
    assert "--upstream 'https://mcp.example/mcp': an http:// URL is required" in out.stderr
    assert "TLS-terminating proxy" in out.stderr


ASKING = DAEMON_POLICY.replace('ask: ["mcp__py__note"]', 'ask: ["mcp__py__add"]') + "mcp:\n  client_attested: allow\n"


def through_daemon(warden_bin: str, daemon: Any, upstream: Upstream, directory: Path) -> Process:
    clients = directory / "clients.yaml"
    clients.write_text(POLICY)
    policy = ["--daemon", daemon.url, "--token-env", "WARDEN_MCP_TOKEN", "--client-tokens", str(clients)]
    return start_proxy(warden_bin, upstream, policy, directory)


class Approves:
    """An elicitation callback that approves, and keeps what it was asked."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    async def __call__(self, context: Any, params: Any) -> Any:
        from mcp import types

        self.asked.append(params)
        return types.ElicitResult(action="accept", content={"approve": True})


def add_asked(warden_bin: str, daemon: Any, upstream: Upstream, directory: Path, mode: str, client: Approves) -> Any:
    """`add` called once through `warden mcp http --daemon` by a client of
    revision `mode` that answers Warden's questions with `client`."""
    running = through_daemon(warden_bin, daemon, upstream, directory)

    async def steps(session: Any) -> Any:
        return await session.call_tool("add", {"a": 2, "b": 3})

    try:
        return run(running.url, mode, steps, elicitation_callback=client)
    finally:
        running.stop()


def test_a_2025_11_25_client_is_not_asked_mid_call_over_http_and_gets_the_denial_naming_the_approval(
    warden_bin, start_daemon, upstream, tmp_path
):
    client = Approves()
    denied = add_asked(warden_bin, start_daemon(ASKING), upstream, tmp_path, "legacy", client)
    assert decision(denied)["code"] == "warden.approval_pending"
    assert decision(denied)["approval_id"]
    assert client.asked == []
    assert upstream.calls() == []


def test_a_2026_07_28_client_is_asked_over_http_by_input_required_result_and_its_approving_retry_runs(
    warden_bin, start_daemon, upstream, tmp_path
):
    client = Approves()
    allowed = add_asked(warden_bin, start_daemon(ASKING), upstream, tmp_path, "2026-07-28", client)
    assert not allowed.is_error and allowed.content[0].text == "5", allowed
    assert [q.mode for q in client.asked] == ["form"]
    assert upstream.calls() == ["add"]
