//! Signed provider bundles: one signed by a trusted key loads and its
//! vectors run; a tampered component, a wrong key, a revoked or expired key,
//! an unknown contract version and a failing vector are each refused naming
//! the reason, and a hot swap to such a bundle leaves the serving set in place.

use std::path::{Path, PathBuf};

use crate::common::*;
use serde_json::{Value, json};
use warden::bundle::{self, key_string};
use warden::{Error, LoadError, Verdict, Warden};

/// The allowlist denying bash, and the vectors the publisher ships for it.
const VECTORS: &str = r#"{"name": "bash is denied", "request": {"tool_name": "bash", "tool_input": {}}, "expect": {"verdict": "deny", "code": "oap.tool_not_allowed"}}
{"name": "read_file is allowed", "request": {"tool_name": "read_file", "tool_input": {}}, "expect": {"verdict": "allow"}}
"#;

struct Publisher {
    dir: tempfile::TempDir,
    key: ed25519_dalek::SigningKey,
}

fn publisher() -> Publisher {
    Publisher {
        dir: tempfile::tempdir().unwrap(),
        key: warden::signing::generate().unwrap(),
    }
}

impl Publisher {
    fn bundle(&self, vectors: &str) -> PathBuf {
        let dir = self.dir.path().join("allowlist.bundle");
        let component = std::fs::read(guest("allowlist")).unwrap();
        bundle::create(&dir, &component, vectors, &self.key).unwrap();
        dir
    }

    fn key(&self) -> String {
        key_string(&self.key.verifying_key())
    }
}

/// Appends a byte to the bundle's component, as a tamperer would.
fn tamper(bundle: &Path) {
    let mut bytes = std::fs::read(bundle.join(bundle::COMPONENT)).unwrap();
    bytes.push(0);
    std::fs::write(bundle.join(bundle::COMPONENT), bytes).unwrap();
}

/// Says the bundle is for contract 0.9.0 and signs that with the publisher's key.
fn resign_for_a_future_contract(publisher: &Publisher, bundle: &Path) {
    let statement = std::fs::read_to_string(bundle.join(bundle::STATEMENT)).unwrap();
    std::fs::write(
        bundle.join(bundle::STATEMENT),
        statement.replace("warden:guardrail@0.1.0", "warden:guardrail@0.9.0"),
    )
    .unwrap();
    bundle::sign(bundle, &publisher.key).unwrap();
}

fn yaml(bundle: &Path, trust: Value) -> String {
    format!(
        "guardrails:\n  providers:\n    - name: gate\n      wasm: {}\n      config: {{denied_tools: [bash]}}\n      trust: {trust}\n",
        bundle.display()
    )
}

fn trusting(key: &str) -> Value {
    json!({"publisher_keys": [{"key": key}]})
}

fn refusal(yaml: &str) -> String {
    let err = Warden::new(&config(yaml)).err().expect("refused");
    assert!(
        matches!(
            err,
            Error::Load(LoadError::Bundle { .. } | LoadError::Vectors { .. })
        ),
        "{err}"
    );
    err.to_string()
}

#[test]
fn a_bundle_signed_by_a_trusted_key_loads_and_judges() {
    let publisher = publisher();
    let bundle = publisher.bundle(VECTORS);
    let warden = warden(&yaml(&bundle, trusting(&publisher.key())));
    assert_eq!(eval(&warden, "bash", empty()).verdict, Verdict::Deny);
    assert_eq!(eval(&warden, "read_file", empty()).verdict, Verdict::Allow);
}

#[test]
fn a_tampered_component_is_refused_naming_the_digest() {
    let publisher = publisher();
    let bundle = publisher.bundle(VECTORS);
    tamper(&bundle);
    let text = refusal(&yaml(&bundle, trusting(&publisher.key())));
    assert!(text.contains("digest: provider.wasm"), "{text}");
}

#[test]
fn a_bundle_signed_by_an_untrusted_key_is_refused_naming_the_key() {
    let publisher = publisher();
    let bundle = publisher.bundle(VECTORS);
    let other = key_string(&warden::signing::generate().unwrap().verifying_key());
    let text = refusal(&yaml(&bundle, trusting(&other)));
    assert!(
        text.contains("key: signed by") && text.contains("not among the trusted publisher keys"),
        "{text}"
    );
}

#[test]
fn an_altered_statement_is_refused_naming_the_signature() {
    let publisher = publisher();
    let bundle = publisher.bundle(VECTORS);
    let statement = std::fs::read_to_string(bundle.join(bundle::STATEMENT)).unwrap();
    std::fs::write(
        bundle.join(bundle::STATEMENT),
        statement.replace("\"0.1.0\"", "\"0.1.1\""),
    )
    .unwrap();
    let text = refusal(&yaml(&bundle, trusting(&publisher.key())));
    assert!(text.contains("signature: does not verify"), "{text}");
}

#[test]
fn a_revoked_or_expired_key_is_refused_naming_which() {
    let publisher = publisher();
    let bundle = publisher.bundle(VECTORS);
    let key = publisher.key();
    let revoked = json!({"publisher_keys": [{"key": key}], "revoked": [key]});
    assert!(refusal(&yaml(&bundle, revoked)).contains("which is revoked"));
    let expired = json!({"publisher_keys": [{"key": key, "expires": "2020-01-01T00:00:00Z"}]});
    assert!(refusal(&yaml(&bundle, expired)).contains("whose trust expired at 2020-01-01"));
    let later = json!({"publisher_keys": [{"key": key, "expires": "2999-01-01T00:00:00Z"}]});
    warden(&yaml(&bundle, later));
}

#[test]
fn a_bundle_for_an_unknown_contract_version_is_refused_naming_the_contract() {
    let publisher = publisher();
    let bundle = publisher.bundle(VECTORS);
    resign_for_a_future_contract(&publisher, &bundle);
    let text = refusal(&yaml(&bundle, trusting(&publisher.key())));
    assert!(
        text.contains("contract: the bundle was built against `warden:guardrail@0.9.0`"),
        "{text}"
    );
}

#[test]
fn a_bundle_whose_vector_fails_is_refused_naming_the_vector() {
    let publisher = publisher();
    let failing = VECTORS.replace(
        r#""expect": {"verdict": "deny", "code": "oap.tool_not_allowed"}"#,
        r#""expect": {"verdict": "allow"}"#,
    );
    let bundle = publisher.bundle(&failing);
    let err = Warden::new(&config(&yaml(&bundle, trusting(&publisher.key()))))
        .err()
        .expect("refused");
    // The same gate as an operator's `vectors:`.
    assert!(
        matches!(&err, Error::Load(LoadError::Vectors { message, .. })
            if message.starts_with("vector 'bash is denied' (line 1) fails")),
        "{err}"
    );
    assert!(err.to_string().contains("vectors.jsonl"), "{err}");
}

#[test]
fn a_bundle_trusted_by_nothing_is_refused() {
    let publisher = publisher();
    let bundle = publisher.bundle(VECTORS);
    let text = refusal(&format!(
        "guardrails:\n  providers:\n    - {{name: gate, wasm: {}}}\n",
        bundle.display()
    ));
    assert!(text.contains("not trusted"), "{text}");
}

#[test]
fn a_hot_swap_to_a_bundle_that_does_not_verify_leaves_the_serving_set() {
    let serving_publisher = publisher();
    let good = serving_publisher.bundle(VECTORS);
    let warden = warden(&yaml(&good, trusting(&serving_publisher.key())));
    let serving = warden.health().generation;

    let wrong_key = key_string(&warden::signing::generate().unwrap().verifying_key());
    let failing = publisher();
    let failing_bundle =
        failing.bundle(&VECTORS.replace("\"deny\", \"code\"", "\"ask\", \"code\""));
    let future = publisher();
    let future_bundle = future.bundle(VECTORS);
    resign_for_a_future_contract(&future, &future_bundle);
    let tampered = publisher();
    let tampered_bundle = tampered.bundle(VECTORS);
    tamper(&tampered_bundle);

    for (yaml, reason) in [
        (yaml(&good, trusting(&wrong_key)), "key: signed by"),
        (
            yaml(&tampered_bundle, trusting(&tampered.key())),
            "digest: provider.wasm",
        ),
        (yaml(&future_bundle, trusting(&future.key())), "contract: "),
        (
            yaml(&failing_bundle, trusting(&failing.key())),
            "vector 'bash is denied'",
        ),
    ] {
        let err = warden.reload(&config(&yaml), "new").unwrap_err();
        assert!(err.to_string().contains(reason), "{reason}: {err}");
        assert_eq!(warden.health().generation, serving, "{reason}");
        assert_eq!(eval(&warden, "bash", empty()).verdict, Verdict::Deny);
    }
}

#[test]
fn trust_on_a_provider_that_is_not_a_bundle_is_refused() {
    let err = Warden::new(&config(&format!(
        "guardrails:\n  providers:\n    - {{name: gate, wasm: allowlist.wasm, trust: {}}}\n",
        trusting("ed25519:AAAA")
    )))
    .err()
    .expect("refused");
    assert!(
        err.to_string().contains("`trust:` applies to bundles"),
        "{err}"
    );
}
