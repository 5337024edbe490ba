//! Where the CLI's commands and the hook keep their data: the user's state
//! directory (`$XDG_STATE_HOME/warden`, else `~/.local/state/warden`), never the
//! working directory (for a hook, the user's project), unless the
//! configuration's `data_dir` names one; an old `./.warden` is pointed out once.
//! The real binary, with `HOME` and `XDG_STATE_HOME` in a temporary directory.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::guest;

/// A home, a state directory and a working directory, all temporary.
struct User {
    root: tempfile::TempDir,
}

impl User {
    fn new() -> User {
        let user = User {
            root: tempfile::tempdir().unwrap(),
        };
        for dir in ["home", "state", "project"] {
            std::fs::create_dir(user.root.path().join(dir)).unwrap();
        }
        user
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    /// `warden ARGS` in the project, with `xdg` as `XDG_STATE_HOME` (unset when
    /// `None`) and stdin `input`.
    fn warden(&self, xdg: Option<&Path>, args: &[&str], input: &str) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_warden"));
        command
            .args(args)
            .current_dir(self.path("project"))
            .env("HOME", self.path("home"))
            .env_remove("XDG_STATE_HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(xdg) = xdg {
            command.env("XDG_STATE_HOME", xdg);
        }
        let mut child = command.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// A config in the project with one wasm provider (so there is something
    /// to compile and cache), and `extra` lines on top.
    fn config(&self, extra: &str) -> String {
        let path = self.path("project").join("warden.yaml");
        std::fs::write(
            &path,
            format!(
                "{extra}guardrails:\n  providers:\n    - {{name: a, wasm: \"{}\", config: {{allowed_tools: [bash]}}}}\n",
                guest("allowlist").display()
            ),
        )
        .unwrap();
        path.display().to_string()
    }

    fn project_is_untouched(&self) {
        let left: Vec<_> = std::fs::read_dir(self.path("project"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|name| name != "warden.yaml")
            .collect();
        assert!(left.is_empty(), "the project got {left:?}");
    }
}

/// Whether `dir` holds a compiled artifact.
fn has_compiled(dir: &Path) -> bool {
    std::fs::read_dir(dir.join("compiled")).is_ok_and(|mut entries| entries.next().is_some())
}

const CALL: &str = r#"{"tool_name": "bash", "tool_input": {"command": "ls"}}"#;
const HOOK_CALL: &str = r#"{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "/tmp", "session_id": "s"}"#;

#[test]
fn warden_test_keeps_its_compiled_cache_in_the_xdg_state_directory() {
    let user = User::new();
    let project = user.path("project");
    std::fs::write(
        project.join("vectors.jsonl"),
        r#"{"name": "bash", "request": {"tool_name": "bash", "tool_input": {}}, "expect": {"verdict": "allow"}}
"#,
    )
    .unwrap();
    std::fs::write(project.join("config.yaml"), "allowed_tools: [bash]\n").unwrap();
    let component = guest("allowlist").display().to_string();
    let args = [
        "test",
        &component,
        "--vectors",
        "vectors.jsonl",
        "--config",
        "config.yaml",
    ];
    user.warden(Some(&user.path("state")), &args, "");
    assert!(has_compiled(&user.path("state").join("warden")));
    assert!(!project.join(".warden").exists());
}

#[test]
fn eval_keeps_its_data_under_home_local_state_without_xdg_state_home() {
    let user = User::new();
    let config = user.config("");
    user.warden(None, &["eval", "--config", &config], CALL);
    assert!(has_compiled(&user.path("home").join(".local/state/warden")));
    user.project_is_untouched();
}

#[test]
fn the_hook_keeps_its_data_in_the_state_directory_not_the_project() {
    let user = User::new();
    let config = user.config("");
    let out = user.warden(
        Some(&user.path("state")),
        &["hook", "claude-code", "--config", &config],
        HOOK_CALL,
    );
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert!(has_compiled(&user.path("state").join("warden")));
    user.project_is_untouched();
}

#[test]
fn a_configured_data_dir_still_decides() {
    let user = User::new();
    let config = user.config("data_dir: here\n");
    user.warden(
        Some(&user.path("state")),
        &["eval", "--config", &config],
        CALL,
    );
    assert!(has_compiled(&user.path("project").join("here")));
    assert!(!user.path("state").join("warden").exists());
}

#[test]
fn an_old_dot_warden_in_the_working_directory_is_pointed_out_once() {
    let user = User::new();
    let config = user.config("");
    std::fs::create_dir(user.path("project").join(".warden")).unwrap();
    let state = user.path("state");
    let eval = ["eval", "--config", &config];
    let first = String::from_utf8(user.warden(Some(&state), &eval, CALL).stderr).unwrap();
    assert!(
        first.contains(".warden") && first.contains("data_dir: .warden"),
        "{first}"
    );
    assert!(first.contains(&state.join("warden").display().to_string()));
    let second = String::from_utf8(user.warden(Some(&state), &eval, CALL).stderr).unwrap();
    assert!(!second.contains("no longer"), "{second}");
    // It is left as it was: the daemon may still use it.
    assert!(user.path("project").join(".warden").is_dir());
}
