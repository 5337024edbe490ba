//! The operator's tool registry: what kind of tool each name is (a shell, a file
//! reader or writer, a web fetch or search, an MCP tool) and which tools are
//! read-only. Read-only-ness comes from this registry only, never from a tool's
//! name; shell and unknown tools are never read-only.

use std::collections::HashMap;

use serde::Deserialize;

/// What a tool does, as far as the permission engine is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Runs a shell command (`command`, `cmd` or `args[0]`).
    Shell,
    /// Reads a file (`file_path` or `path`).
    Read,
    /// Writes or edits a file (`file_path` or `path`).
    Write,
    /// Fetches a URL (`url`).
    Fetch,
    /// Searches the web (`query`).
    Search,
    /// An MCP tool, `mcp__<server>__<tool>`.
    Mcp,
    /// Anything else.
    Other,
}

/// The `permissions.tools` block: tool names by kind, and the read-only set.
/// Every list replaces its default when given.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsConfig {
    /// Shell tools (default: `bash`, `shell`, ...).
    #[serde(default = "defaults::shell")]
    pub shell: Vec<String>,
    /// File-reading tools.
    #[serde(default = "defaults::read")]
    pub read: Vec<String>,
    /// File-writing and editing tools.
    #[serde(default = "defaults::write")]
    pub write: Vec<String>,
    /// URL-fetching tools.
    #[serde(default = "defaults::fetch")]
    pub fetch: Vec<String>,
    /// Web-search tools.
    #[serde(default = "defaults::search")]
    pub search: Vec<String>,
    /// Tools that change nothing: allowed in `read_only` mode, and without
    /// asking in `default` mode.
    #[serde(default = "defaults::read_only")]
    pub read_only: Vec<String>,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            shell: defaults::shell(),
            read: defaults::read(),
            write: defaults::write(),
            fetch: defaults::fetch(),
            search: defaults::search(),
            read_only: defaults::read_only(),
        }
    }
}

/// Defaults for DeerFlow's tool names (and common spellings of the same tools).
mod defaults {
    fn list(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }
    pub fn shell() -> Vec<String> {
        list(&[
            "bash",
            "shell",
            "sh",
            "exec",
            "execute_command",
            "run_command",
            "terminal",
        ])
    }
    pub fn read() -> Vec<String> {
        list(&[
            "read_file",
            "ls",
            "view_image",
            "present_files",
            "read",
            "glob",
            "grep",
        ])
    }
    pub fn write() -> Vec<String> {
        list(&[
            "write_file",
            "str_replace",
            "edit",
            "edit_file",
            "write",
            "create_file",
            "notebook_edit",
        ])
    }
    pub fn fetch() -> Vec<String> {
        list(&["web_fetch", "fetch", "http_request"])
    }
    pub fn search() -> Vec<String> {
        list(&["web_search", "image_search"])
    }
    pub fn read_only() -> Vec<String> {
        list(&[
            "read_file",
            "ls",
            "view_image",
            "present_files",
            "read",
            "glob",
            "grep",
            "web_search",
            "image_search",
            "ask_clarification",
        ])
    }
}

/// The registry, built once from the config.
#[derive(Clone, Debug)]
pub struct ToolRegistry {
    kinds: HashMap<String, ToolKind>,
    read_only: std::collections::HashSet<String>,
}

/// A registry that contradicts itself.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("permissions.tools: {0}")]
pub struct RegistryError(pub String);

impl ToolRegistry {
    /// Builds the registry. A name under two kinds, an `mcp__` name in a list, or a shell or
    /// write tool listed read-only is an error.
    pub fn new(config: &ToolsConfig) -> Result<Self, RegistryError> {
        let mut kinds = HashMap::new();
        let lists = [
            ("shell", ToolKind::Shell, &config.shell),
            ("read", ToolKind::Read, &config.read),
            ("write", ToolKind::Write, &config.write),
            ("fetch", ToolKind::Fetch, &config.fetch),
            ("search", ToolKind::Search, &config.search),
        ];
        let mut listed_in: HashMap<&str, &str> = HashMap::new();
        for (list, kind, names) in lists {
            for name in names {
                if name.starts_with("mcp__") {
                    return Err(RegistryError(format!(
                        "{list}: '{name}' is an MCP tool; MCP tools are recognised by their name"
                    )));
                }
                if let Some(other) = listed_in.insert(name, list) {
                    return Err(RegistryError(format!(
                        "'{name}' is listed both under {other} and under {list}"
                    )));
                }
                kinds.insert(name.clone(), kind);
            }
        }
        for name in &config.read_only {
            match kinds.get(name) {
                Some(ToolKind::Shell) => {
                    return Err(RegistryError(format!(
                        "read_only: '{name}' is a shell tool, and a shell is never read-only"
                    )));
                }
                Some(ToolKind::Write) => {
                    return Err(RegistryError(format!(
                        "read_only: '{name}' is listed under write"
                    )));
                }
                _ => {}
            }
        }
        Ok(ToolRegistry {
            kinds,
            read_only: config.read_only.iter().cloned().collect(),
        })
    }

    /// The kind of a tool: `mcp__…` is MCP, unlisted names are [`ToolKind::Other`].
    pub fn kind(&self, tool: &str) -> ToolKind {
        if tool.starts_with("mcp__") {
            return ToolKind::Mcp;
        }
        self.kinds.get(tool).copied().unwrap_or(ToolKind::Other)
    }

    /// Only tools the operator registered as read-only are; a shell never is.
    pub fn is_read_only(&self, tool: &str) -> bool {
        self.kind(tool) != ToolKind::Shell && self.read_only.contains(tool)
    }
}

impl Default for ToolRegistry {
    fn default() -> Self {
        ToolRegistry::new(&ToolsConfig::default()).expect("the default registry is consistent")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deerflow_tools_have_their_kinds() {
        let r = ToolRegistry::default();
        assert_eq!(r.kind("bash"), ToolKind::Shell);
        assert_eq!(r.kind("read_file"), ToolKind::Read);
        assert_eq!(r.kind("str_replace"), ToolKind::Write);
        assert_eq!(r.kind("web_fetch"), ToolKind::Fetch);
        assert_eq!(r.kind("mcp__github__create_issue"), ToolKind::Mcp);
        assert_eq!(r.kind("launch_rockets"), ToolKind::Other);
    }

    #[test]
    fn read_only_comes_from_the_registry_not_the_name() {
        let r = ToolRegistry::default();
        assert!(r.is_read_only("read_file"));
        assert!(!r.is_read_only("read_file_and_delete"));
        assert!(!r.is_read_only("mcp_evil_read_file"));
        assert!(!r.is_read_only("launch_rockets"));
    }

    #[test]
    fn a_shell_can_never_be_read_only() {
        let config = ToolsConfig {
            read_only: vec!["bash".into()],
            ..ToolsConfig::default()
        };
        assert!(
            ToolRegistry::new(&config)
                .unwrap_err()
                .0
                .contains("never read-only")
        );
    }

    #[test]
    fn a_tool_listed_under_two_kinds_is_refused() {
        let config = ToolsConfig {
            fetch: vec!["bash".into()],
            ..ToolsConfig::default()
        };
        assert!(ToolRegistry::new(&config).unwrap_err().0.contains("'bash'"));
    }
}
