"""Fixtures for the MCP gateway tests: the `warden` binary, the servers, and a
raw JSON-RPC peer for what an SDK client would never send."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


@pytest.fixture(scope="session")
def warden_bin() -> str:
    path = os.environ.get("WARDEN_BIN", str(ROOT / "target" / "debug" / "warden"))
    assert os.access(path, os.X_OK), f"no warden binary at {path} (cargo build -p warden-cli)"
    return path


@pytest.fixture(scope="session")
def node_dir() -> Path:
    """Where scripts/test installs the npm packages (npm ci from tests/mcp/node)."""
    return Path(os.environ.get("MCP_NODE_DIR", str(ROOT / "target" / "mcp-node")))


@pytest.fixture(scope="session")
def fs_server(node_dir: Path) -> list[str]:
    """`@modelcontextprotocol/server-filesystem`, installed by scripts/test with npm ci."""
    entry = node_dir / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    assert entry.is_file(), f"server-filesystem is not installed under {node_dir} (scripts/test installs it)"
    return ["node", str(entry)]


@pytest.fixture(scope="session")
def rmcp_client() -> str:
    """rmcp's client (tests/mcp/rmcp-client), built by scripts/test into
    target/rmcp-client."""
    default = ROOT / "target" / "rmcp-client" / "debug" / "warden-rmcp-client"
    binary = Path(os.environ.get("RMCP_CLIENT", str(default)))
    assert binary.is_file(), f"rmcp's client is not built at {binary} (scripts/test builds it)"
    return str(binary)


@pytest.fixture(scope="session")
def py_server() -> list[str]:
    return [sys.executable, str(HERE / "py_server.py")]


POLICY = """\
permissions:
  mode: full_auto
  deny: ["mcp__fs__move_file", "mcp__py__shout"]
"""


@pytest.fixture()
def config(tmp_path: Path) -> Path:
    path = tmp_path / "warden.yaml"
    path.write_text(POLICY)
    return path


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    """The directory server-filesystem serves, with one file in it."""
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "hello.txt").write_text("hello from the server\n")
    return folder


class RawPeer:
    """A client that writes JSON-RPC lines itself, to send what no SDK would."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            bufsize=1,
        )
        # A thread reads, so that a wait has a timeout and no line is left in a buffer.
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def send(self, message: dict[str, Any] | str) -> None:
        assert self.process.stdin is not None
        line = message if isinstance(message, str) else json.dumps(message)
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def line(self, timeout: float = 30.0) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"nothing from the proxy in {timeout} s") from None
        assert line is not None, "the proxy closed its stdout"
        return line

    def message(self) -> dict[str, Any]:
        return json.loads(self.line())

    def answer_to(self, id: Any) -> dict[str, Any]:
        """The response to request `id`, skipping notifications."""
        while True:
            message = self.message()
            if message.get("id") == id and "method" not in message:
                return message

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test-peer", "version": "0"},
                },
            }
        )
        answer = self.answer_to("init")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=30)


@pytest.fixture()
def raw_peer():
    peers: list[RawPeer] = []

    def start(command: list[str], env: dict[str, str] | None = None) -> RawPeer:
        peer = RawPeer(command, env)
        peers.append(peer)
        return peer

    yield start
    for peer in peers:
        if peer.process.poll() is None:
            peer.process.kill()
            peer.process.wait()


DAEMON_POLICY = """\
permissions:
  mode: full_auto
  deny: ["mcp__py__shout"]
  ask: ["mcp__py__note"]
server:
  tokens:
    - {name: mcp-proxy, role: agent, token_env: WARDEN_MCP_TOKEN}
    - {name: alice, role: approver, token_env: WARDEN_APPROVER_TOKEN}
    - {name: ops, role: admin, token_env: WARDEN_ADMIN_TOKEN}
decision_log:
  enabled: true
  path: decisions.jsonl
"""

DAEMON_TOKEN = "mcp-proxy-test-token-0123456789abcdef"
APPROVER_TOKEN = "mcp-approver-test-token-0123456789abcdef"
ADMIN_TOKEN = "mcp-admin-test-token-0123456789abcdef0"


class Daemon:
    """A running `warden serve`, with one agent token for the proxy."""

    def __init__(self, warden: str, directory: Path, policy: str = DAEMON_POLICY) -> None:
        self.dir = directory
        config = directory / "serve.yaml"
        config.write_text(policy)
        self.stderr = open(directory / "daemon.log", "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [warden, "serve", "--config", str(config), "--listen", "127.0.0.1:0",
             "--data-dir", str(directory / "data"), "--no-watch"],
            cwd=directory,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "WARDEN_MCP_TOKEN": DAEMON_TOKEN, "WARDEN_APPROVER_TOKEN": APPROVER_TOKEN,
                 "WARDEN_ADMIN_TOKEN": ADMIN_TOKEN},
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().decode().strip()
        prefix = "warden: listening on "
        if not line.startswith(prefix):
            self.process.wait()
            raise RuntimeError(f"the daemon did not start: {line!r}\n{(directory / 'daemon.log').read_text()}")
        self.url = line[len(prefix):]

    def logged(self, decision_id: str) -> dict[str, Any]:
        """The decision log's entry with this id (the log is written in the
        background: looked for until a deadline)."""
        path = self.dir / "data" / "decisions.jsonl"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            lines = path.read_text().splitlines() if path.exists() else []
            for entry in map(json.loads, lines):
                if decision_id in (entry.get("decision_id"), entry.get("id")):
                    return entry
            time.sleep(0.05)
        raise AssertionError(f"decision {decision_id} is not in the log")

    def api(self, method: str, path: str, body: Any = None, token: str = APPROVER_TOKEN) -> Any:
        """A call to the daemon's API (as the approver, by default)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def approve(self, thread_id: str, approval_id: str) -> Any:
        """A human approves every call of the approval, through the API."""
        page = self.api("GET", f"/v1/threads/{thread_id}/approvals")
        (approval,) = [a for a in page["approvals"] if a["approval_id"] == approval_id]
        decisions = [{"request_id": r["request_id"], "decision": "approve"} for r in approval["requests"]]
        return self.api("POST", f"/v1/threads/{thread_id}/approvals/{approval_id}/resume", {"decisions": decisions})

    def reload(self, policy: str) -> Any:
        """A hot swap: the config file rewritten, then reloaded by an admin."""
        (self.dir / "serve.yaml").write_text(policy)
        return self.api("POST", "/v1/admin/reload", token=ADMIN_TOKEN)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        assert self.process.stdout is not None
        self.process.stdout.close()
        self.stderr.close()


@pytest.fixture()
def daemon(warden_bin: str, tmp_path: Path):
    directory = tmp_path / "daemon"
    directory.mkdir()
    running = Daemon(warden_bin, directory)
    yield running
    running.stop()


@pytest.fixture()
def start_daemon(warden_bin: str, tmp_path: Path):
    """Starts a daemon with a policy of the test's (`DAEMON_POLICY` plus its own lines)."""
    running: list[Daemon] = []

    def start(policy: str) -> Daemon:
        directory = tmp_path / f"daemon-{len(running)}"
        directory.mkdir()
        running.append(Daemon(warden_bin, directory, policy))
        return running[-1]

    yield start
    for daemon in running:
        daemon.stop()
