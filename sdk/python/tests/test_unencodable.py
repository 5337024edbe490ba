"""Arguments no JSON can carry because of their shape (a dict or list that
contains itself, nesting past Python's recursion limit) are a deny naming the
cause on every path, never an exception that escapes to the harness: evaluate
and submit_tool_calls, over HTTP and in-process, through the approval relay and
the DeerFlow provider. (A harness such as DeerFlow with ``fail_closed: false``
runs the call of a provider that raises.)"""

import pytest
from conftest import AGENT, INTERNAL, require_native

from warden import WardenClient, WardenUnsendable
from warden.approval import Relay
from warden.deerflow import GuardrailRequest, WardenProvider

TOO_DEEP = "warden.input_too_deep"


def recursive_dict():
    args = {"command": "cat ~/.ssh/id_rsa"}
    args["again"] = args
    return args


def recursive_list():
    argv = ["cat", "~/.ssh/id_rsa"]
    argv.append(argv)
    return {"command": "cat ~/.ssh/id_rsa", "argv": argv}


def nested(levels):
    value = {}
    for _ in range(levels):
        value = {"a": value}
    return {"command": "cat ~/.ssh/id_rsa", "nested": value}


SHAPES = {
    "recursive-dict": recursive_dict,
    "recursive-list": recursive_list,
    "nested-1500": lambda: nested(1500),
    "nested-5000": lambda: nested(5000),
}

shapes = pytest.mark.parametrize("shape", SHAPES)


def codes(evaluation):
    return [r.code for r in evaluation.reasons]


def response(args):
    return {"message": {"tool_calls": [{"id": "c1", "name": "bash", "args": args}]}}


def never_interrupted(value):
    raise AssertionError(f"nothing may wait for a human: {value!r}")


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    inprocess = require_native()
    directory = tmp_path_factory.mktemp("warden-unencodable")
    return inprocess.Warden.from_string(
        "guardrails:\n  providers:\n    - name: allowlist\n      wasm: builtin:allowlist\n"
        "      config: {allowed_tools: [bash]}\n",
        data_dir=directory / "data",
    )


@pytest.fixture(params=["http", "in-process"])
def backend(request, daemon):
    """The HTTP client on the daemon, or Warden in this process."""
    if request.param == "http":
        return WardenClient(daemon.url, INTERNAL)
    return request.getfixturevalue("local")


@shapes
def test_evaluate_denies(backend, shape):
    decision = backend.decide({"tool_name": "bash", "tool_input": SHAPES[shape]()})
    assert decision.verdict == "deny" and codes(decision) == [TOO_DEEP]
    assert decision.allow is False


@shapes
def test_evaluate_with_its_arguments_denies(backend, shape):
    decision = backend.evaluate("bash", SHAPES[shape]())
    assert decision.verdict == "deny" and codes(decision) == [TOO_DEEP]


@shapes
def test_submit_tool_calls_refuses_with_the_deny_it_stands_for(backend, shape):
    with pytest.raises(WardenUnsendable) as refused:
        backend.submit_tool_calls("t-unencodable", "run-1", response(SHAPES[shape]()))
    assert codes(refused.value.evaluation) == [TOO_DEEP]


@shapes
def test_the_relay_denies_every_call(backend, shape):
    result = Relay(backend, never_interrupted).judge("t-relay", "run-1", response(SHAPES[shape]())["message"], {})
    assert [(c.id, c.status) for c in result.calls] == [("c1", "denied")]
    assert result.calls[0].reasons[0]["code"] == TOO_DEEP


def test_the_deny_names_where_and_why(daemon):
    decision = WardenClient(daemon.url, AGENT).decide({"tool_name": "bash", "tool_input": recursive_dict()})
    assert decision.reasons[0].message.startswith("tool_input.again: the value contains itself")
    decision = WardenClient(daemon.url, AGENT).decide({"tool_name": "bash", "tool_input": nested(1500)})
    message = decision.reasons[0].message
    assert message.startswith("tool_input.nested.a.a.") and "deeper than 64 levels" in message


@shapes
def test_the_deerflow_provider_denies(daemon, shape):
    provider = WardenProvider(url=daemon.url, token=AGENT, framework="deerflow")
    decision = provider.evaluate(GuardrailRequest(tool_name="bash", tool_input=SHAPES[shape]()))
    assert decision.allow is False
    assert [r.code for r in decision.reasons] == [TOO_DEEP]


def test_any_other_failure_in_the_deerflow_provider_is_a_deny_naming_it(daemon):
    class Broken(WardenClient):
        def decide(self, call):
            raise KeyError("a bug")

    provider = WardenProvider(client=Broken(daemon.url, AGENT), framework="deerflow")
    decision = provider.evaluate(GuardrailRequest(tool_name="bash", tool_input={"command": "ls"}))
    assert decision.allow is False
    assert decision.reasons[0].code == "warden.adapter_failed"
    assert "KeyError" in decision.reasons[0].message and "a bug" in decision.reasons[0].message
