//! Signed decision records: the host signs, anyone with the public key
//! verifies, and any change to a record breaks its signature.

use std::process::{Command, Output};

use crate::common::*;
use serde_json::{Value, json};
use warden::signing::{self, Signer};
use warden::{Caller, Config, ToolCall, Warden};

const PASSPORT: &str = include_str!("../../../../examples/passport.json");

/// A directory with a key pair and a config that signs OAP decisions.
struct Setup {
    dir: tempfile::TempDir,
    config: String,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let key = signing::generate().unwrap();
    signing::write_key_pair(&key, &dir.path().join("signing")).unwrap();
    std::fs::write(dir.path().join("passport.json"), PASSPORT).unwrap();
    let yaml = "guardrails:\n  passport: agent-7\n  providers:\n    - name: oap\n      wasm: \"builtin:oap-passport\"\n      config_files: {passport: passport.json}\nsigning: {key: signing.key, kid: \"oap:owner:example.com:test\", expires_in: 60}\n";
    let config = dir.path().join("warden.yaml");
    std::fs::write(&config, yaml).unwrap();
    Setup {
        config: config.display().to_string(),
        dir,
    }
}

impl Setup {
    fn warden(&self) -> Warden {
        Warden::new(&Config::load(self.config.as_ref()).unwrap()).unwrap()
    }

    fn public_key(&self) -> ed25519_dalek::VerifyingKey {
        signing::read_verifying_key(&self.dir.path().join("signing.pub")).unwrap()
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }
}

fn record(warden: &Warden, command: &str) -> Value {
    let e = warden
        .evaluate(
            &ToolCall::new("bash", json!({"command": command})),
            Caller::Agent,
        )
        .unwrap();
    serde_json::to_value(e.decision_record.expect("a signed record")).unwrap()
}

fn warden_cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_signed_record_verifies_with_the_public_key() {
    let s = setup();
    let r = record(&s.warden(), "git status");
    assert!(signing::verify(&r, &s.public_key()).unwrap());
    assert!(r["signature"].as_str().unwrap().starts_with("ed25519:"));
}

#[test]
fn a_record_states_the_decision_the_passport_and_the_call() {
    let s = setup();
    let r = record(&s.warden(), "rm -rf /");
    assert_eq!(r["allow"], json!(false));
    assert_eq!(r["verdict"], json!("deny"));
    assert_eq!(r["reasons"][0]["code"], json!("oap.dangerous_operation"));
    assert_eq!(r["policy_id"], json!("system.command.execute.v1"));
    assert_eq!(r["agent_id"], json!("agent-7"));
    assert_eq!(r["owner_id"], json!("org_example"));
    assert_eq!(r["assurance_level"], json!("L2"));
    assert_eq!(r["kid"], json!("oap:owner:example.com:test"));
    assert_eq!(r["expires_in"], json!(60));
    assert!(
        r["passport_digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert!(r["request_digest"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(r["decision_id"].as_str().unwrap().len(), 36);
}

#[test]
fn every_decision_gets_its_own_id() {
    let s = setup();
    let w = s.warden();
    assert_ne!(
        record(&w, "ls")["decision_id"],
        record(&w, "ls")["decision_id"]
    );
}

#[test]
fn a_tampered_record_fails_verification() {
    let s = setup();
    let original = record(&s.warden(), "rm -rf /");
    let key = s.public_key();
    for (field, value) in [
        ("allow", json!(true)),
        ("verdict", json!("allow")),
        ("reasons", json!([])),
        ("tool_name", json!("read_file")),
        ("created_at", json!("2030-01-01T00:00:00Z")),
        ("extra", json!("added")),
    ] {
        let mut tampered = original.clone();
        tampered[field] = value;
        assert!(!signing::verify(&tampered, &key).unwrap(), "{field}");
    }
}

#[test]
fn a_record_signed_by_another_key_fails_verification() {
    let s = setup();
    let other = Signer::new(signing::generate().unwrap(), "other", 60);
    let r = record(&s.warden(), "ls");
    assert!(!signing::verify(&r, &other.verifying_key()).unwrap());
}

#[test]
fn something_without_a_signature_is_not_a_record() {
    let s = setup();
    assert!(signing::verify(&json!({"allow": true}), &s.public_key()).is_err());
}

#[test]
fn without_a_signing_key_no_record_is_made() {
    let e = eval(
        &warden("guardrails:\n  providers: []\n"),
        "bash",
        json!({"command": "ls"}),
    );
    assert!(e.decision_record.is_none());
}

#[test]
fn a_missing_key_file_fails_loading_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = "signing: {key: absent.key, kid: k}\n";
    let config = Config::parse(yaml, "warden.yaml", dir.path().to_path_buf()).unwrap();
    let err = Warden::new(&config).err().unwrap().to_string();
    assert!(err.contains("absent.key"), "{err}");
}

#[test]
fn an_empty_kid_is_refused() {
    let err = Config::parse("signing: {key: k.key, kid: \"\"}\n", "w.yaml", ".".into())
        .unwrap_err()
        .to_string();
    assert!(err.contains("signing.kid"), "{err}");
}

#[test]
fn keygen_writes_an_owner_only_private_key_and_a_public_key() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ops");
    let out = warden_cli(&["keygen", "--out", prefix.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let private = dir.path().join("ops.key");
    let text = std::fs::read_to_string(&private).unwrap();
    assert!(text.starts_with("-----BEGIN PRIVATE KEY-----"), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&private).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    signing::read_verifying_key(&dir.path().join("ops.pub")).unwrap();
}

#[test]
fn keygen_never_overwrites_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ops");
    assert!(
        warden_cli(&["keygen", "--out", prefix.to_str().unwrap()])
            .status
            .success()
    );
    let out = warden_cli(&["keygen", "--out", prefix.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn verify_decision_accepts_eval_output_and_exits_zero() {
    let s = setup();
    let request = s.path("request.json");
    std::fs::write(
        &request,
        r#"{"tool_name": "bash", "tool_input": {"command": "git status"}}"#,
    )
    .unwrap();
    let out = warden_cli(&["eval", "--config", &s.config, "--request", &request]);
    assert!(out.status.success(), "{out:?}");
    let decision = s.path("decision.json");
    std::fs::write(&decision, &out.stdout).unwrap();
    let out = warden_cli(&[
        "verify-decision",
        "--key",
        &s.path("signing.pub"),
        &decision,
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("valid"));
}

#[test]
fn verify_decision_exits_one_on_a_tampered_record() {
    let s = setup();
    let mut r = record(&s.warden(), "rm -rf /");
    r["allow"] = json!(true);
    let file = s.path("tampered.json");
    std::fs::write(&file, r.to_string()).unwrap();
    let out = warden_cli(&["verify-decision", "--key", &s.path("signing.pub"), &file]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("invalid"));
}

#[test]
fn verify_decision_exits_one_on_an_expired_record_when_asked_to_check_expiry() {
    let s = setup();
    let key = signing::read_signing_key(&s.dir.path().join("signing.key")).unwrap();
    let mut r = record(&s.warden(), "ls");
    // A record made long ago, signed properly.
    r["created_at"] = json!("2020-01-01T00:00:00Z");
    r.as_object_mut().unwrap().remove("signature");
    let canonical = serde_json_canonicalizer::to_vec(&r).unwrap();
    use base64::Engine as _;
    use ed25519_dalek::Signer as _;
    let sig = base64::engine::general_purpose::STANDARD.encode(key.sign(&canonical).to_bytes());
    r["signature"] = json!(format!("ed25519:{sig}"));
    let file = s.path("old.json");
    std::fs::write(&file, r.to_string()).unwrap();
    let key_path = s.path("signing.pub");
    let plain = warden_cli(&["verify-decision", "--key", &key_path, &file]);
    assert_eq!(plain.status.code(), Some(0), "{plain:?}");
    assert!(String::from_utf8_lossy(&plain.stdout).contains("expired"));
    let strict = warden_cli(&[
        "verify-decision",
        "--key",
        &key_path,
        "--check-expiry",
        &file,
    ]);
    assert_eq!(strict.status.code(), Some(1), "{strict:?}");
}

#[test]
fn verify_decision_exits_two_on_an_unusable_key_or_file() {
    let s = setup();
    let r = record(&s.warden(), "ls");
    let file = s.path("record.json");
    std::fs::write(&file, r.to_string()).unwrap();
    let garbage = s.path("garbage.pub");
    std::fs::write(&garbage, "not a key").unwrap();
    let out = warden_cli(&["verify-decision", "--key", &garbage, &file]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("garbage.pub"));
    let not_json = s.path("not.json");
    std::fs::write(&not_json, "{{{").unwrap();
    let out = warden_cli(&[
        "verify-decision",
        "--key",
        &s.path("signing.pub"),
        &not_json,
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn the_private_key_file_also_verifies() {
    // Its public half is derived.
    let s = setup();
    let r = record(&s.warden(), "ls");
    let key = signing::read_verifying_key(&s.dir.path().join("signing.key")).unwrap();
    assert!(signing::verify(&r, &key).unwrap());
}
