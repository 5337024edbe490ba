//! The calls the benchmarks judge.

/// A command line an agent typically runs, and one that nests wrappers and
/// command lines inside command lines.
pub const TYPICAL_COMMAND: &str = "git status && cargo test -p warden-host 2>&1 | tail -n 20";
pub const NESTED_COMMAND: &str =
    "sudo env FOO=1 bash -c 'find . -name \"*.tmp\" -exec rm -f {} \\; && echo \"done: $(date)\"'";
