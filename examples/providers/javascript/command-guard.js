// command-guard in JavaScript: see examples/providers/README.md for the policy,
// which the Rust and Python twins implement too.
//
// Built with componentize-js, every WASI feature disabled: the component
// imports nothing but the contract, so Warden loads it unchanged.

const POLICY_ID = "command-guard.v1";
const LISTS = ["blocked_tools", "ask_tools", "blocked_commands", "read_only_roles", "write_tools"];

let config = null;

/** The config, checked: an error names the field. */
function parseConfig(text) {
  const raw = JSON.parse(text);
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new Error("the config must be a mapping");
  }
  for (const key of Object.keys(raw)) {
    if (!LISTS.includes(key)) {
      const expected = LISTS.map((k) => "`" + k + "`").join(", ");
      throw new Error(`unknown field \`${key}\`, expected one of ${expected}`);
    }
  }
  if (!("blocked_tools" in raw)) {
    throw new Error("missing field `blocked_tools`");
  }
  const parsed = {};
  for (const key of LISTS) {
    const value = raw[key] ?? [];
    if (!Array.isArray(value)) {
      throw new Error(`${key}: expected a list of strings`);
    }
    value.forEach((item, i) => {
      if (typeof item !== "string") {
        throw new Error(`${key}[${i}]: expected a string`);
      }
    });
    parsed[key] = value;
  }
  return parsed;
}

/** [verdict, code, message] for one call. */
function decide(c, call) {
  const tool = call.toolName;
  if (c.blocked_tools.includes(tool)) {
    return ["deny", "guard.tool_blocked", `tool '${tool}' is blocked`];
  }
  const role = call.userRole;
  if (role !== undefined && role !== null && c.read_only_roles.includes(role) && c.write_tools.includes(tool)) {
    return ["deny", "guard.read_only", `role '${role}' may not use '${tool}'`];
  }
  const command = JSON.parse(call.toolInput).command;
  if (typeof command === "string") {
    const fragment = c.blocked_commands.find((f) => command.includes(f));
    if (fragment !== undefined) {
      return ["deny", "guard.command_blocked", `the command contains '${fragment}'`];
    }
  }
  if (c.ask_tools.includes(tool)) {
    if (call.isSubagent) {
      return ["deny", "guard.subagent_needs_approval", `a subagent cannot get approval for '${tool}'`];
    }
    return ["ask", "guard.needs_approval", `'${tool}' needs approval`];
  }
  return ["allow", "oap.allowed", ""];
}

export const provider = {
  info() {
    return { name: "command-guard", version: "0.1.0" };
  },

  configure(text) {
    config = null;
    try {
      config = parseConfig(text);
    } catch (error) {
      // The thrown value is the `err` of `result<_, string>`.
      throw error.message;
    }
  },

  evaluate(call) {
    const [verdict, code, message] = config === null
      ? ["deny", "provider.not_configured", "the provider was not configured"]
      : decide(config, call);
    return { verdict, reasons: [{ code, message }], policyId: POLICY_ID, metadata: "{}" };
  },
};
