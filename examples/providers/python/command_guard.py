"""command-guard in Python: see examples/providers/README.md for the policy,
which the Rust and JavaScript twins implement too.

Built with componentize-py (`--stub-wasi`: the component imports nothing but
the contract, so Warden loads it unchanged)."""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import types

POLICY_ID = "command-guard.v1"
LISTS = ("blocked_tools", "ask_tools", "blocked_commands", "read_only_roles", "write_tools")


def parse_config(text):
    """The config, checked: an error names the field."""
    config = json.loads(text)
    if not isinstance(config, dict):
        raise ValueError("the config must be a mapping")
    for key in config:
        if key not in LISTS:
            expected = ", ".join(f"`{k}`" for k in LISTS)
            raise ValueError(f"unknown field `{key}`, expected one of {expected}")
    if "blocked_tools" not in config:
        raise ValueError("missing field `blocked_tools`")
    parsed = {}
    for key in LISTS:
        value = config.get(key, [])
        if not isinstance(value, list):
            raise ValueError(f"{key}: expected a list of strings")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise ValueError(f"{key}[{i}]: expected a string")
        parsed[key] = value
    return parsed


def decide(config, call):
    """(verdict, code, message) for one call."""
    tool = call.tool_name
    if tool in config["blocked_tools"]:
        return types.Verdict.DENY, "guard.tool_blocked", f"tool '{tool}' is blocked"
    role = call.user_role
    if role is not None and role in config["read_only_roles"] and tool in config["write_tools"]:
        return types.Verdict.DENY, "guard.read_only", f"role '{role}' may not use '{tool}'"
    command = json.loads(call.tool_input).get("command")
    if isinstance(command, str):
        for fragment in config["blocked_commands"]:
            if fragment in command:
                return types.Verdict.DENY, "guard.command_blocked", f"the command contains '{fragment}'"
    if tool in config["ask_tools"]:
        if call.is_subagent:
            return (types.Verdict.DENY, "guard.subagent_needs_approval",
                    f"a subagent cannot get approval for '{tool}'")
        return types.Verdict.ASK, "guard.needs_approval", f"'{tool}' needs approval"
    return types.Verdict.ALLOW, "oap.allowed", ""


class Provider(exports.Provider):
    config = None

    def info(self) -> types.ProviderInfo:
        return types.ProviderInfo(name="command-guard", version="0.1.0")

    def configure(self, config: str) -> None:
        try:
            Provider.config = parse_config(config)
        except (ValueError, json.JSONDecodeError) as error:
            Provider.config = None
            raise Err(str(error))

    def evaluate(self, call: types.ToolCall) -> types.Decision:
        if Provider.config is None:
            verdict, code, message = types.Verdict.DENY, "provider.not_configured", "the provider was not configured"
        else:
            verdict, code, message = decide(Provider.config, call)
        return types.Decision(
            verdict=verdict,
            reasons=[types.Reason(code=code, message=message)],
            policy_id=POLICY_ID,
            metadata="{}",
        )
