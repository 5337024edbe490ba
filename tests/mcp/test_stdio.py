"""`warden mcp stdio` in front of real MCP servers (server-filesystem from npm,
and a Python `mcp` SDK server), driven by the Python SDK's client in each
protocol revision it speaks, the TypeScript SDK's v1 client, and a raw peer
for malformed traffic."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Implementation

# The Python server speaks both revisions; server-filesystem (TS SDK v1) the first only.
REVISIONS = ["legacy", "2026-07-28"]


def behind_warden(warden: str, policy: list[str], name: str, server: list[str]) -> list[str]:
    return [warden, "mcp", "stdio", *policy, "--server-name", name, "--", *server]


def run(command: list[str], mode: str, steps, env: dict[str, str] | None = None, **options: Any) -> Any:
    """Connects the SDK's client to `command` (with `options`, such as its
    `client_info`) and runs `steps(client)`."""

    async def session() -> Any:
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        async with Client(params, mode=mode, read_timeout_seconds=30, **options) as client:
            return await steps(client)

    return asyncio.run(session())


def decision(result: Any) -> dict[str, Any]:
    """Warden's decision on a denied call: in structuredContent, or in _meta
    for a tool with an outputSchema."""
    assert result.is_error, result
    if result.structured_content is not None:
        return result.structured_content
    return (result.meta or {})["dev.warden/decision"]


async def tool_names(client: Any) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


def test_a_tool_denied_by_name_is_not_listed_by_server_filesystem(warden_bin, config, data, fs_server):
    command = behind_warden(warden_bin, ["--config", str(config)], "fs", [*fs_server, str(data)])
    names = run(command, "legacy", tool_names)
    assert "move_file" not in names
    assert "read_text_file" in names and "write_file" in names


@pytest.mark.parametrize("mode", REVISIONS)
def test_a_tool_denied_by_name_is_not_listed_by_the_python_server(warden_bin, config, py_server, mode):
    command = behind_warden(warden_bin, ["--config", str(config)], "py", py_server)
    assert run(command, mode, tool_names) == ["add", "note"]


def test_an_allowed_read_reaches_server_filesystem(warden_bin, config, data, fs_server):
    command = behind_warden(warden_bin, ["--config", str(config)], "fs", [*fs_server, str(data)])

    async def steps(client: Any) -> Any:
        return await client.call_tool("read_text_file", {"path": str(data / "hello.txt")})

    result = run(command, "legacy", steps)
    assert not result.is_error, result
    assert "hello from the server" in result.content[0].text


def test_a_write_to_a_sensitive_path_is_denied_in_band_and_the_file_untouched(
    warden_bin, config, data, fs_server
):
    command = behind_warden(warden_bin, ["--config", str(config)], "fs", [*fs_server, str(data)])
    secret = data / ".env"

    async def steps(client: Any) -> Any:
        return await client.call_tool("write_file", {"path": str(secret), "content": "TOKEN=stolen"})

    result = run(command, "legacy", steps)
    assert decision(result)["code"] == "perm.sensitive_path"
    assert "perm.sensitive_path" in result.content[0].text
    assert not secret.exists()


@pytest.mark.parametrize("mode", REVISIONS)
def test_an_allowed_call_reaches_the_python_server(warden_bin, config, py_server, mode):
    command = behind_warden(warden_bin, ["--config", str(config)], "py", py_server)

    async def steps(client: Any) -> Any:
        return await client.call_tool("add", {"a": 2, "b": 3})

    result = run(command, mode, steps)
    assert not result.is_error
    assert result.content[0].text == "5"


@pytest.mark.parametrize("mode", REVISIONS)
def test_a_call_to_a_tool_denied_by_name_is_denied_in_band(warden_bin, config, py_server, mode):
    command = behind_warden(warden_bin, ["--config", str(config)], "py", py_server)

    async def steps(client: Any) -> Any:
        return await client.call_tool("shout", {"text": "hi"})

    result = run(command, mode, steps)
    assert decision(result)["code"] == "perm.rule_deny"


@pytest.mark.parametrize("mode", REVISIONS)
def test_an_unreachable_daemon_is_an_in_band_deny(warden_bin, py_server, mode):
    env = {**os.environ, "WARDEN_TEST_TOKEN": "t0ken"}
    # Port 9 (discard) on loopback: nothing listens there.
    policy = ["--daemon", "http://127.0.0.1:9", "--token-env", "WARDEN_TEST_TOKEN"]
    command = behind_warden(warden_bin, policy, "py", py_server)

    async def steps(client: Any) -> Any:
        return await client.call_tool("add", {"a": 2, "b": 3})

    result = run(command, mode, steps, env=env)
    assert decision(result)["code"] == "warden.judge_unavailable"


def test_fields_warden_does_not_know_survive_from_server_filesystem(warden_bin, config, data, fs_server, raw_peer):
    peer = raw_peer(behind_warden(warden_bin, ["--config", str(config)], "fs", [*fs_server, str(data)]))
    peer.initialize()
    peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x-vendor": {"kept": True}}})
    tools = {tool["name"]: tool for tool in peer.answer_to(1)["result"]["tools"]}
    # Fields rmcp's typed model drops: the tool's execution hints, the schema's $schema.
    assert tools["read_text_file"]["execution"] == {"taskSupport": "forbidden"}
    assert "$schema" in tools["read_text_file"]["inputSchema"]
    assert peer.close() == 0


# A number past 64 bits (Python reads it exact), keys out of order, a field
# of no revision, and escapes spelled as the client spelled them.
EXACT_ARGUMENTS = '{"z": 123456789012345678901234567890, "a": 1.50, "b": "\\u00e9", "x-vendor": {"kept": true}}'


def test_an_allowed_call_reaches_the_server_byte_for_byte(warden_bin, config, raw_peer):
    server = [sys.executable, str(Path(__file__).parent / "raw_server.py")]
    peer = raw_peer(behind_warden(warden_bin, ["--config", str(config)], "raw", server))
    peer.initialize()
    line = '{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "echo", "arguments": ' + EXACT_ARGUMENTS + ', "x-unknown": [18446744073709551616]}}'
    peer.send(line)
    assert peer.answer_to(9)["result"]["content"][0]["text"] == line


def test_a_message_warden_does_not_judge_reaches_the_server_byte_for_byte(warden_bin, config, raw_peer):
    server = [sys.executable, str(Path(__file__).parent / "raw_server.py")]
    peer = raw_peer(behind_warden(warden_bin, ["--config", str(config)], "raw", server))
    peer.initialize()
    line = '{"id": 10, "jsonrpc": "2.0", "method": "vendor/echo", "params": ' + EXACT_ARGUMENTS + '}'
    peer.send(line)
    assert peer.answer_to(10)["result"]["line"] == line


def test_a_tools_call_naming_a_key_twice_is_refused_and_never_forwarded(warden_bin, config, raw_peer):
    server = [sys.executable, str(Path(__file__).parent / "raw_server.py")]
    peer = raw_peer(behind_warden(warden_bin, ["--config", str(config)], "raw", server))
    peer.initialize()
    # Parsers disagree on which `name` counts: Warden must not judge one and forward the other.
    peer.send('{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "echo", "name": "getenv", "arguments": {}}}')
    error = peer.answer_to(11)["error"]
    assert error["code"] == -32600 and "'name'" in error["message"], error


def test_a_client_line_that_is_not_json_gets_a_parse_error_and_the_session_goes_on(
    warden_bin, config, py_server, raw_peer
):
    peer = raw_peer(behind_warden(warden_bin, ["--config", str(config)], "py", py_server))
    peer.initialize()
    peer.send('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": NaN}}}')
    answer = peer.message()
    assert answer["id"] is None and answer["error"]["code"] == -32700
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}}})
    assert peer.answer_to(2)["result"]["content"][0]["text"] == "2"


def test_a_tools_call_with_malformed_params_gets_invalid_params(warden_bin, config, py_server, raw_peer):
    peer = raw_peer(behind_warden(warden_bin, ["--config", str(config)], "py", py_server))
    peer.initialize()
    peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}})
    assert peer.answer_to(1)["error"]["code"] == -32602


def test_a_server_line_that_is_not_json_reaches_the_client_and_the_session_goes_on(
    warden_bin, config, raw_peer
):
    # The Python SDK keeps its server's stdout clean: a server of raw lines misbehaves.
    server = [sys.executable, str(Path(__file__).parent / "raw_server.py")]
    peer = raw_peer(behind_warden(warden_bin, ["--config", str(config)], "py", server))
    peer.initialize()
    peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "noisy", "arguments": {}}})
    assert peer.line() == "this line is not JSON-RPC"
    assert peer.answer_to(1)["result"]["content"][0]["text"] == "done"
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}})
    assert peer.answer_to(2)["result"]["content"][0]["text"] == "3"


def test_the_proxy_exits_with_the_server_when_the_server_dies(warden_bin, config, raw_peer):
    dying = [sys.executable, "-c", "import sys; sys.stdin.readline(); sys.exit(3)"]
    peer = raw_peer(behind_warden(warden_bin, ["--config", str(config)], "py", dying))
    peer.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert peer.process.wait(timeout=30) == 3


def through(daemon: Any) -> list[str]:
    return ["--daemon", daemon.url, "--token-env", "WARDEN_MCP_TOKEN"]


def daemon_env() -> dict[str, str]:
    from conftest import DAEMON_TOKEN

    return {**os.environ, "WARDEN_MCP_TOKEN": DAEMON_TOKEN}


@pytest.mark.parametrize("mode", REVISIONS)
def test_through_the_daemon_a_call_is_judged_and_logged_as_the_tokens_principal(
    warden_bin, daemon, py_server, mode
):
    command = behind_warden(warden_bin, through(daemon), "py", py_server)

    async def steps(client: Any) -> Any:
        return await client.call_tool("add", {"a": 2, "b": 3}), await client.call_tool("shout", {"text": "hi"})

    allowed, denied = run(command, mode, steps, env=daemon_env())
    assert allowed.content[0].text == "5"
    denial = decision(denied)
    assert denial["code"] == "perm.rule_deny"
    assert denial["decision_id"]
    assert daemon.logged(denial["decision_id"])["tool_name"] == "mcp__py__shout"


@pytest.mark.parametrize("mode", REVISIONS)
def test_through_the_daemon_a_tool_denied_by_name_is_not_listed(warden_bin, daemon, py_server, mode):
    command = behind_warden(warden_bin, through(daemon), "py", py_server)
    assert run(command, mode, tool_names, env=daemon_env()) == ["add", "note"]


TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.mark.parametrize("mode", REVISIONS)
def test_through_the_daemon_the_log_names_the_server_the_clients_claim_and_the_trace(
    warden_bin, daemon, py_server, mode
):
    command = behind_warden(warden_bin, through(daemon), "py", py_server)

    async def steps(client: Any) -> Any:
        return await client.call_tool("shout", {"text": "hi"}, meta={"traceparent": TRACEPARENT})

    claim = Implementation(name="warden-test-client", version="1.2.3")
    denial = decision(run(command, mode, steps, env=daemon_env(), client_info=claim))
    logged = daemon.logged(denial["decision_id"])
    assert logged["mcp_server"] == "py"
    assert logged["mcp_client_claimed"] == "warden-test-client/1.2.3"
    assert logged["traceparent"] == TRACEPARENT
    assert logged["caller"]["token"] == "mcp-proxy"


def test_through_the_daemon_metrics_count_calls_by_server_tool_and_verdict(warden_bin, daemon, py_server):
    command = behind_warden(warden_bin, through(daemon), "py", py_server)

    async def steps(client: Any) -> Any:
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.call_tool("add", {"a": 3, "b": 4})
        await client.call_tool("shout", {"text": "hi"})

    run(command, "legacy", steps, env=daemon_env())
    with urllib.request.urlopen(daemon.url + "/metrics", timeout=30) as response:
        metrics = response.read().decode()
    assert 'warden_mcp_calls_total{server="py",tool="add",verdict="allow"} 2' in metrics
    assert 'warden_mcp_calls_total{server="py",tool="shout",verdict="deny"} 1' in metrics


def test_the_daemons_token_is_kept_from_the_server(warden_bin, daemon, raw_peer):
    server = [sys.executable, str(Path(__file__).parent / "raw_server.py")]
    peer = raw_peer(behind_warden(warden_bin, through(daemon), "raw", server), env=daemon_env())
    peer.initialize()
    peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "getenv", "arguments": {"name": "WARDEN_MCP_TOKEN"}}})
    assert peer.answer_to(1)["result"]["content"][0]["text"] == "<unset>"


def pending(result: Any) -> tuple[str, str]:
    """The thread and the approval an ask's denial names."""
    denial = decision(result)
    assert denial["code"] == "warden.approval_pending", denial
    assert [reason["code"] for reason in denial["reasons"]] == ["warden.approval_pending", "perm.rule_ask"]
    thread = re.search(r"\(thread (mcp-[0-9a-f]+)\)", denial["message"])
    assert thread and denial["approval_id"] in denial["message"], denial
    return thread.group(1), denial["approval_id"]


@pytest.mark.parametrize("mode", REVISIONS)
def test_through_the_daemon_an_approved_ask_lets_the_identical_retry_run_exactly_once(
    warden_bin, daemon, py_server, mode
):
    command = behind_warden(warden_bin, through(daemon), "py", py_server)

    async def steps(client: Any) -> Any:
        asked = await client.call_tool("note", {"text": "ship it"})
        thread, approval = pending(asked)
        again = await client.call_tool("note", {"text": "ship it"})
        assert pending(again) == (thread, approval), "a retry before the answer names the same approval"
        # Another call of the session is judged meanwhile: the ask blocks nothing else.
        assert (await client.call_tool("add", {"a": 1, "b": 1})).content[0].text == "2"
        daemon.approve(thread, approval)
        retried = await client.call_tool("note", {"text": "ship it"})
        once_more = await client.call_tool("note", {"text": "ship it"})
        return approval, retried, once_more

    approval, retried, once_more = run(command, mode, steps, env=daemon_env())
    assert not retried.is_error and retried.content[0].text == "noted 1: ship it"
    _, asked_again = pending(once_more)
    assert asked_again != approval


def test_through_the_daemon_an_approval_does_not_cover_other_arguments(warden_bin, daemon, py_server):
    command = behind_warden(warden_bin, through(daemon), "py", py_server)

    async def steps(client: Any) -> Any:
        thread, approval = pending(await client.call_tool("note", {"text": "ship it"}))
        daemon.approve(thread, approval)
        other = await client.call_tool("note", {"text": "ship everything"})
        same = await client.call_tool("note", {"text": "ship it"})
        return approval, other, same

    approval, other, same = run(command, "legacy", steps, env=daemon_env())
    _, other_approval = pending(other)
    assert other_approval != approval
    assert same.content[0].text == "noted 1: ship it"


def test_through_the_daemon_a_rejected_ask_leaves_the_retry_denied(warden_bin, daemon, py_server):
    command = behind_warden(warden_bin, through(daemon), "py", py_server)

    async def steps(client: Any) -> Any:
        thread, approval = pending(await client.call_tool("note", {"text": "ship it"}))
        daemon.api("POST", f"/v1/threads/{thread}/approvals/{approval}/clear", {"reason": "not today"})
        return await client.call_tool("note", {"text": "ship it"})

    denial = decision(run(command, "legacy", steps, env=daemon_env()))
    assert denial["code"] == "warden.approval_rejected", denial
    assert "not today" in json.dumps(denial)


async def ship_it(client: Any) -> Any:
    return await client.call_tool("note", {"text": "ship it"})


def approved_by_an_earlier_proxy(command: list[str], daemon: Any) -> str:
    """Asks `ship it` through a proxy that then exits, and approves the ask."""
    thread, approval = pending(run(command, "legacy", ship_it, env=daemon_env()))
    daemon.approve(thread, approval)
    return approval


def test_through_the_daemon_a_restarted_proxy_uses_an_approval_once(warden_bin, daemon, py_server):
    command = behind_warden(warden_bin, through(daemon), "py", py_server)
    approval = approved_by_an_earlier_proxy(command, daemon)
    ask = ship_it

    async def retry_twice(client: Any) -> Any:
        return await ask(client), await ask(client)

    # A new proxy process: what binds the approval to the call is in the store.
    retried, once_more = run(command, "legacy", retry_twice, env=daemon_env())
    assert not retried.is_error and retried.content[0].text == "noted 1: ship it"
    _, asked_again = pending(once_more)
    assert asked_again != approval


def test_through_the_daemon_two_proxies_racing_one_approved_retry_run_it_once(warden_bin, daemon, py_server):
    command = behind_warden(warden_bin, through(daemon), "py", py_server)
    approval = approved_by_an_earlier_proxy(command, daemon)
    ask = ship_it

    async def race() -> list[Any]:
        params = StdioServerParameters(command=command[0], args=command[1:], env=daemon_env())
        async with (
            Client(params, mode="legacy", read_timeout_seconds=30) as first,
            Client(params, mode="legacy", read_timeout_seconds=30) as second,
        ):
            return list(await asyncio.gather(ask(first), ask(second)))

    results = asyncio.run(race())
    ran = [r for r in results if not r.is_error]
    assert len(ran) == 1, results
    assert ran[0].content[0].text == "noted 1: ship it"
    (loser,) = [r for r in results if r.is_error]
    _, asked_again = pending(loser)
    assert asked_again != approval


def relisting_after_a_hot_swap(daemon: Any) -> tuple[Any, Any]:
    """A client's message handler and steps: list the tools, swap the daemon's
    policy for one that also denies `add`, wait for `list_changed`, list them
    again and call `add`. The steps return both listings and the call."""
    from conftest import DAEMON_POLICY

    from mcp import types

    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async def steps(client: Any) -> Any:
        before = await tool_names(client)
        daemon.reload(DAEMON_POLICY.replace('deny: ["mcp__py__shout"]', 'deny: ["mcp__py__shout", "mcp__py__add"]'))
        await asyncio.wait_for(changed.wait(), timeout=30)
        # The SDK's client keeps listings in a cache the notification evicts: this is read anew.
        after = await tool_names(client)
        return before, after, await client.call_tool("add", {"a": 1, "b": 2})

    return on_message, steps


def test_through_the_daemon_a_hot_swap_tells_the_client_to_list_the_tools_again(warden_bin, daemon, py_server):
    command = behind_warden(warden_bin, through(daemon), "py", py_server)
    on_message, steps = relisting_after_a_hot_swap(daemon)
    before, after, denied = run(command, "legacy", steps, env=daemon_env(), message_handler=on_message)
    assert before == ["add", "note"]
    assert after == ["note"]
    assert decision(denied)["code"] == "perm.rule_deny"


def relisting_on_a_listen_stream_after_a_hot_swap(daemon: Any) -> Any:
    """A `2026-07-28` client's steps: open a listen stream for tool changes,
    list the tools, swap the daemon's policy for one that also denies `add`,
    wait for the stream's event, list again and call `add`."""
    from conftest import DAEMON_POLICY

    from mcp.shared.subscriptions import ToolsListChanged

    async def steps(client: Any) -> Any:
        async with client.listen(tools_list_changed=True) as subscription:
            assert subscription.honored.tools_list_changed, subscription.honored
            before = await tool_names(client)
            daemon.reload(DAEMON_POLICY.replace('deny: ["mcp__py__shout"]', 'deny: ["mcp__py__shout", "mcp__py__add"]'))
            event = await asyncio.wait_for(subscription.__aiter__().__anext__(), timeout=30)
            assert isinstance(event, ToolsListChanged), event
            after = await tool_names(client)
            return before, after, await client.call_tool("add", {"a": 1, "b": 2})

    return steps


def test_through_the_daemon_a_hot_swap_is_told_on_a_2026_07_28_clients_listen_stream(warden_bin, daemon, py_server):
    command = behind_warden(warden_bin, through(daemon), "py", py_server)
    before, after, denied = run(command, "2026-07-28", relisting_on_a_listen_stream_after_a_hot_swap(daemon),
                                env=daemon_env())
    assert before == ["add", "note"]
    assert after == ["note"]
    assert decision(denied)["code"] == "perm.rule_deny"


def logging_config(directory: Path, policy: str) -> Path:
    """`policy` with the library's decision log in `directory`/data."""
    config = directory / "logging.yaml"
    config.write_text(f"{policy}data_dir: {directory / 'data'}\ndecision_log:\n  enabled: true\n  path: decisions.jsonl\n")
    return config


def logged_calls(directory: Path) -> list[tuple[str, str, str]]:
    """(tool, verdict, server) of each line of the library's decision log in `directory`/data."""
    lines = (directory / "data" / "decisions.jsonl").read_text().splitlines()
    return [(line["tool_name"], line["verdict"], line["mcp_server"]) for line in map(json.loads, lines)]


def add_and_shout(client: Any) -> Any:
    async def steps(session: Any) -> Any:
        return await session.call_tool("add", {"a": 2, "b": 3}), await session.call_tool("shout", {"text": "hi"})

    return steps(client)


def test_with_config_and_decision_log_each_judged_call_is_logged_with_its_server(warden_bin, tmp_path, py_server):
    from conftest import POLICY

    config = logging_config(tmp_path, POLICY)
    command = behind_warden(warden_bin, ["--config", str(config), "--decision-log"], "py", py_server)
    allowed, denied = run(command, "legacy", add_and_shout)
    assert not allowed.is_error and denied.is_error
    assert logged_calls(tmp_path) == [("mcp__py__add", "allow", "py"), ("mcp__py__shout", "deny", "py")]


def test_an_ask_is_denied_in_band_as_ask_unavailable(warden_bin, tmp_path, py_server):
    config = tmp_path / "asking.yaml"
    config.write_text('permissions:\n  mode: full_auto\n  ask: ["mcp__py__add"]\n')
    command = behind_warden(warden_bin, ["--config", str(config)], "py", py_server)

    async def steps(client: Any) -> Any:
        return await client.call_tool("add", {"a": 2, "b": 3})

    denial = decision(run(command, "legacy", steps))
    assert denial["code"] == "warden.ask_unavailable"
    assert [reason["code"] for reason in denial["reasons"]] == ["warden.ask_unavailable", "perm.rule_ask"]


def test_rmcps_client_speaking_2026_07_28_lists_without_the_denied_tool_and_reads_a_denial_in_band(
    warden_bin, config, rmcp_client, py_server
):
    command = behind_warden(warden_bin, ["--config", str(config)], "py", py_server)
    calls = [["add", {"a": 2, "b": 3}], ["shout", {"text": "hi"}]]
    out = subprocess.run([rmcp_client, json.dumps(calls), *command], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["protocol"] == "2026-07-28"
    assert report["tools"] == ["add", "note"]
    allowed, denied = (call["result"] for call in report["calls"])
    assert not allowed["isError"] and allowed["content"][0]["text"] == "5"
    assert denied["isError"] and denied["resultType"] == "complete"
    assert denied["_meta"]["dev.warden/decision"]["code"] == "perm.rule_deny"


def test_the_typescript_sdk_v1_client_reads_a_denial_of_a_tool_with_an_output_schema(
    warden_bin, config, data, fs_server, node_dir
):
    """TS SDK v1 checks even an error result's structuredContent against the
    tool's outputSchema (every server-filesystem tool has one): the decision
    rides in _meta, and the client gets the denial instead of throwing."""
    secret = data / ".env"
    calls = [["write_file", {"path": str(secret), "content": "TOKEN=stolen"}],
             ["read_text_file", {"path": str(data / "hello.txt")}]]
    command = behind_warden(warden_bin, ["--config", str(config)], "fs", [*fs_server, str(data)])
    out = subprocess.run(
        ["node", str(Path(__file__).parent / "ts_v1_client.mjs"), json.dumps(calls), *command],
        capture_output=True, text=True, timeout=120, env={**os.environ, "MCP_NODE_DIR": str(node_dir)},
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert "move_file" not in report["tools"] and "write_file" in report["tools"]
    denied, read = report["calls"]
    assert "threw" not in denied, denied
    assert denied["result"]["isError"] is True
    assert denied["result"]["_meta"]["dev.warden/decision"]["code"] == "perm.sensitive_path"
    assert not secret.exists()
    assert "hello from the server" in read["result"]["content"][0]["text"]
