//! One configuration file serves every face: the library reads its own
//! sections of the file the daemon is configured with, skipping the sections
//! the faces own, and still redacts reasons with `decision_log.redact`.

use std::path::Path;

use warden::{Config, Warden};

#[test]
fn the_library_loads_the_daemons_example_file() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/serve.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\nserver:") && text.contains("\ndecision_log:"));
    let config = Config::load(&path).unwrap();
    assert!(!config.guardrails.providers.is_empty());
}

#[test]
fn the_library_redacts_reasons_with_the_decision_logs_patterns() {
    let config = Config::parse(
        "server:\n  listen: 127.0.0.1:9999\ndecision_log:\n  fsync: always\n  redact: ['acct-[0-9]+']\n",
        "shared.yaml",
        ".".into(),
    )
    .unwrap();
    let warden = Warden::new(&config).unwrap();
    assert_eq!(
        warden.snapshot().redactor().redact("paid from acct-12345"),
        "paid from [REDACTED]"
    );
}
