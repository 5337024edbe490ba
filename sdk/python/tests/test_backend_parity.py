"""The daemon (``WardenClient`` over ``/v1/evaluate``) and the in-process core
(``warden.Warden``) give the same decision on the same input where they
differed: object keys that are not strings, lone surrogates in a tool name or
a key, integers past a float's range. Both real backends, one configuration.

Needs the native module (``scripts/build-python-native``); skipped without it,
unless ``WARDEN_REQUIRE_NATIVE=1`` (as ``scripts/test`` sets it)."""

import pytest
from conftest import ALLOWLIST, INTERNAL, TOKENS, Daemon, require_native

from warden import WardenClient

inprocess = require_native()

CONFIG = f"""permissions:
  mode: full_auto
  deny: ["Bash(rm -rf *)"]
guardrails:
  providers:
{ALLOWLIST}
{TOKENS}"""


@pytest.fixture(scope="module")
def backends(tmp_path_factory):
    directory = tmp_path_factory.mktemp("warden-backends")
    config = directory / "warden.yaml"
    config.write_text(CONFIG)
    daemon = Daemon(directory, config=config)
    local = inprocess.Warden.from_config(config, data_dir=directory / "in-process")
    yield WardenClient(daemon.url, INTERNAL), local
    local.close()
    daemon.stop()


def decision(evaluation):
    """What must be the same: the verdict and every reason, code and message."""
    return evaluation.verdict, [(r.code, r.message) for r in evaluation.reasons]


def both(backends, tool_name, tool_input):
    daemon, local = backends
    return decision(daemon.evaluate(tool_name, tool_input)), decision(local.evaluate(tool_name, tool_input))


@pytest.mark.parametrize("key", [1, None, True, 1.5], ids=["int", "none", "bool", "float"])
def test_an_object_key_that_is_not_a_string_is_the_same_deny(backends, key):
    daemon, local = both(backends, "bash", {"command": "ls", "options": {key: "x"}})
    assert daemon == local
    assert daemon[0] == "deny"
    assert daemon[1][0] == (
        "warden.unencodable_input",
        f"tool_input.options.{key!r}: an object key must be a string; JSON cannot carry it, so the call is denied",
    )


def test_a_key_and_a_string_key_of_the_same_text_are_not_merged(backends):
    daemon, local = both(backends, "bash", {"command": "ls", 1: "a", "1": "b"})
    assert daemon == local and daemon[0] == "deny"


def test_a_lone_surrogate_in_the_tool_name_is_the_same_deny(backends):
    daemon, local = both(backends, "ba\ud800sh", {"command": "ls"})
    assert daemon == local
    assert daemon == (
        "deny",
        [
            (
                "warden.unencodable_input",
                "tool_name: the text holds a lone surrogate, which is not Unicode;"
                " JSON cannot carry it, so the call is denied",
            )
        ],
    )


def test_a_lone_surrogate_in_a_key_is_named_the_same_way(backends):
    daemon, local = both(backends, "bash", {"command": "ls", "k\udc00": 1})
    assert daemon == local
    assert daemon[1][0][1].startswith("tool_input.'k\\udc00': the text holds a lone surrogate")
    assert daemon[1][0][1].encode("utf-8")  # the message itself is Unicode


def test_an_integer_past_a_floats_range_is_the_same_deny(backends):
    daemon, local = both(backends, "bash", {"command": "ls", "n": 10**400})
    assert daemon == local
    assert daemon[1][0] == (
        "warden.unencodable_input",
        "tool_input.n: the integer is too large for a JSON number; JSON cannot carry it, so the call is denied",
    )


def test_a_large_integer_a_float_holds_is_judged_alike(backends):
    daemon, local = both(backends, "bash", {"command": "ls", "n": 2**70})
    assert daemon == local and daemon[0] == "allow"


@pytest.mark.parametrize(
    "extra",
    [{}, {"tool_call_id": "call-1", "context": {"thread_id": "t-1", "run_id": None}}],
    ids=["bare", "with-id-and-context"],
)
def test_a_call_over_the_size_limit_is_the_same_deny_with_the_same_size(backends, extra):
    daemon, local = backends
    args = ("bash", {"command": "x" * (1 << 20)})
    sent = decision(daemon.evaluate(*args, **extra))
    judged = decision(local.evaluate(*args, **extra))
    assert sent == judged
    assert sent[1][0][0] == "warden.input_too_large"
    assert sent[1][0][1].endswith("bytes; Warden accepts at most 1048576")
