"""The in-process ``warden.Warden`` writes the daemon's decision log when
asked (``decision_log=True``): the same lines, chained and checkpointed by the
same writer, which ``warden log verify`` accepts; and none when not asked.

Needs the native module (``scripts/build-python-native``) and the ``warden``
binary (``$WARDEN_BIN``)."""

import json
import subprocess

import pytest
from conftest import require_native, warden_bin

inprocess = require_native()
Warden = inprocess.Warden

CONFIG = """permissions:
  mode: full_auto
  deny: ["Bash(rm -rf *)"]
data_dir: state
decision_log:
  checkpoint_every: 2
"""


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_the_in_process_warden_writes_lines_log_verify_accepts(tmp_path):
    warden = Warden.from_string(CONFIG, base_dir=tmp_path, decision_log=True, internal=False)
    assert warden.evaluate("bash", {"command": "ls"}, context={"user_role": "admin"}).allow
    assert not warden.evaluate("bash", {"command": "rm -rf /tmp/x"}).allow
    assert warden.evaluate("read_file", {"path": "notes.md"}, context={"thread_id": "t-1"}).allow
    warden.flush_decision_log()
    path = warden.decision_log_path
    assert path == str(tmp_path / "state" / "decisions.jsonl")
    del warden

    decisions = [line for line in lines(path) if "verdict" in line]
    assert [d["verdict"] for d in decisions] == ["allow", "deny", "allow"]
    # An agent's claim of a role is logged as claimed, not honoured.
    assert decisions[0]["attribution"]["claimed"] == {"user_role": "admin"}
    assert "user_role" not in decisions[0]["attribution"]["honoured"]
    assert decisions[2]["attribution"]["honoured"]["thread_id"] == "t-1"
    assert all(d["config_sha256"] and d["node_name"] for d in decisions)

    verified = subprocess.run(
        [str(warden_bin()), "log", "verify", path, "--checkpoints", path + ".checkpoints"],
        capture_output=True,
        text=True,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "intact" in verified.stdout


def test_the_in_process_warden_writes_no_log_unless_asked(tmp_path):
    warden = Warden.from_string(CONFIG, base_dir=tmp_path)
    warden.evaluate("bash", {"command": "ls"})
    assert warden.decision_log_path is None
    warden.flush_decision_log()
    assert not (tmp_path / "state" / "decisions.jsonl").exists()


def test_decision_log_must_be_a_bool(tmp_path):
    with pytest.raises(TypeError, match="decision_log"):
        Warden.from_string(CONFIG, base_dir=tmp_path, decision_log="yes")
