//! A shadow provider (`mode: shadow`) in the daemon: the answer is the live
//! set's, the decision log line records the shadow verdict beside it, and
//! `/metrics` counts the differences by transition.

use crate::common::daemon::*;
use serde_json::json;

/// bash allowed live; a shadow allowlist that denies it.
fn shadowed() -> Daemon {
    Daemon::start(&format!(
        "guardrails:\n  providers:\n    - name: live\n      wasm: builtin:allowlist\n      config: {{allowed_tools: [bash]}}\n    - name: candidate\n      wasm: builtin:allowlist\n      mode: shadow\n      config: {{allowed_tools: [], denied_tools: [bash]}}\n{}",
        server_block(false)
    ))
}

#[tokio::test]
async fn a_deny_everything_shadow_changes_no_answer_and_every_line_records_the_difference() {
    every_line_records_a_deny_shadow(shadowed(), "provider:candidate").await;
}

/// Five bash calls to `daemon`, whose live set allows bash and whose shadow
/// (decided by `decided_by`) denies it: every answer is the live one, the
/// metrics count five differences, and every line records both.
pub async fn every_line_records_a_deny_shadow(mut daemon: Daemon, decided_by: &str) {
    for i in 0..5 {
        let call = json!({"tool_name": "bash", "tool_input": {"command": format!("echo {i}")}});
        let (status, decision) = daemon.evaluate(AGENT, &call).await;
        assert_eq!(status, 200, "{decision}");
        assert_eq!(decision["verdict"], "allow", "{decision}");
    }
    let counted = r#"warden_shadow_differences_total{from="allow",to="deny"} 5"#;
    let mut metrics = String::new();
    for _ in 0..400 {
        metrics = daemon.metrics().await;
        if metrics.contains(counted) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert!(metrics.contains(counted), "{metrics}");
    assert!(metrics.contains("warden_shadow_shed_total 0"), "{metrics}");
    daemon.stop();
    let lines = daemon.log("decisions.jsonl");
    assert_eq!(lines.len(), 5);
    for line in &lines {
        assert_eq!(line["verdict"], "allow", "{line}");
        let shadow = &line["shadow"];
        assert_eq!(shadow["outcome"], "judged", "{line}");
        assert_eq!(shadow["verdict"], "deny", "{line}");
        assert_eq!(shadow["differs"], true, "{line}");
        assert_eq!(shadow["decided_by"], decided_by, "{line}");
        assert!(shadow["reasons"][0]["code"].is_string(), "{line}");
    }
}

#[tokio::test]
async fn lines_held_for_their_shadow_are_written_at_shutdown() {
    let mut daemon = shadowed();
    let call = json!({"tool_name": "bash", "tool_input": {"command": "ls"}});
    for _ in 0..20 {
        assert_eq!(daemon.evaluate(AGENT, &call).await.0, 200);
    }
    // Stopped at once: the lines still held are written before it exits.
    daemon.stop();
    let lines = daemon.log("decisions.jsonl");
    assert_eq!(lines.len(), 20);
    assert!(lines.iter().all(|l| l["shadow"]["outcome"] == "judged"));
}
