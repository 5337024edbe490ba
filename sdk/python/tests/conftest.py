"""Starts the real Warden daemon for the tests: ``target/debug/warden`` (or
``$WARDEN_BIN``) on a free loopback port, with tokens for each role."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
AGENT = "py-agent-token-0123456789abcdef"
ADMIN = "py-admin-token-0123456789abcdef"
GUESTS = ROOT / "target" / "guests" / "wasm32-wasip2" / "wasm-release"


def warden_bin() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("WARDEN_BIN", ROOT / "target" / "debug" / "warden"))
    if not path.is_file():
        pytest.fail(f"the warden binary is not built at {path}: run `cargo build -p warden-host` or set WARDEN_BIN")
    return path


class Daemon:
    """A running ``warden serve``; ``url`` is where it listens."""

    def __init__(self, directory: pathlib.Path, providers: str, extra: str = ""):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config = self.dir / "warden.yaml"
        self.config.write_text(
            f"""{extra}guardrails:
  providers:
{providers}
server:
  watch_config: false
  tokens:
    - {{name: deerflow, role: agent, token: {AGENT}}}
    - {{name: ops, role: admin, token: {ADMIN}}}
"""
        )
        self.stderr = open(self.dir / "stderr.log", "wb")
        self.process = subprocess.Popen(
            [str(warden_bin()), "serve", "--config", str(self.config), "--listen", "127.0.0.1:0"],
            cwd=self.dir,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            stdin=subprocess.DEVNULL,
        )
        line = self.process.stdout.readline().decode().strip()
        prefix = "warden: listening on "
        if not line.startswith(prefix):
            self.process.wait()
            raise RuntimeError(f"the daemon did not start: {line!r}\n{(self.dir / 'stderr.log').read_text()}")
        self.url = line[len(prefix):]

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        self.process.stdout.close()
        self.stderr.close()


ALLOWLIST = """    - name: allowlist
      wasm: builtin:allowlist
      config: {allowed_tools: [bash, read_file, web_search], denied_tools: [rm]}"""


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
        pytest.fail(f"the test component is not built at {hostile}: run `cargo build -p warden-host`")
    provider = f"""    - name: asker
      wasm: {hostile}
      config: {{behaviour: verdict, verdict: ask, code: test.needs_human}}"""
    d = Daemon(tmp_path_factory.mktemp("warden-ask"), provider)
    yield d
    d.stop()


@pytest.fixture()
def approval_daemon(tmp_path):
    """A daemon on which `bash` needs a human's approval (a fresh store per test)."""
    d = Daemon(tmp_path / "warden-approval", ALLOWLIST, extra="hitl_approval:\n  tools: [bash]\n")
    yield d
    d.stop()
