"""The client fails closed by itself: every failure once a request was sent is a
deny naming its cause, a call JSON cannot carry is never sent, and only a daemon
that cannot be reached at all raises (nothing was sent)."""

import math
import socket
import threading
import time

import pytest
from conftest import ADMIN, AGENT

from warden import WardenClient, WardenUnavailable


def codes(evaluation):
    return [r.code for r in evaluation.reasons]


def call(**tool_input):
    return {"tool_name": "bash", "tool_input": tool_input or {"command": "ls"}}


class Server:
    """A TCP server that accepts and then misbehaves as told."""

    def __init__(self, behaviour):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.behaviour = behaviour
        self.connections = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections.append(conn)
            conn.recv(65536)
            if self.behaviour == "close":
                conn.close()
            elif self.behaviour == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                conn.close()
            elif self.behaviour == "garbage":
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello")
            # "hang": keep the connection open, answer nothing

    def close(self):
        self.sock.close()
        for conn in self.connections:
            conn.close()


@pytest.mark.parametrize("behaviour", ["close", "reset", "garbage"])
def test_a_failure_after_sending_is_a_deny(behaviour):
    server = Server(behaviour)
    try:
        decision = WardenClient(server.url, AGENT, timeout=2).decide(call())
    finally:
        server.close()
    assert decision.verdict == "deny" and not decision.allow
    assert codes(decision) == ["warden.no_answer"]
    assert decision.decided_by == "client"


def test_a_hung_daemon_is_a_deny_within_the_timeout():
    server = Server("hang")
    started = time.monotonic()
    try:
        decision = WardenClient(server.url, AGENT, timeout=0.3).decide(call())
    finally:
        server.close()
    assert codes(decision) == ["warden.no_answer"]
    assert time.monotonic() - started < 2


def test_an_unreachable_daemon_raises_nothing_was_sent():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(WardenUnavailable):
        WardenClient(f"http://127.0.0.1:{port}", AGENT).decide(call())


def test_an_unresolvable_name_raises_nothing_was_sent():
    with pytest.raises(WardenUnavailable):
        WardenClient("http://warden.invalid:8787", AGENT).decide(call())


def test_a_wrong_token_is_a_deny_saying_so(daemon):
    decision = WardenClient(daemon.url, "not-the-token-0123456789").decide(call())
    assert codes(decision) == ["warden.unauthorized"]
    assert "token" in decision.reasons[0].message


def test_a_missing_token_is_a_deny(daemon):
    decision = WardenClient(daemon.url, "", token_env="WARDEN_NO_SUCH_VARIABLE").decide(call())
    assert codes(decision) == ["warden.unauthorized"]


def test_a_token_of_the_wrong_role_is_a_deny(daemon):
    assert codes(WardenClient(daemon.url, ADMIN).decide(call())) == ["warden.forbidden"]


def test_a_malformed_request_the_harness_built_is_a_deny(daemon):
    decision = WardenClient(daemon.url, AGENT).decide({"tool_name": "bash", "tool_inptu": {}})
    assert codes(decision) == ["warden.refused"] and "tool_inptu" in decision.reasons[0].message


@pytest.mark.parametrize(
    "value, where",
    [(math.nan, "tool_input.timeout"), (math.inf, "tool_input.timeout"), ("\ud800", "tool_input.timeout")],
)
def test_a_value_json_cannot_carry_is_a_local_deny_naming_it(daemon, value, where):
    before = len(daemon.decisions())
    decision = WardenClient(daemon.url, AGENT).decide(call(command="cat ~/.ssh/id_rsa", timeout=value))
    assert codes(decision) == ["warden.unencodable_input"]
    assert where in decision.reasons[0].message
    assert len(daemon.decisions()) == before, "nothing was sent"


def test_a_surrogate_in_a_key_is_a_local_deny(daemon):
    decision = WardenClient(daemon.url, AGENT).decide(call(**{"x\udc00": 1}))
    assert codes(decision) == ["warden.unencodable_input"]


def test_a_call_larger_than_the_daemon_takes_is_a_local_deny(daemon):
    client = WardenClient(daemon.url, AGENT, max_request_bytes=4096)
    decision = client.decide(call(command="x" * 5000))
    assert codes(decision) == ["warden.input_too_large"]


def test_what_the_daemon_refuses_as_a_decision_is_its_decision(daemon):
    decision = WardenClient(daemon.url, AGENT).decide({"tool_name": "read file", "tool_input": {}})
    assert codes(decision) == ["oap.invalid_tool_name"]
    assert decision.decided_by == "intake" and decision.decision_id
