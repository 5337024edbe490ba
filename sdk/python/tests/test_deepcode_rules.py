"""``warden rules import --from deepcode``, held to DeepCode's own engine: for
each DeepCode config, DeepCode's ``PermissionEngine`` (``deepcode-hku`` 2.3.1,
wired as the product wires it) and Warden in-process with the imported
``permissions:`` block judge the same table of calls. Warden is never looser,
and every call on which it is stricter is covered by an entry of the import's
report (its ``tools`` and ``calls`` patterns, over the tool's name and
DeepCode's rule argument).

The table leaves out what the report's notes say the rules cannot carry:
Warden's own stages (sensitive paths inside commands, risk triage) and the
adapter's part (paths inside an ``apply_patch`` envelope).

Needs DeepCode (``core.harness.permissions``, Python 3.12: the venv
``scripts/test`` makes) and the native module; skipped without DeepCode."""

import fnmatch
import json
import subprocess

import pytest
from conftest import require, require_native, warden_bin

# A skip without DeepCode; a failure where scripts/test installed it
# (WARDEN_REQUIRE_HARNESSES=1).
require("core.harness.permissions")
from core.harness.permissions import PermissionEngine, make_engine  # noqa: E402
from core.harness.tools import default_coding_tools  # noqa: E402

inprocess = require_native()

STRENGTH = {"allow": 0, "ask": 1, "deny": 2}

#: DeepCode configs (``security`` blocks), by name.
CONFIGS = {
    "default-carve-outs": {
        "permissionMode": "default",
        "permissions": {
            "bash": {"git push *": "ask", "*": "allow", "rm -rf *": "deny", "git status*": "allow"},
            "write": {"src/*": "allow", "*": "ask"},
            "web_fetch": "deny",
        },
    },
    "default-deny-all-but": {
        "permissionMode": "default",
        "permissions": {
            "bash": {"*": "deny", "git status": "allow", "ls *": "ask"},
            "edit": {"*.md": "allow"},
        },
    },
    "full-auto": {
        "permissionMode": "full_auto",
        "permissions": {
            "bash": {"rm *": "deny", "rm -i *": "allow", "git push*": "ask"},
            "write": {"/etc/*": "deny"},
        },
    },
    "plan": {
        "permissionMode": "plan",
        "permissions": {"write": {"notes/*": "allow"}, "bash": {"git status": "allow"}},
    },
}


def calls(ws):
    """The table: (tool, arguments)."""
    bash = [
        "git status",
        "git status --short",
        "git status; rm -rf build",
        "echo hi && rm -rf build",
        "git push origin main",
        "git push",
        "FOO=1 git push origin main",
        "env GIT_PAGER=cat git status",
        "ls -la",
        "ls",
        "rm notes.txt",
        "rm -i notes.txt",
        "cat README.md",
        "npm test",
    ]
    files = [
        ("write", {"file_path": "src/a.py", "content": "x"}),
        ("write", {"file_path": "./src/a.py", "content": "x"}),
        ("write", {"file_path": "src/../../etc/x", "content": "x"}),
        ("write", {"file_path": "/etc/hosts", "content": "x"}),
        ("write", {"file_path": "notes/today.md", "content": "x"}),
        ("edit", {"file_path": "README.md", "old_string": "a", "new_string": "b"}),
        ("edit", {"file_path": "main.py", "old_string": "a", "new_string": "b"}),
        ("read", {"file_path": "README.md"}),
        ("read", {"file_path": f"{ws}/keys/id_rsa.pub"}),
        ("read", {"file_path": f"{ws}/.env.example"}),
        ("read", {"file_path": f"{ws}/.env"}),
        ("grep", {"pattern": "x", "path": "."}),
        ("glob", {"pattern": "*.py"}),
        ("web_fetch", {"url": "https://example.com/"}),
        ("mcp_github_read_file", {"path": "README.md"}),
        ("mcp_github_delete_repo", {"repo": "x"}),
    ]
    return [("bash", {"command": c}) for c in bash] + files


def imported(tmp_path, security):
    config = tmp_path / "deepcode_config.json"
    config.write_text(json.dumps({"security": security}))
    out = subprocess.run(
        [
            str(warden_bin()),
            "rules",
            "import",
            "--from",
            "deepcode",
            str(config),
            "--out",
            str(tmp_path / "warden.yaml"),
            "--report",
            str(tmp_path / "report.json"),
        ],
        capture_output=True,
        text=True,
        env={"XDG_STATE_HOME": str(tmp_path / "state"), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    warden = inprocess.Warden.from_config(tmp_path / "warden.yaml", data_dir=tmp_path / "data")
    return warden, report


def covered(report, tool, argument):
    return [
        entry
        for entry in report["stricter"]
        if any(fnmatch.fnmatch(tool, t) for t in entry["tools"]) and fnmatch.fnmatch(argument, entry["calls"])
    ]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_warden_is_never_looser_than_deepcode_and_reports_where_stricter(tmp_path, name):
    security = CONFIGS[name]
    ws = tmp_path / "ws"
    ws.mkdir()
    warden, report = imported(tmp_path, security)
    engine = make_engine(
        security["permissionMode"],
        rules_config=security["permissions"],
        cwd=str(ws),
        extra_read_only=default_coding_tools(str(ws)).read_only_tool_names,
    )
    context = {"cwd": str(ws), "home": str(tmp_path / "home")}
    looser, unreported = [], []
    for tool, arguments in calls(ws):
        deepcode = engine.evaluate(tool, arguments)[0].value
        verdict = warden.evaluate(tool, arguments, context=context).verdict
        verdict = getattr(verdict, "value", verdict)
        if STRENGTH[verdict] < STRENGTH[deepcode]:
            looser.append((tool, arguments, deepcode, verdict))
        elif STRENGTH[verdict] > STRENGTH[deepcode]:
            argument = PermissionEngine._argument_string(tool, arguments)
            if not covered(report, tool, argument):
                unreported.append((tool, argument, deepcode, verdict))
    warden.close()
    assert not looser, f"Warden looser than DeepCode: {looser}"
    assert not unreported, f"stricter but not in the report: {unreported}\n{json.dumps(report, indent=1)}"


def test_the_table_has_calls_where_the_engines_differ(tmp_path):
    """The comparison can fail: on the carve-out config, some calls are
    stricter in Warden (and reported), so agreement is not vacuous."""
    security = CONFIGS["default-deny-all-but"]
    ws = tmp_path / "ws"
    ws.mkdir()
    warden, report = imported(tmp_path, security)
    verdict = warden.evaluate("bash", {"command": "git status"}, context={"cwd": str(ws)}).verdict
    warden.close()
    engine = make_engine("default", rules_config=security["permissions"], cwd=str(ws))
    assert engine.evaluate("bash", {"command": "git status"})[0].value == "allow"
    assert getattr(verdict, "value", verdict) == "deny"
    assert covered(report, "bash", "git status")
