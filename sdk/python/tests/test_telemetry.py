"""OpenTelemetry from the daemon: a real OTLP/HTTP receiver on loopback,
whose requests are decoded with the OpenTelemetry project's own protobuf
classes (``opentelemetry-proto``), gets one trace per judged call, with the
stage spans and the harness's trace id, and the decision log's lines as log
records; no tool argument reaches it; a full export queue is counted in
``/metrics``, not silent."""

from __future__ import annotations

import http.server
import json
import os
import threading
import time
import urllib.request

import pytest
from conftest import AGENT, ALLOWLIST, Daemon

if os.environ.get("WARDEN_REQUIRE_OTLP") == "1":
    import opentelemetry.proto  # noqa: F401 - a failure where it must be installed
otlp_logs = pytest.importorskip("opentelemetry.proto.collector.logs.v1.logs_service_pb2")
otlp_traces = pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")

CANARY = "canary-7f3a9c1e-never-exported"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"


class Receiver:
    """An OTLP/HTTP collector on a free loopback port: keeps each request's
    path and body; ``hold`` makes it answer nothing until released, and it
    answers ``status``."""

    def __init__(self, hold: bool = False, status: int = 200):
        self.requests: list[tuple[str, bytes]] = []
        self.release = threading.Event()
        if not hold:
            self.release.set()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["content-length"]))
                receiver.requests.append((self.path, body))
                receiver.release.wait(timeout=30)
                self.send_response(status)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self):
        spans = []
        for path, body in self.requests:
            if path == "/v1/traces":
                request = otlp_traces.ExportTraceServiceRequest.FromString(body)
                for resource in request.resource_spans:
                    for scope in resource.scope_spans:
                        spans.extend((resource.resource, span) for span in scope.spans)
        return spans

    def log_records(self):
        records = []
        for path, body in self.requests:
            if path == "/v1/logs":
                request = otlp_logs.ExportLogsServiceRequest.FromString(body)
                for resource in request.resource_logs:
                    for scope in resource.scope_logs:
                        records.extend(scope.log_records)
        return records

    def stop(self):
        self.release.set()
        self.server.shutdown()


def attributes(message):
    out = {}
    for kv in message.attributes:
        which = kv.value.WhichOneof("value")
        if which == "array_value":
            out[kv.key] = [v.string_value for v in kv.value.array_value.values]
        else:
            out[kv.key] = getattr(kv.value, which)
    return out


def telemetry(receiver: Receiver, extra: str = "") -> str:
    return f"telemetry:\n  otlp_endpoint: {receiver.url}\n  export_interval_ms: 50\n  logs: true\n{extra}"


def evaluate(daemon: Daemon, body: dict, headers: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"{daemon.url}/v1/evaluate",
        data=json.dumps(body).encode(),
        headers={"authorization": f"Bearer {AGENT}", "content-type": "application/json", **(headers or {})},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def wait_for(condition, seconds: float = 10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("not within the time")


CALL = {
    "tool_name": "bash",
    "tool_input": {"command": f"echo {CANARY}"},
    "tool_call_id": "call-1",
    "context": {"thread_id": "thread-otel", "agent_id": "agent-7"},
}


@pytest.fixture
def traced(tmp_path):
    receiver = Receiver()
    daemon = Daemon(tmp_path / "warden", ALLOWLIST, extra=telemetry(receiver))
    yield daemon, receiver
    daemon.stop()
    receiver.stop()


def test_a_judged_call_is_one_trace_continuing_the_harnesss(traced):
    daemon, receiver = traced
    decision = evaluate(daemon, CALL, {"traceparent": f"00-{TRACE_ID}-{PARENT_SPAN}-01"})
    wait_for(lambda: len(receiver.spans()) >= 2 + len(decision["stages"]))
    spans = [span for _, span in receiver.spans()]
    assert {span.trace_id.hex() for span in spans} == {TRACE_ID}
    (root,) = [span for span in spans if span.parent_span_id.hex() == PARENT_SPAN]
    assert root.name == "execute_tool bash"
    assert root.end_time_unix_nano > root.start_time_unix_nano
    said = attributes(root)
    assert said["gen_ai.tool.name"] == "bash"
    assert said["gen_ai.tool.call.id"] == "call-1"
    assert said["gen_ai.conversation.id"] == "thread-otel"
    assert said["gen_ai.agent.id"] == "agent-7"
    assert said["warden.verdict"] == decision["verdict"]
    assert said["warden.reason_codes"] == [r["code"] for r in decision["reasons"]]
    children = [span for span in spans if span.parent_span_id == root.span_id]
    stages = [stage["stage"] for stage in decision["stages"]]
    assert [span.name for span in children] == ["approval store", *stages]
    for before, after in zip(children, children[1:]):
        assert before.end_time_unix_nano <= after.start_time_unix_nano
    assert root.start_time_unix_nano <= children[0].start_time_unix_nano
    assert children[-1].end_time_unix_nano <= root.end_time_unix_nano
    provider = children[1 + stages.index("provider:allowlist")]
    assert len(attributes(provider)["warden.provider.digest"]) == 64
    assert attributes(provider)["warden.provider.fuel_used"] > 0
    (resource, _) = receiver.spans()[0]
    assert attributes(resource)["service.name"] == "warden"


def test_a_model_response_through_the_gate_is_one_trace_with_a_span_per_call(traced):
    daemon, receiver = traced
    calls = [
        {"id": "c1", "name": "bash", "args": {"command": f"echo {CANARY}"}},
        {"id": "c2", "name": "rm", "args": {"path": f"/{CANARY}"}},
    ]
    request = urllib.request.Request(
        f"{daemon.url}/v1/threads/thread-gate/runs/run-gate/tool-calls",
        data=json.dumps({"message": {"tool_calls": calls}, "context": {}}).encode(),
        headers={
            "authorization": f"Bearer {AGENT}",
            "content-type": "application/json",
            "traceparent": f"00-{TRACE_ID}-{PARENT_SPAN}-01",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        outcome = json.loads(response.read())
    wait_for(lambda: len(receiver.spans()) >= 3)
    spans = [span for _, span in receiver.spans()]
    (root,) = [span for span in spans if span.parent_span_id.hex() == PARENT_SPAN]
    assert root.name == "warden tool_calls" and root.trace_id.hex() == TRACE_ID
    assert attributes(root)["gen_ai.conversation.id"] == "thread-gate"
    children = [span for span in spans if span.parent_span_id == root.span_id]
    said = [(span.name, attributes(span)["warden.status"]) for span in children]
    assert said == [(f"execute_tool {c['name']}", c["status"]) for c in outcome["calls"]]
    assert [attributes(span)["gen_ai.tool.call.id"] for span in children] == ["c1", "c2"]
    traces = [body for path, body in receiver.requests if path == "/v1/traces"]
    assert not any(CANARY.encode() in body for body in traces)


def test_a_call_without_traceparent_starts_a_trace_of_its_own(traced):
    daemon, receiver = traced
    evaluate(daemon, CALL)
    wait_for(lambda: receiver.spans())
    (root,) = [span for _, span in receiver.spans() if not span.parent_span_id]
    assert len(root.trace_id) == 16 and root.trace_id.hex() != TRACE_ID


def test_an_mcp_requests_trace_context_is_continued_without_the_header(traced):
    # `warden mcp` passes a request's `_meta.traceparent` on in the call's context.
    daemon, receiver = traced
    context = {**CALL["context"], "traceparent": f"00-{TRACE_ID}-{PARENT_SPAN}-01"}
    evaluate(daemon, {**CALL, "context": context})
    wait_for(lambda: receiver.spans())
    (root,) = [span for _, span in receiver.spans() if span.parent_span_id.hex() == PARENT_SPAN]
    assert root.trace_id.hex() == TRACE_ID


def test_sample_ratio_zero_sends_no_trace_but_every_line(tmp_path):
    receiver = Receiver()
    daemon = Daemon(tmp_path / "warden", ALLOWLIST, extra=telemetry(receiver, "  sample_ratio: 0\n"))
    try:
        for _ in range(3):
            evaluate(daemon, CALL)
        wait_for(lambda: len(receiver.log_records()) == 3)
        assert receiver.spans() == []
    finally:
        daemon.stop()
        receiver.stop()


def test_each_decision_line_is_a_log_record(traced):
    daemon, receiver = traced
    evaluate(daemon, CALL)
    wait_for(lambda: receiver.log_records())
    (record,) = receiver.log_records()
    line = json.loads(record.body.string_value)
    assert line == {key: value for key, value in daemon.decisions()[0].items() if key != "chain"}


def test_no_tool_argument_reaches_the_collector_in_any_span(traced):
    daemon, receiver = traced
    denied = {**CALL, "tool_name": "rm", "tool_input": {"path": f"/{CANARY}"}}
    for call in (CALL, denied):
        evaluate(daemon, call)
    wait_for(lambda: len({span.trace_id for _, span in receiver.spans()}) == 2)
    traces = [body for path, body in receiver.requests if path == "/v1/traces"]
    assert not any(CANARY.encode() in body for body in traces)


def metric(daemon: Daemon, name: str) -> dict:
    with urllib.request.urlopen(f"{daemon.url}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        line.split("{")[1].split("}")[0]: float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith(name + "{")
    }


def test_what_the_collector_refuses_is_counted_as_failed(tmp_path):
    receiver = Receiver(status=500)
    daemon = Daemon(tmp_path / "warden", ALLOWLIST, extra=telemetry(receiver))
    try:
        evaluate(daemon, CALL)
        wait_for(lambda: metric(daemon, "warden_telemetry_failed_total")['signal="traces"'] > 0)
        assert metric(daemon, "warden_telemetry_exported_total")['signal="traces"'] == 0
    finally:
        daemon.stop()
        receiver.stop()


def test_a_full_export_queue_is_counted_not_silent(tmp_path):
    receiver = Receiver(hold=True)
    daemon = Daemon(tmp_path / "warden", ALLOWLIST, extra=telemetry(receiver, "  buffer: 2\n"))
    try:
        # The first export hangs: what comes after waits in the queue.
        evaluate(daemon, CALL)
        wait_for(lambda: receiver.requests)
        for _ in range(12):
            evaluate(daemon, CALL)
        dropped = metric(daemon, "warden_telemetry_dropped_total")
        assert dropped['signal="traces"'] > 0 and dropped['signal="logs"'] > 0, dropped
        assert "the telemetry queue is full" in (daemon.dir / "stderr.log").read_text()
    finally:
        receiver.release.set()
        daemon.stop()
        receiver.stop()
