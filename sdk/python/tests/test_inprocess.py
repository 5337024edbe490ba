"""Warden inside the Python process (``warden.Warden``, the native module
``warden._native``): made from a file, text or a dict; a bad configuration
refused saying what and where; the same answers as the daemon for the same
calls and the same configuration; fail closed; the approval gate; reload; the
GIL released while Rust works.

Needs the native module (``scripts/build-python-native``); skipped without it,
unless ``WARDEN_REQUIRE_NATIVE=1`` (as ``scripts/test`` sets it) makes its
absence a failure."""

import asyncio
import math
import threading
import time

import pytest
from conftest import ALLOWLIST, GUESTS, INTERNAL, TOKENS, Daemon, require_native

from warden import WardenClient, WardenHTTPError

inprocess = require_native()
Warden = inprocess.Warden
WardenConfigError = inprocess.WardenConfigError

HOSTILE = GUESTS / "hostile.wasm"

#: One configuration for the daemon and the in-process core: the native
#: permission engine (an ask and a deny rule), the allowlist, a provider that
#: misbehaves as a call's arguments say (`{"behaviour": "panic"}`), and a tool
#: under the approval gate.
PARITY = f"""permissions:
  mode: full_auto
  ask: ["Bash(git push *)"]
  deny: ["Bash(rm -rf *)"]
hitl_approval:
  tools: [write_file]
guardrails:
  providers:
{ALLOWLIST}
    - name: hostile
      wasm: {HOSTILE}
      config: {{behaviour: from_input}}
      limits: {{timeout_ms: 100, fuel: 1125899906842624}}
{TOKENS}"""

#: Calls whose answers must be the daemon's: allow, deny (provider and native),
#: ask (a rule; the approval list), intake refusals, provider failures.
CALLS = {
    "allow": ("bash", {"command": "git status"}),
    "not-in-allowlist": ("rm", {"path": "/"}),
    "native-deny": ("bash", {"command": "rm -rf /tmp/x"}),
    "rule-ask": ("bash", {"command": "git push origin main"}),
    "listed-tool-asks": ("write_file", {"path": "notes.md", "content": "x"}),
    "sensitive-path": ("read_file", {"path": "~/.ssh/id_rsa"}),
    "empty-tool-name": ("", {"command": "ls"}),
    "tool-name-with-space": ("ba sh", {"command": "ls"}),
    "input-not-an-object": ("bash", ["ls"]),
    "too-deep": ("bash", {"nested": None}),  # filled in below
    "provider-panics": ("bash", {"behaviour": "panic"}),
    "provider-loops": ("bash", {"behaviour": "infinite_loop"}),
    "provider-bad-output": ("bash", {"behaviour": "invalid_metadata"}),
}


def _deep(levels):
    value = {}
    node = value
    for _ in range(levels):
        node["a"] = {}
        node = node["a"]
    return value


CALLS["too-deep"] = ("bash", {"nested": _deep(80)})


def comparable(evaluation):
    """What must be equal between two answers to the same call: everything
    but timings, the generation's number and the clock."""
    stages = [{k: v for k, v in stage.items() if k not in ("duration_us", "fuel_used")} for stage in evaluation.stages]
    return {
        "verdict": evaluation.verdict,
        "allow": evaluation.allow,
        "reasons": evaluation.reasons,
        "policy_id": evaluation.policy_id,
        "metadata": evaluation.metadata,
        "decided_by": evaluation.decided_by,
        "interaction_mode": evaluation.interaction_mode,
        "stages": stages,
        "keys": sorted(evaluation.raw),
    }


RESPONSE = {
    "message": {
        "tool_calls": [
            {"id": "call_1", "name": "write_file", "args": {"path": "notes.md", "content": "x"}},
            {"id": "call_2", "name": "bash", "args": {"command": "git status"}},
        ]
    }
}


def codes(evaluation):
    return [r.code for r in evaluation.reasons]


@pytest.fixture(scope="module")
def parity_daemon(tmp_path_factory):
    directory = tmp_path_factory.mktemp("warden-parity")
    config = directory / "warden.yaml"
    config.write_text(PARITY)
    d = Daemon(directory, config=config)
    yield d
    d.stop()


@pytest.fixture(scope="module")
def parity_warden(parity_daemon, tmp_path_factory):
    return Warden.from_config(parity_daemon.config, data_dir=tmp_path_factory.mktemp("warden-inprocess"))


@pytest.fixture
def allowlist(tmp_path):
    return Warden.from_string(f"guardrails:\n  providers:\n{ALLOWLIST}\n", data_dir=tmp_path / "data")


# --- made from a file, text or a dict ---------------------------------------------------


def test_from_config_loads_a_file_and_judges_calls(tmp_path):
    config = tmp_path / "warden.yaml"
    config.write_text(f"guardrails:\n  providers:\n{ALLOWLIST}\n")
    warden = Warden.from_config(config, data_dir=tmp_path / "data")
    decision = warden.evaluate("bash", {"command": "git status"})
    assert decision.verdict == "allow" and decision.allow
    assert decision.decided_by == "provider:allowlist"
    health = warden.health()
    # The SHA-256 of the configuration the generation was loaded from, as the daemon's.
    assert len(health.pop("config_sha256")) == 64
    assert health == {"status": "ok", "generation": decision.generation, "providers": 1}


def test_from_string_resolves_relative_paths_from_base_dir(tmp_path):
    text = (
        "guardrails:\n  providers:\n    - {name: asker, wasm: hostile.wasm,"
        " config: {behaviour: verdict, verdict: ask, code: test.needs_human}}\n"
    )
    warden = Warden.from_string(text, base_dir=GUESTS, data_dir=tmp_path)
    decision = warden.evaluate("bash", {"command": "ls"})
    assert decision.verdict == "ask" and codes(decision) == ["test.needs_human"]


def test_from_dict_takes_the_files_data(tmp_path):
    config = {
        "guardrails": {
            "providers": [
                {"name": "allowlist", "wasm": "builtin:allowlist", "config": {"allowed_tools": ["read_file"]}}
            ]
        }
    }
    warden = Warden.from_dict(config, data_dir=tmp_path)
    assert warden.evaluate("read_file", {"path": "a"}).allow
    assert codes(warden.evaluate("bash", {"command": "ls"})) == ["oap.tool_not_allowed"]


def test_the_data_directory_holds_the_approval_store(tmp_path):
    warden = Warden.from_string("{}", data_dir=tmp_path / "state")
    assert warden.data_dir == str(tmp_path / "state")
    assert (tmp_path / "state").is_dir()


# --- a bad configuration is refused, saying what and where -------------------------------


def test_an_unknown_key_is_refused_naming_the_file_the_key_and_the_line(tmp_path):
    config = tmp_path / "warden.yaml"
    config.write_text(
        "guardrails:\n  providers:\n    - name: allowlist\n      wasm: builtin:allowlist\n      limits: {fule: 10}\n"
    )
    with pytest.raises(WardenConfigError) as err:
        Warden.from_config(config, data_dir=tmp_path / "data")
    assert err.value.file == str(config)
    assert err.value.key == "guardrails.providers[0].limits.fule"
    assert "unknown field `fule`" in err.value.reason and err.value.line == 5
    assert str(err.value).startswith(f"{config}: guardrails.providers[0].limits.fule: ")


def test_a_bad_value_in_text_is_refused_with_its_key():
    with pytest.raises(WardenConfigError) as err:
        Warden.from_string("guardrails:\n  fail_closed: maybe\n")
    assert err.value.file == "<string>" and err.value.key == "guardrails.fail_closed"


def test_a_bad_value_in_a_dict_is_refused_with_its_key(tmp_path):
    with pytest.raises(WardenConfigError) as err:
        Warden.from_dict({"permissions": {"mode": "yolo"}}, data_dir=tmp_path)
    assert err.value.file == "<dict>" and err.value.key == "permissions.mode"
    assert "yolo" in str(err.value) and "line" not in str(err.value) and err.value.line is None


def test_a_missing_file_is_refused_naming_it(tmp_path):
    with pytest.raises(WardenConfigError, match=r"cannot read .*nowhere\.yaml"):
        Warden.from_config(tmp_path / "nowhere.yaml")


def test_a_provider_that_cannot_be_loaded_is_refused_naming_it(tmp_path):
    text = "guardrails:\n  providers:\n    - {name: ghost, wasm: missing.wasm}\n"
    with pytest.raises(WardenConfigError, match=r"missing\.wasm"):
        Warden.from_string(text, base_dir=tmp_path, data_dir=tmp_path)


def test_a_provider_that_refuses_its_configuration_is_refused_naming_it(tmp_path):
    text = f"guardrails:\n  providers:\n    - {{name: picky, wasm: {HOSTILE}, config: {{behaviour: refuse_config}}}}\n"
    with pytest.raises(WardenConfigError, match="provider 'picky' could not be configured"):
        Warden.from_string(text, data_dir=tmp_path)


# --- the daemon's answers -----------------------------------------------------------------


@pytest.mark.parametrize("name", list(CALLS))
def test_the_answer_is_the_daemons_for_the_same_call(parity_daemon, parity_warden, name):
    tool_name, tool_input = CALLS[name]
    daemon = comparable(WardenClient(parity_daemon.url, INTERNAL).evaluate(tool_name, tool_input))
    local = comparable(parity_warden.evaluate(tool_name, tool_input))
    if name == "too-deep":
        # The daemon refuses it while reading the body, and its message names
        # its HTTP limit (server.limits.max_json_depth); the code is the same.
        assert [r.code for r in local.pop("reasons")] == [r.code for r in daemon.pop("reasons")]
    assert local == daemon


def test_the_evaluation_is_the_clients_reading_of_the_same_answer(parity_warden):
    from warden.client import Evaluation

    for tool_name, tool_input in CALLS.values():
        local = parity_warden.evaluate(tool_name, tool_input)
        assert local == Evaluation.from_json(local.raw) and local.raw == Evaluation.from_json(local.raw).raw


def test_an_evaluation_made_in_process_pickles_and_copies_with_its_deferred_fields(parity_warden):
    import copy
    import pickle

    local = parity_warden.evaluate("bash", {"command": "git push origin main"})
    for again in (pickle.loads(pickle.dumps(local)), copy.deepcopy(local), copy.copy(local)):
        assert again == local and again.raw == local.raw and again.stages == local.stages
        assert "_deferred" not in again.__dict__


def test_an_evaluation_made_in_process_has_no_attributes_beyond_the_clients(parity_warden):
    local = parity_warden.evaluate("bash", {"command": "ls"})
    with pytest.raises(AttributeError, match="judged_at"):
        local.judged_at  # noqa: B018
    assert local.stages is local.stages  # made once, on first read


def test_no_decision_log_id_in_process(parity_warden):
    assert parity_warden.evaluate("bash", {"command": "ls"}).decision_id is None


def test_the_answers_cover_allow_deny_and_ask(parity_warden):
    verdicts = {name: parity_warden.evaluate(*CALLS[name]).verdict for name in ("allow", "native-deny", "rule-ask")}
    assert verdicts == {"allow": "allow", "native-deny": "deny", "rule-ask": "ask"}


def test_a_malformed_call_gets_the_daemons_intake_deny(parity_warden):
    decision = parity_warden.evaluate("ba sh", {"command": "ls"})
    assert decision.verdict == "deny" and decision.decided_by == "intake"
    assert codes(decision) == ["oap.invalid_tool_name"]


def test_evaluate_call_takes_the_daemons_body(parity_daemon, parity_warden):
    body = {"tool_name": "bash", "tool_input": {"command": "git status"}, "tool_call_id": "call-1"}
    daemon = WardenClient(parity_daemon.url, INTERNAL).evaluate_call(body)
    assert comparable(parity_warden.evaluate_call(body)) == comparable(daemon)


def test_a_body_with_an_unknown_key_is_refused_as_the_daemon_refuses_it(parity_daemon, parity_warden):
    body = {"tool_name": "bash", "tool_input": {}, "tool_kind": "shell"}
    with pytest.raises(WardenHTTPError) as daemon:
        WardenClient(parity_daemon.url, INTERNAL).evaluate_call(body)
    with pytest.raises(WardenHTTPError) as local:
        parity_warden.evaluate_call(body)
    assert (
        (local.value.status, local.value.code) == (daemon.value.status, daemon.value.code) == (400, "invalid_request")
    )
    assert "tool_kind" in local.value.message


def test_an_unknown_context_key_is_a_400_naming_it(parity_daemon, parity_warden):
    with pytest.raises(WardenHTTPError) as daemon:
        WardenClient(parity_daemon.url, INTERNAL).evaluate("bash", {}, context={"colour": "red"})
    with pytest.raises(WardenHTTPError) as local:
        parity_warden.evaluate("bash", {}, context={"colour": "red"})
    assert (local.value.status, local.value.code) == (daemon.value.status, daemon.value.code)
    assert "colour" in local.value.message


def test_the_interaction_answer_is_the_daemons(parity_daemon, parity_warden):
    query = ({"interaction_mode": "scheduled"}, ["bash", "ask_clarification", "write_file"])
    daemon = WardenClient(parity_daemon.url, INTERNAL).interaction(*query)
    local = parity_warden.interaction(*query)
    assert daemon.pop("caller")["role"] == "internal"
    assert local.pop("caller") == {"token": "local", "role": "internal"}
    assert local == daemon


def test_a_gate_outcome_is_the_daemons(parity_daemon, parity_warden):
    daemon = WardenClient(parity_daemon.url, INTERNAL).submit_tool_calls("shape", "run-1", RESPONSE)
    local = parity_warden.submit_tool_calls("shape", "run-1", RESPONSE)
    # Ids are made afresh for each pause; everything else must agree.
    for outcome in (daemon, local):
        assert outcome.pop("approval_id").startswith("apr_")
        outcome.pop("generation")
        for item in outcome["requests"] + outcome["calls"]:
            item.pop("request_id", None)
    assert local["run_state"] == "waiting_for_input"
    assert local == daemon


def test_decide_turns_a_refusal_into_a_deny(parity_warden):
    decision = parity_warden.decide({"tool_name": "bash", "tool_input": {}, "context": {"colour": "red"}})
    assert decision.verdict == "deny" and codes(decision) == ["warden.refused"]


def test_an_unencodable_argument_is_the_clients_deny_naming_it(parity_daemon, parity_warden):
    daemon = WardenClient(parity_daemon.url, INTERNAL).decide(
        {"tool_name": "bash", "tool_input": {"timeout": math.nan}}
    )
    local = parity_warden.evaluate("bash", {"timeout": math.nan})
    assert local.verdict == "deny" and codes(local) == codes(daemon) == ["warden.unencodable_input"]
    assert local.reasons[0].message == daemon.reasons[0].message
    assert local.reasons[0].message.startswith("tool_input.timeout: nan is not a JSON number")


def test_a_lone_surrogate_is_denied_naming_where(parity_warden):
    decision = parity_warden.evaluate("bash", {"args": ["ok", "\ud800"]})
    assert codes(decision) == ["warden.unencodable_input"]
    assert decision.reasons[0].message.startswith("tool_input.args[1]: the text holds a lone surrogate")


def test_a_call_larger_than_the_daemon_takes_is_denied(parity_warden):
    decision = parity_warden.evaluate("bash", {"command": "x" * (1 << 20)})
    assert decision.verdict == "deny" and codes(decision) == ["warden.input_too_large"]


def test_the_internal_caller_may_set_the_interaction_mode(parity_warden):
    decision = parity_warden.evaluate(
        "bash", {"command": "git push origin main"}, context={"interaction_mode": "scheduled"}
    )
    assert decision.interaction_mode == "scheduled"
    assert decision.verdict == "deny" and codes(decision)[0] == "warden.ask_unavailable"


def test_an_agent_caller_may_not(parity_daemon, tmp_path):
    warden = Warden.from_config(parity_daemon.config, data_dir=tmp_path, internal=False)
    decision = warden.evaluate("bash", {"command": "ls"}, context={"interaction_mode": "scheduled"})
    assert decision.interaction_mode == "interactive"
    assert "warden.context_keys_dropped" in codes(decision)
    assert not warden.is_internal() and warden.interaction()["caller"] == {"token": "local", "role": "agent"}


# --- fail closed --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "behaviour, detail",
    [
        ("panic", "warden.trap"),
        ("unreachable", "warden.trap"),
        ("infinite_loop", "warden.timeout"),
        ("invalid_metadata", "warden.invalid_decision"),
    ],
)
def test_a_failing_provider_is_a_deny_and_the_next_call_works(parity_warden, behaviour, detail):
    decision = parity_warden.evaluate("bash", {"behaviour": behaviour})
    assert decision.verdict == "deny" and codes(decision)[0] == "oap.evaluator_error"
    assert decision.stages[-1]["error_detail"] == detail
    assert parity_warden.evaluate("bash", {"command": "git status"}).allow


def test_a_provider_set_to_fail_open_lets_its_failure_pass(tmp_path):
    provider = f"{{name: flaky, wasm: {HOSTILE}, on_error: allow, config: {{behaviour: panic}}}}"
    text = f"guardrails:\n  providers:\n    - {provider}\n"
    warden = Warden.from_string(text, data_dir=tmp_path)
    assert warden.evaluate("bash", {"command": "ls"}).allow


# --- the approval gate, in-process ------------------------------------------------------------


def approve(outcome):
    return {"decisions": [{"request_id": r["request_id"], "decision": "approve"} for r in outcome["requests"]]}


def test_a_listed_call_pauses_and_a_relayed_answer_resumes_it(parity_daemon, tmp_path):
    warden = Warden.from_config(parity_daemon.config, data_dir=tmp_path)
    outcome = warden.submit_tool_calls("thread 1", "run-1", RESPONSE)
    assert outcome["run_state"] == "waiting_for_input"
    [pending] = warden.approvals("thread 1")
    assert pending["approval_id"] == outcome["approval_id"]
    # The thread waits for a human: nothing new starts on it.
    blocked = warden.evaluate("bash", {"command": "ls"}, context={"thread_id": "thread 1"})
    assert codes(blocked) == ["warden.approval_pending"] and blocked.metadata["approval_id"] == outcome["approval_id"]
    resolution = warden.resume("thread 1", outcome["approval_id"], approve(outcome), reviewer="alice")
    assert [c["status"] for c in resolution["calls"]] == ["run", "run"]
    assert resolution["reviewer"] == "alice" and resolution["replayed"] is False
    assert warden.approvals("thread 1") == []
    assert warden.evaluate("bash", {"command": "ls"}, context={"thread_id": "thread 1"}).allow


def test_the_same_answer_relayed_again_is_a_replay(parity_daemon, tmp_path):
    warden = Warden.from_config(parity_daemon.config, data_dir=tmp_path)
    outcome = warden.submit_tool_calls("t-3", "run-1", RESPONSE)
    first = warden.resume("t-3", outcome["approval_id"], approve(outcome), reviewer="alice", idempotency_key="k-1")
    again = warden.resume("t-3", outcome["approval_id"], approve(outcome), reviewer="alice", idempotency_key="k-1")
    assert first["replayed"] is False and again["replayed"] is True


def test_a_resume_must_name_the_human(parity_daemon, tmp_path):
    warden = Warden.from_config(parity_daemon.config, data_dir=tmp_path)
    outcome = warden.submit_tool_calls("t-4", "run-1", RESPONSE)
    with pytest.raises(WardenHTTPError) as err:
        warden.resume("t-4", outcome["approval_id"], approve(outcome))
    assert err.value.status == 422 and err.value.code == "invalid_decision"


def test_a_pause_outlives_the_warden_that_made_it(parity_daemon, tmp_path):
    first = Warden.from_config(parity_daemon.config, data_dir=tmp_path)
    outcome = first.submit_tool_calls("t-5", "run-1", RESPONSE)
    again = Warden.from_config(parity_daemon.config, data_dir=tmp_path)
    [pending] = again.approvals("t-5")
    assert pending["approval_id"] == outcome["approval_id"]


def test_a_grant_given_at_resume_is_listed_and_revoked(parity_daemon, tmp_path):
    warden = Warden.from_config(parity_daemon.config, data_dir=tmp_path)
    outcome = warden.submit_tool_calls("t-6", "run-1", RESPONSE)
    answer = approve(outcome)
    answer["decisions"][0]["grant"] = {"scope": "thread", "minutes": 10}
    warden.resume("t-6", outcome["approval_id"], answer, reviewer="alice")
    [grant] = warden.grants()
    revoked = warden.revoke_grant(grant["grant_id"], reviewer="alice")
    assert revoked["grant_id"] == grant["grant_id"] and warden.grants() == []


# --- reload ------------------------------------------------------------------------------------


def test_reload_swaps_in_the_changed_file(tmp_path):
    config = tmp_path / "warden.yaml"
    config.write_text(f"guardrails:\n  providers:\n{ALLOWLIST}\n")
    warden = Warden.from_config(config, data_dir=tmp_path / "data")
    assert codes(warden.evaluate("delete_database", {})) == ["oap.tool_not_allowed"]
    before = warden.health()["generation"]
    config.write_text(
        "guardrails:\n  providers:\n"
        "    - {name: allowlist, wasm: builtin:allowlist, config: {allowed_tools: [delete_database]}}\n"
    )
    report = warden.reload()
    assert report["previous_generation"] == before and report["generation"] > before
    assert [p["name"] for p in report["providers"]] == ["allowlist"]
    assert warden.evaluate("delete_database", {}).allow


def test_reload_reads_the_same_file_after_a_change_of_directory(tmp_path, monkeypatch):
    (tmp_path / "warden.yaml").write_text(f"guardrails:\n  providers:\n{ALLOWLIST}\n")
    monkeypatch.chdir(tmp_path)
    warden = Warden.from_config("warden.yaml", data_dir="data")
    monkeypatch.chdir(tmp_path.parent)
    assert warden.data_dir == str(tmp_path / "data")
    report = warden.reload()
    assert report["generation"] > report["previous_generation"]


def test_a_failed_reload_keeps_the_running_set(tmp_path):
    config = tmp_path / "warden.yaml"
    config.write_text(f"guardrails:\n  providers:\n{ALLOWLIST}\n")
    warden = Warden.from_config(config, data_dir=tmp_path / "data")
    generation = warden.health()["generation"]
    config.write_text("guardrails:\n  providers: [{name: x, wasm: nowhere.wasm}]\n")
    with pytest.raises(WardenHTTPError) as err:
        warden.reload()
    assert err.value.status == 422 and err.value.code == "reload_failed"
    assert f"generation {generation} keeps serving" in err.value.message
    assert warden.health()["generation"] == generation
    assert warden.evaluate("bash", {"command": "ls"}).allow


def test_providers_lists_the_live_set(allowlist):
    listed = allowlist.providers()
    [provider] = listed["providers"]
    assert provider["name"] == "allowlist" and len(provider["digest"]) == 64
    assert listed["generation"] == allowlist.health()["generation"]


# --- threads and asyncio ---------------------------------------------------------------------------


def slow_provider(ms):
    """A provider that spins for `ms` of wall-clock time, then allows; two instances."""
    return (
        f"guardrails:\n  providers:\n    - {{name: slow, wasm: {HOSTILE}, config: {{behaviour: slow, ms: {ms}}},"
        " limits: {timeout_ms: 5000, fuel: 1125899906842624, pool_size: 2}}\n"
    )


def test_the_gil_is_released_while_a_provider_works(tmp_path):
    # A provider that spins for 400 ms of wall-clock time. While the main
    # thread waits for it inside Rust, a Python thread counts; it can only run
    # Python code if the call released the GIL.
    text = slow_provider(400)
    warden = Warden.from_string(text, data_dir=tmp_path)
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.monotonic())

    counter = threading.Thread(target=count)
    counter.start()
    try:
        started = time.monotonic()
        decision = warden.evaluate("bash", {"command": "ls"})
        ended = time.monotonic()
    finally:
        stop.set()
        counter.join()
    assert decision.allow and ended - started >= 0.4
    # Ticks well inside the call (away from its edges, where the interpreter
    # may switch threads either way): none if the GIL was held throughout.
    inside = [t for t in ticks if started + 0.1 < t < ended - 0.1]
    assert len(inside) > 100


def test_two_threads_judge_at_once(tmp_path):
    text = slow_provider(300)
    warden = Warden.from_string(text, data_dir=tmp_path)
    warden.evaluate("bash", {"command": "warm"})
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(warden.evaluate("bash", {"command": "ls"}))) for _ in range(2)
    ]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Two 300 ms calls in well under 600 ms: they ran at the same time.
    assert len(results) == 2 and all(r.allow for r in results)
    assert time.monotonic() - started < 0.55


def test_threads_judging_fast_calls_at_once_each_get_their_own_answers(allowlist):
    # Each thread takes the GIL back after every call, waiting for the others'
    # turns (crates/python/src/gil.rs): none may stall, and no answer may go
    # to another call.
    wrong = []

    def judge(worker):
        for i in range(1500):
            tool = "bash" if (i + worker) % 2 else "rm"
            decision = allowlist.evaluate(tool, {"command": f"echo {worker} {i}"})
            if decision.allow != (tool == "bash"):
                wrong.append((worker, i, tool, decision.verdict))

    threads = [threading.Thread(target=judge, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads) and wrong == []


def test_aevaluate_answers_as_evaluate(allowlist):
    async def many():
        return await asyncio.gather(*(allowlist.aevaluate("bash", {"command": str(i)}) for i in range(8)))

    decisions = asyncio.run(many())
    assert all(d.allow and d.decided_by == "provider:allowlist" for d in decisions)
    denied = asyncio.run(allowlist.aevaluate("rm", {"path": "/"}))
    assert codes(denied) == ["oap.tool_not_allowed"]


def test_adecide_answers_as_decide(allowlist):
    decision = asyncio.run(allowlist.adecide({"tool_name": "rm", "tool_input": {}}))
    assert codes(decision) == ["oap.tool_not_allowed"]


# --- the same methods as the HTTP client -----------------------------------------------------------


def test_warden_has_every_public_method_of_the_client_with_the_same_signature():
    import inspect

    for name, method in inspect.getmembers(WardenClient, inspect.isfunction):
        if name.startswith("_") or name in ("for_harness",):
            continue
        assert hasattr(Warden, name), name
        assert inspect.signature(getattr(Warden, name)) == inspect.signature(method), name
