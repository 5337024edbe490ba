"""``warden.deepcode`` inside DeepCode's real agent runner (PyPI deepcode-hku
2.3.1, Python 3.12, the venv ``scripts/test`` makes): a scripted model emits
tool calls against a temporary workspace, DeepCode's own tools run them, and
Warden's checker decides, in this process and through the daemon. Skipped
without DeepCode (a failure where ``WARDEN_REQUIRE_HARNESSES=1``)."""

import asyncio
import json
import threading
import time
import urllib.request

import pytest
from conftest import AGENT, APPROVER, TOKENS, Daemon, require, require_native, warden_bin

from warden.deepcode import WardenChecker

require("core.agent_runtime.runner")

from core.agent_runtime.runner import AgentRunner, AgentRunSpec  # noqa: E402
from core.harness.hooks.engine import HooksEngine  # noqa: E402
from core.harness.tools import default_coding_tools  # noqa: E402
from core.providers.base import LLMProvider, LLMResponse, ToolCallRequest  # noqa: E402
from loguru import logger  # noqa: E402

logger.disable("core")  # DeepCode logs every denial's traceback to stderr

POLICY = """guardrails:
  providers: []
permissions:
  mode: default
  allow: ["Edit(allowed/**)", "Bash(echo *)"]
  ask: ["Edit(asked/**)"]
  deny: ["Edit(denied/**)"]
"""


class ScriptedProvider(LLMProvider):
    """DeepCode's model interface, answering with scripted responses; records what the model was shown."""

    def __init__(self, script):
        super().__init__(api_key=None, api_base=None)
        self.script, self.seen = list(script), []

    async def chat(self, messages, tools=None, model=None, max_tokens=4096, temperature=0.7, **_):
        self.seen.append([dict(m) for m in messages])
        return self.script.pop(0) if self.script else LLMResponse(content="done", finish_reason="stop")

    def get_default_model(self):
        return "scripted"


def write(path, content="hello\n"):
    return LLMResponse(
        content="",
        finish_reason="tool_calls",
        tool_calls=[ToolCallRequest(id="call_1", name="write", arguments={"file_path": path, "content": content})],
    )


def run(ws, checker, script, **spec):
    """Runs DeepCode's AgentRunner on the script; returns (result, the tool message the model read)."""
    provider = ScriptedProvider(script)
    spec = AgentRunSpec(
        initial_messages=[{"role": "user", "content": "do it"}],
        tools=spec.pop("tools", None) or default_coding_tools(str(ws)),
        model="scripted",
        max_iterations=4,
        max_tool_result_chars=16_000,
        workspace=ws,
        permission_checker=checker,
        **spec,
    )
    result = asyncio.run(AgentRunner(provider).run(spec))
    tool_messages = [m for m in result.messages if m.get("role") == "tool"]
    return result, tool_messages[0]["content"] if tool_messages else None


@pytest.fixture
def ws(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "warden.yaml"
    path.write_text(POLICY)
    return path


def in_process(ws, config, tmp_path, **settings):
    require_native()
    settings = {"approval_timeout": 5, "poll_interval": 0.05, **settings}  # no test waits for long
    return WardenChecker(config=str(config), data_dir=str(tmp_path / "data"), workspace=ws, **settings)


def answer_when_paused(checker, decide, seen=None):
    """A human in another thread: waits for the checker's pause, then answers it through Warden's API."""

    def human():
        for _ in range(400):
            pending = checker.client.approvals(checker.pause_thread(1))
            if pending:
                if seen is not None:
                    seen.append(pending[0])
                decide(pending[0])
                return
            time.sleep(0.05)

    thread = threading.Thread(target=human, daemon=True)
    thread.start()
    return thread


def approve_in_process(checker, decision):
    def decide(view):
        body = {"decisions": [{"request_id": r["request_id"], "decision": decision} for r in view["requests"]]}
        checker.client.resume(view["thread_id"], view["approval_id"], body, reviewer="alice")

    return decide


# -- in this process -------------------------------------------------------------


def test_an_allowed_call_runs(ws, config, tmp_path):
    result, said = run(ws, in_process(ws, config, tmp_path), [write("allowed/a.txt")])
    assert (ws / "allowed" / "a.txt").read_text() == "hello\n"
    assert result.tool_events[0]["status"] == "ok", said


def test_a_denied_call_does_not_run_and_the_model_reads_the_reason(ws, config, tmp_path):
    result, said = run(ws, in_process(ws, config, tmp_path), [write("denied/a.txt")])
    assert not (ws / "denied").exists()
    assert result.tool_events[0]["status"] == "denied"
    assert said.startswith("Error: permission denied: Warden denied tool 'write' (perm.rule_deny)")


def test_an_ask_approved_through_wardens_api_runs_once_naming_the_human(ws, config, tmp_path):
    checker = in_process(ws, config, tmp_path, approval_timeout=2, poll_interval=0.05)
    human = answer_when_paused(checker, approve_in_process(checker, "approve"))
    result, _ = run(ws, checker, [write("asked/a.txt"), write("asked/a.txt", "again\n")])
    human.join()
    assert (ws / "asked" / "a.txt").read_text() == "hello\n"  # the second call waits again, unanswered: denied
    assert [e["status"] for e in result.tool_events] == ["ok", "denied"]
    second = [m["content"] for m in result.messages if m.get("role") == "tool"][1]
    assert "(warden.approval_expired)" in second  # paused on a thread of its own, not refused as pending
    resolved = checker.client.approvals(checker.pause_thread(1), include_resolved=True)
    assert resolved[0]["resolution"]["reviewer"] == "alice"


def test_an_ask_rejected_through_wardens_api_does_not_run(ws, config, tmp_path):
    checker = in_process(ws, config, tmp_path)
    human = answer_when_paused(checker, approve_in_process(checker, "reject"))
    _result, said = run(ws, checker, [write("asked/a.txt")])
    human.join()
    assert not (ws / "asked").exists()
    assert "alice rejected tool 'write' (warden.approval_rejected)" in said


def test_a_humans_edit_is_what_deepcode_runs(ws, config, tmp_path):
    checker = in_process(ws, config, tmp_path)

    def edit(view):
        request = view["requests"][0]
        args = {**request["args"], "content": "edited\n"}
        body = {"decisions": [{"request_id": request["request_id"], "decision": "edit", "args": args}]}
        checker.client.resume(view["thread_id"], view["approval_id"], body, reviewer="alice")

    human = answer_when_paused(checker, edit)
    run(ws, checker, [write("asked/a.txt")])
    human.join()
    assert (ws / "asked" / "a.txt").read_text() == "edited\n"


def test_a_headless_runs_ask_is_denied_without_a_pause(ws, config, tmp_path):
    checker = in_process(ws, config, tmp_path, headless=True)
    _result, said = run(ws, checker, [write("asked/a.txt")])
    assert not (ws / "asked").exists()
    assert "(warden.ask_unavailable)" in said
    assert checker.client.approvals(checker.pause_thread(1), include_resolved=True) == []


def test_a_full_auto_runs_ask_is_denied(ws, config, tmp_path):
    checker = in_process(ws, config, tmp_path, run_mode="full_auto")
    _, said = run(ws, checker, [write("asked/a.txt")])
    assert not (ws / "asked").exists() and "(warden.ask_unavailable)" in said


def test_plan_mode_denies_a_tool_that_is_not_read_only(ws, config, tmp_path):
    checker = in_process(ws, config, tmp_path, run_mode="plan")
    _, said = run(ws, checker, [write("allowed/a.txt")])
    assert not (ws / "allowed").exists() and "(perm.read_only_mode)" in said


def test_an_unanswered_ask_is_denied_when_the_wait_ends(ws, config, tmp_path):
    checker = in_process(ws, config, tmp_path, approval_timeout=0.3, poll_interval=0.05)
    _, said = run(ws, checker, [write("asked/a.txt")])
    assert not (ws / "asked").exists() and "(warden.approval_expired)" in said


def test_a_permission_request_hook_that_allows_cannot_bypass_a_warden_ask(ws, config, tmp_path):
    asked = []

    class Allow:
        decision, message = "allow", "hook says yes"

    async def permission_request_hook(name, arguments):
        asked.append(name)
        return Allow()

    checker = in_process(ws, config, tmp_path, approval_timeout=0.3, poll_interval=0.05)
    _, said = run(
        ws,
        checker,
        [write("asked/a.txt")],
        permission_request_hook=permission_request_hook,
        approval_callback=lambda *_: True,
    )
    assert not (ws / "asked").exists() and "(warden.approval_expired)" in said
    assert asked == []


def test_a_patch_is_judged_by_every_file_it_touches(ws, config, tmp_path):
    patch = "*** Begin Patch\n*** Add File: denied/x.txt\n+hi\n*** End Patch\n"
    call = ToolCallRequest(id="call_1", name="apply_patch", arguments={"patch": patch})
    checker = in_process(ws, config, tmp_path, run_mode="full_auto")
    _, said = run(ws, checker, [LLMResponse(content="", finish_reason="tool_calls", tool_calls=[call])])
    assert not (ws / "denied").exists() and "(perm.rule_deny)" in said


def test_arguments_are_judged_as_deepcode_casts_them(ws, config, tmp_path):
    tools = default_coding_tools(str(ws))
    checker = in_process(ws, config, tmp_path, tools=tools, headless=True)
    call = ToolCallRequest(id="call_1", name="bash", arguments={"command": ["rm", "-rf", "x"]})
    _, said = run(ws, checker, [LLMResponse(content="", finish_reason="tool_calls", tool_calls=[call])], tools=tools)
    assert "permission denied" in said  # judged as the string "['rm', '-rf', 'x']" DeepCode would run, not allowed


@pytest.mark.parametrize("settings", [{"run-mode": "plan"}, {"headles": True}, {"approval_timeout": 0}])
def test_a_wrong_setting_is_refused_at_construction(config, tmp_path, settings):
    require_native()
    with pytest.raises(ValueError, match="WardenChecker"):
        WardenChecker(config=str(config), data_dir=str(tmp_path), **settings)


@pytest.mark.parametrize(
    "error",
    [RecursionError("maximum recursion depth exceeded"), MemoryError("out"), ConnectionResetError("reset by peer")],
)
def test_an_exception_inside_the_checker_is_a_deny_naming_it(ws, config, tmp_path, error):
    checker = in_process(ws, config, tmp_path)

    def boom(call):
        raise error

    checker.client.decide = boom  # the face itself failing, as a transport might
    expected = (
        "deny",
        f"Warden denied tool 'write' (warden.adapter_failed): the Warden checker failed "
        f"({type(error).__name__}: {error}); the call is denied.",
    )
    assert checker.check("write", {"file_path": "allowed/a"}) == expected
    assert asyncio.run(checker("write", {"file_path": "allowed/a"})) == expected


# -- through the daemon -----------------------------------------------------------


@pytest.fixture
def deepcode_daemon(tmp_path):
    config = tmp_path / "daemon.yaml"
    config.write_text(POLICY + TOKENS)
    d = Daemon(tmp_path / "warden", config=config)
    yield d
    d.stop()


def daemon_checker(d, ws, **settings):
    return WardenChecker(url=d.url, token=AGENT, workspace=ws, approval_timeout=5, poll_interval=0.05, **settings)


def test_through_the_daemon_allowed_runs_and_denied_does_not(ws, deepcode_daemon):
    checker = daemon_checker(deepcode_daemon, ws)
    run(ws, checker, [write("allowed/a.txt")])
    _, said = run(ws, checker, [write("denied/a.txt")])
    assert (ws / "allowed" / "a.txt").exists() and not (ws / "denied").exists()
    assert "(perm.rule_deny)" in said


def test_through_the_daemon_an_ask_approved_by_an_approver_runs(ws, deepcode_daemon):
    checker = daemon_checker(deepcode_daemon, ws)

    def decide(view):
        body = {"decisions": [{"request_id": r["request_id"], "decision": "approve"} for r in view["requests"]]}
        url = f"{deepcode_daemon.url}/v1/threads/{view['thread_id']}/approvals/{view['approval_id']}/resume"
        request = urllib.request.Request(
            url,
            data=json.dumps(body).encode(),
            headers={"authorization": f"Bearer {APPROVER}", "content-type": "application/json"},
        )
        urllib.request.urlopen(request, timeout=10).read()

    human = answer_when_paused(checker, decide)
    run(ws, checker, [write("asked/a.txt")])
    human.join()
    assert (ws / "asked" / "a.txt").read_text() == "hello\n"


def test_through_the_daemon_a_headless_runs_ask_is_denied(ws, deepcode_daemon):
    checker = daemon_checker(deepcode_daemon, ws, headless=True)  # an agent token: no mode keys, can_resume false
    _, said = run(ws, checker, [write("asked/a.txt")])
    assert not (ws / "asked").exists() and "(warden.ask_unavailable)" in said


def test_an_unreachable_daemon_is_a_deny_naming_it(ws):
    checker = WardenChecker(url="http://127.0.0.1:9", token="t" * 24, workspace=ws)
    _, said = run(ws, checker, [write("allowed/a.txt")])
    assert not (ws / "allowed").exists() and "(warden.no_answer)" in said


# -- the command hook ------------------------------------------------------------


def hooked(ws, tmp_path, config, *flags):
    (ws / ".deepcode").mkdir()
    command = " ".join([str(warden_bin()), "hook", "claude-code", "--config", str(config), *flags])
    hooks = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": command}]}]}}
    (ws / ".deepcode" / "hooks.json").write_text(json.dumps(hooks))
    # A str: a Path workspace makes every hook fail (its payload is not JSON), and DeepCode then runs the call.
    engine, warnings = HooksEngine.discover(str(ws), "s-1", home=str(tmp_path / "home"))
    assert engine is not None, warnings
    return engine


def test_warden_hook_as_a_deepcode_command_hook_blocks_a_denied_call(ws, config, tmp_path):
    engine = hooked(ws, tmp_path, config)
    _result, said = run(ws, None, [write("denied/a.txt")], pre_tool_hook=engine.run_pre_tool_use)
    assert not (ws / "denied").exists()
    assert said.startswith("Error: blocked by PreToolUse hook: ")


def test_warden_hook_lets_an_allowed_call_run(ws, config, tmp_path):
    engine = hooked(ws, tmp_path, config)
    run(ws, None, [write("allowed/a.txt")], pre_tool_hook=engine.run_pre_tool_use)
    assert (ws / "allowed" / "a.txt").exists()


def test_an_ask_past_the_hook_is_still_the_checkers_to_resolve(ws, config, tmp_path):
    # DeepCode ignores a hook's ask (the call proceeds): the checker is what holds it.
    engine = hooked(ws, tmp_path, config)
    checker = in_process(ws, config, tmp_path, headless=True)
    _, said = run(ws, checker, [write("asked/a.txt")], pre_tool_hook=engine.run_pre_tool_use)
    assert not (ws / "asked").exists() and "(warden.ask_unavailable)" in said


def test_with_on_ask_deny_the_hook_alone_holds_an_ask(ws, config, tmp_path):
    # DeepCode runs a call whose hook said "ask": `--on-ask deny` makes the hook's answer a deny.
    engine = hooked(ws, tmp_path, config, "--on-ask", "deny")
    _result, said = run(ws, None, [write("asked/a.txt")], pre_tool_hook=engine.run_pre_tool_use)
    assert not (ws / "asked").exists()
    assert said.startswith("Error: blocked by PreToolUse hook: ") and "asks a human" in said
