"""Starts the real Warden daemon for the tests: ``target/debug/warden`` (or
``$WARDEN_BIN``) on a free loopback port, with tokens for each role.

The DeerFlow and LangChain tests need those packages (Python 3.12, the venv
``scripts/test`` makes); elsewhere they are skipped, unless
``WARDEN_REQUIRE_HARNESSES=1`` (as ``scripts/test`` sets it there) makes a
missing package a failure. The in-process tests need the native module
``warden._native`` the same way (``WARDEN_REQUIRE_NATIVE=1``).
"""

import asyncio
import os
import pathlib
import subprocess
from typing import Optional

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
AGENT = "py-agent-token-0123456789abcdef"
RELAY = "py-relay-token-0123456789abcdef"
INTERNAL = "py-internal-token-0123456789abcdef"
ADMIN = "py-admin-token-0123456789abcdef"
APPROVER = "py-approver-token-0123456789abcdef"
GUESTS = ROOT / "target" / "guests" / "wasm32-wasip2" / "wasm-release"

TOKENS = f"""server:
  watch_config: false
  tokens:
    - {{name: deerflow, role: agent, token: {AGENT}}}
    - {{name: gateway, role: agent, relay: true, reviewers: [alice], token: {RELAY}}}
    - {{name: scheduler, role: internal, relay: true, reviewers: [alice], token: {INTERNAL}}}
    - {{name: ops, role: admin, token: {ADMIN}}}
    - {{name: alice, role: approver, token: {APPROVER}}}
"""

#: The example's token variables, for daemons started on examples/deerflow/warden.yaml.
EXAMPLE_ENV = {
    "WARDEN_DEERFLOW_TOKEN": RELAY,
    "WARDEN_SCHEDULER_TOKEN": INTERNAL,
    "WARDEN_APPROVER_TOKEN": APPROVER,
    "WARDEN_ADMIN_TOKEN": ADMIN,
}


def require(module: str):
    """The module, or a skip (a failure where the harness packages must be there)."""
    if os.environ.get("WARDEN_REQUIRE_HARNESSES") == "1":
        return __import__(module)
    return pytest.importorskip(module)


def require_native():
    """``warden.inprocess`` (the native module), or a skip; a failure where it
    must be built (``WARDEN_REQUIRE_NATIVE=1``, as ``scripts/test`` sets it)."""
    if os.environ.get("WARDEN_REQUIRE_NATIVE") == "1":
        import warden.inprocess

        return warden.inprocess
    try:
        import warden.inprocess
    except ImportError as err:
        pytest.skip(f"the native module is not built: {err}", allow_module_level=True)
    return warden.inprocess


def warden_bin() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("WARDEN_BIN", ROOT / "target" / "debug" / "warden"))
    if not path.is_file():
        pytest.fail(f"the warden binary is not built at {path}: run `cargo build -p warden-cli` or set WARDEN_BIN")
    return path


class Daemon:
    """A running ``warden serve``; ``url`` is where it listens."""

    def __init__(
        self, directory: pathlib.Path, providers: str = "", extra: str = "", config: Optional[pathlib.Path] = None
    ):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        if config is None:
            config = self.dir / "warden.yaml"
            config.write_text(f"{extra}guardrails:\n  providers:\n{providers}\n{TOKENS}")
        self.config = config
        self.stderr = open(self.dir / "stderr.log", "wb")  # noqa: SIM115 - the daemon writes it until stop()
        self.process = subprocess.Popen(
            [
                str(warden_bin()),
                "serve",
                "--config",
                str(config),
                "--listen",
                "127.0.0.1:0",
                "--data-dir",
                str(self.dir / "data"),
                "--no-watch",
            ],
            cwd=self.dir,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **EXAMPLE_ENV},
        )
        line = self.process.stdout.readline().decode().strip()
        prefix = "warden: listening on "
        if not line.startswith(prefix):
            self.process.wait()
            raise RuntimeError(f"the daemon did not start: {line!r}\n{(self.dir / 'stderr.log').read_text()}")
        self.url = line[len(prefix) :]

    def decisions(self):
        """The decision log's lines so far."""
        import json
        import time

        time.sleep(0.1)  # the log is written by a background thread every 20 ms
        path = self.dir / "data" / "decisions.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        self.process.stdout.close()
        self.stderr.close()


ALLOWLIST = """    - name: allowlist
      wasm: builtin:allowlist
      config: {allowed_tools: [bash, read_file, web_search, write_file], denied_tools: [rm]}"""


@pytest.fixture(scope="session")
def daemon(tmp_path_factory):
    d = Daemon(tmp_path_factory.mktemp("warden"), ALLOWLIST)
    yield d
    d.stop()


@pytest.fixture(scope="session")
def asking_daemon(tmp_path_factory):
    """A daemon whose only provider asks for a human on every call."""
    hostile = GUESTS / "hostile.wasm"
    if not hostile.is_file():
        pytest.fail(f"the test component is not built at {hostile}: run `cargo build -p warden-testkit`")
    provider = f"""    - name: asker
      wasm: {hostile}
      config: {{behaviour: verdict, verdict: ask, code: test.needs_human}}"""
    d = Daemon(tmp_path_factory.mktemp("warden-ask"), provider)
    yield d
    d.stop()


@pytest.fixture
def approval_daemon(tmp_path):
    """A daemon on which `bash` needs a human's approval (a fresh store per test)."""
    d = Daemon(tmp_path / "warden-approval", ALLOWLIST, extra="hitl_approval:\n  tools: [bash]\n")
    yield d
    d.stop()


@pytest.fixture(scope="session")
def deerflow_daemon(tmp_path_factory):
    """A daemon on the shipped DeerFlow example (tests keep to their own threads)."""
    d = Daemon(tmp_path_factory.mktemp("warden-deerflow"), config=ROOT / "examples" / "deerflow" / "warden.yaml")
    yield d
    d.stop()


@pytest.fixture
def hops(monkeypatch):
    """The package's functions sent to a worker thread (``asyncio.to_thread``,
    recorded and passed on), in order: which calls left the event loop."""
    sent = []
    to_thread = asyncio.to_thread

    async def recording(func, /, *args, **kwargs):
        if getattr(func, "__module__", "").startswith("warden"):
            sent.append(func.__name__)
        return await to_thread(func, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", recording)
    return sent
