//! The README's embedding example, run as a user runs it: a tool the
//! configuration lists under `hitl_approval` is asked about, never run.

use std::process::Command;

/// The example's output with the configuration `yaml`.
fn run_with(yaml: &str) -> String {
    let config = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("embed-listed.yaml");
    std::fs::write(&config, yaml).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_embed-example"))
        .arg(&config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_listed_tool_is_asked_about_and_never_run() {
    let allowed = "permissions:\n  mode: full_auto\n";
    let out = run_with(allowed);
    assert!(out.contains("run   bash"), "{out}");

    let out = run_with(&format!("{allowed}hitl_approval:\n  tools: [bash]\n"));
    assert!(!out.contains("run   bash"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("ask   bash (warden.approval_required)")),
        "{out}"
    );
}

#[test]
fn the_embedded_default_runs_the_safe_call_only() {
    let out = Command::new(env!("CARGO_BIN_EXE_embed-example"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = String::from_utf8(out.stdout).unwrap();
    let ran: Vec<&str> = out.lines().filter(|l| l.starts_with("run ")).collect();
    assert_eq!(ran, ["run   bash {\"command\":\"git status\"}"], "{out}");
}
