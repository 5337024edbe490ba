//! Every fuzz corpus entry and every regression (`fuzz/corpus/TARGET`,
//! `fuzz/regressions/TARGET`) replayed through the fuzz targets' own checks
//! (`fuzz/src/checks.rs`), on the real crates: so `cargo test` covers every
//! input the fuzzers were seeded with or found a crash on.

#[path = "../../../../fuzz/src/checks.rs"]
mod checks;

/// The host's types, as the checks name them.
mod wire {
    pub use warden_approval::AiMessage;
    pub use warden_approval::postgres_url::split as split_pg_url;
    pub use warden_policy::trust::admit;
    pub use warden_runtime::json_config::reads_alike;
    pub use warden_runtime::source_map::SourceMap;
    pub use warden_types::Asserts;
    pub use warden_types::Caller;
    pub use warden_types::call_listing::list_calls;
    pub use warden_types::request::ToolCall;

    pub fn read_yaml(text: &str) -> Result<serde_json::Value, String> {
        serde_norway::from_str(text).map_err(|e| e.to_string())
    }

    pub fn parse_model_response(body: &[u8]) -> Option<AiMessage> {
        warden_approval::ModelResponse::from_json(body)
            .ok()
            .map(|r| r.message)
    }
}

/// Runs `check` on every file of the target's corpus and regressions; returns
/// how many there were.
fn replay(target: &str, check: fn(&[u8])) -> usize {
    let mut count = 0;
    for kind in ["corpus", "regressions"] {
        let dir = crate::common::repo_root()
            .join("fuzz")
            .join(kind)
            .join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(outcome.is_ok(), "{} fails its check", path.display());
            count += 1;
        }
    }
    count
}

#[test]
fn every_shell_input_holds() {
    assert!(replay("shell", checks::shell) > 100);
}

#[test]
fn every_path_input_holds() {
    assert!(replay("path", checks::path) > 50);
}

#[test]
fn every_request_input_holds() {
    assert!(replay("request", checks::request) > 20);
}

#[test]
fn every_model_response_input_holds() {
    assert!(replay("model_response", checks::model_response) > 5);
}

#[test]
fn every_redact_input_holds() {
    assert!(replay("redact", checks::redact) > 50);
}

#[test]
fn every_deepcode_config_input_holds() {
    assert!(replay("deepcode_config", checks::deepcode_config) > 5);
}

#[test]
fn every_policy_suite_input_holds() {
    assert!(replay("policy_suite", checks::policy_suite) >= 6);
}

#[test]
fn every_pg_url_input_holds() {
    assert!(replay("pg_url", checks::pg_url) >= 6);
}

#[test]
fn every_config_json_input_holds() {
    assert!(replay("config_json", checks::config_json) >= 6);
}
