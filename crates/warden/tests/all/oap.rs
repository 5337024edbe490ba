//! The Open Agent Passport provider, through the real component: the
//! conformance vectors of `tests/oap/conformance.yaml`, the passport's
//! lifecycle (suspension on reload), configuration errors and metadata.

use std::collections::{BTreeMap, BTreeSet};

use crate::common::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use warden::{Caller, Config, Evaluation, ToolCall, Verdict, Warden};

const DEFAULT_TIMESTAMP: &str = "2026-06-01T00:00:00Z";

/// Every code the provider can give, as the issue lists them.
const CODES: &[&str] = &[
    "oap.allowed",
    "oap.invalid_tool_name",
    "oap.context_too_large",
    "oap.context_too_nested",
    "oap.passport_suspended",
    "oap.passport_version_mismatch",
    "oap.passport_expired",
    "oap.unknown_capability",
    "oap.invalid_tool_arguments",
    "oap.missing_required_context",
    "oap.timeout_exceeded",
    "oap.command_not_allowed",
    "oap.command_injection_detected",
    "oap.dangerous_operation",
    "oap.blocked_pattern",
    "oap.missing_file_path",
    "oap.path_not_allowed",
    "oap.path_blocked",
    "oap.extension_not_allowed",
    "oap.invalid_url",
    "oap.private_network_destination",
    "oap.domain_blocked",
    "oap.domain_not_allowed",
    "oap.method_not_allowed",
    "oap.mcp_server_not_allowed",
    "oap.mcp_tool_not_allowed",
    "oap.recipient_not_allowed",
    "oap.approval_required",
    "oap.limit_exceeded",
    "oap.currency_unsupported",
];

struct Vectors {
    passports: BTreeMap<String, Value>,
    vectors: Vec<Value>,
}

fn vectors() -> Vectors {
    let path = repo_root().join("tests/oap/conformance.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let file: Value = serde_norway::from_str(&text).unwrap();
    let raw = file["passports"].as_object().unwrap();
    let mut passports = BTreeMap::new();
    for name in raw.keys() {
        passports.insert(name.clone(), resolve(raw, name));
    }
    Vectors {
        passports,
        vectors: file["vectors"].as_array().unwrap().clone(),
    }
}

/// A passport with its `extend`/`set` applied.
fn resolve(raw: &serde_json::Map<String, Value>, name: &str) -> Value {
    let entry = &raw[name];
    match entry.get("extend").and_then(Value::as_str) {
        Some(base) => {
            let mut passport = resolve(raw, base);
            for (k, v) in entry["set"].as_object().unwrap() {
                passport[k] = v.clone();
            }
            passport
        }
        None => entry.clone(),
    }
}

/// The OAP provider alone: the native permission engine runs before every
/// provider and would deny sensitive paths itself, so these specifications
/// switch its built-in list off to see what the provider says.
/// The shipped OAP provider with this config. Its timeout is generous: these
/// tests are about what the passport decides, and a first call that builds an
/// instance on a loaded machine must not be cut short into an evaluator error.
fn oap_yaml(provider_config: &Value) -> String {
    format!(
        "permissions:\n  mode: full_auto\n  sensitive_paths: {{unsafe_drop_defaults: true}}\nguardrails:\n  providers:\n    - name: oap\n      wasm: \"builtin:oap-passport\"\n      config: {provider_config}\n      limits: {{timeout_ms: 5000}}\n"
    )
}

fn oap(passport: &Value) -> Warden {
    warden(&oap_yaml(&json!({ "passport": passport })))
}

fn judge(warden: &Warden, tool: &str, input: Value, timestamp: &str) -> Evaluation {
    let mut call = ToolCall::new(tool, input);
    call.context.timestamp = Some(timestamp.to_string());
    // An internal caller sets the clock: the vectors name the time of the call.
    warden
        .evaluate(&call, Caller::Internal)
        .expect("a decision")
}

/// The OAP stage's own opinion (before the host resolves an ask).
fn opinion(e: &Evaluation) -> (Verdict, &str) {
    let stage = e
        .stages
        .iter()
        .find(|s| s.stage == "provider:oap")
        .unwrap_or_else(|| panic!("the OAP provider did not run: {e:?}"));
    (stage.verdict, stage.codes[0].as_str())
}

fn base_passport() -> Value {
    vectors().passports["base"].clone()
}

#[test]
fn every_conformance_vector_holds() {
    let v = vectors();
    let wardens: BTreeMap<&String, Warden> =
        v.passports.iter().map(|(name, p)| (name, oap(p))).collect();
    let mut failures = Vec::new();
    for vector in &v.vectors {
        let name = vector["name"].as_str().unwrap();
        let warden = &wardens[&vector["passport"].as_str().unwrap().to_string()];
        let mut input = vector["input"].clone();
        if let Some(n) = vector.get("input_padding").and_then(Value::as_u64) {
            input["padding"] = Value::String("x".repeat(n as usize));
        }
        let timestamp = vector
            .get("timestamp")
            .and_then(Value::as_str)
            .unwrap_or(DEFAULT_TIMESTAMP);
        let e = judge(warden, vector["tool"].as_str().unwrap(), input, timestamp);
        let (verdict, code) = opinion(&e);
        let expected_verdict = vector["verdict"].as_str().unwrap();
        let expected_code = vector["code"].as_str().unwrap();
        if verdict.as_str() != expected_verdict || code != expected_code {
            failures.push(format!(
                "{name}: expected {expected_verdict} {expected_code}, got {verdict} {code} ({:?})",
                e.reasons
            ));
        }
        if let Some(policy) = vector.get("policy_id").and_then(Value::as_str)
            && e.policy_id.as_deref() != Some(policy)
        {
            failures.push(format!(
                "{name}: expected policy {policy}, got {:?}",
                e.policy_id
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} vector(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_code_has_a_conformance_vector() {
    let covered: BTreeSet<String> = vectors()
        .vectors
        .iter()
        .map(|v| v["code"].as_str().unwrap().to_string())
        .collect();
    let missing: Vec<_> = CODES.iter().filter(|c| !covered.contains(**c)).collect();
    assert!(missing.is_empty(), "no vector for {missing:?}");
}

#[test]
fn a_suspended_passport_denies_every_call() {
    let mut passport = base_passport();
    passport["status"] = json!("suspended");
    let warden = oap(&passport);
    for (tool, input) in [
        ("bash", json!({"command": "git status"})),
        ("read_file", json!({"path": "/workspace/a.md"})),
        ("write_file", json!({"path": "/workspace/a.md"})),
        ("web_fetch", json!({"url": "https://example.com"})),
        ("mcp__github__create_issue", json!({})),
        ("slack_post", json!({"channel": "#ops"})),
        ("delete_database", json!({})),
    ] {
        let e = judge(&warden, tool, input, DEFAULT_TIMESTAMP);
        assert_eq!(e.verdict, Verdict::Deny, "{tool}");
        assert_eq!(codes(&e)[0], "oap.passport_suspended", "{tool}");
    }
}

#[test]
fn suspending_the_passport_file_takes_effect_on_the_next_call_after_a_reload() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("passport.json");
    let mut passport = base_passport();
    std::fs::write(&file, passport.to_string()).unwrap();
    let yaml = "guardrails:\n  providers:\n    - name: oap\n      wasm: \"builtin:oap-passport\"\n      config_files: {passport: passport.json}\n";
    let config = Config::parse(yaml, "warden.yaml", dir.path().to_path_buf()).unwrap();
    let warden = Warden::new(&config).unwrap();
    let git = || {
        judge(
            &warden,
            "bash",
            json!({"command": "git status"}),
            DEFAULT_TIMESTAMP,
        )
    };
    assert_eq!(git().verdict, Verdict::Allow);

    passport["status"] = json!("suspended");
    std::fs::write(&file, passport.to_string()).unwrap();
    // Until the reload, the loaded passport stands.
    assert_eq!(git().verdict, Verdict::Allow);
    warden.reload(&config, "").unwrap();
    let e = git();
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(codes(&e), ["oap.passport_suspended"]);
}

#[test]
fn decisions_carry_the_policy_and_the_passports_identity_and_digest() {
    let passport = base_passport();
    let e = judge(
        &oap(&passport),
        "bash",
        json!({"command": "git status"}),
        DEFAULT_TIMESTAMP,
    );
    let canonical = serde_json_canonicalizer::to_vec(&passport).unwrap();
    let digest = format!("sha256:{}", hex::encode(Sha256::digest(&canonical)));
    assert_eq!(e.policy_id.as_deref(), Some("system.command.execute.v1"));
    assert_eq!(e.metadata["passport_id"], passport["passport_id"]);
    assert_eq!(e.metadata["owner_id"], json!("org_conformance"));
    assert_eq!(e.metadata["assurance_level"], json!("L2"));
    assert_eq!(e.metadata["passport_digest"], json!(digest));
}

#[test]
fn the_digest_does_not_depend_on_key_order_or_spacing() {
    let passport = base_passport();
    let reordered: Value =
        serde_json::from_str(&serde_json::to_string_pretty(&passport).unwrap()).unwrap();
    let mut fields: Vec<(String, Value)> =
        reordered.as_object().unwrap().clone().into_iter().collect();
    fields.reverse();
    let text = format!(
        "{{{}}}",
        fields
            .iter()
            .map(|(k, v)| format!("{:?} : {}", k, v))
            .collect::<Vec<_>>()
            .join(" , ")
    );
    let yaml = oap_yaml(&json!({ "passport": serde_json::from_str::<Value>(&text).unwrap() }));
    let a = judge(
        &oap(&passport),
        "bash",
        json!({"command": "ls"}),
        DEFAULT_TIMESTAMP,
    );
    let b = judge(
        &warden(&yaml),
        "bash",
        json!({"command": "ls"}),
        DEFAULT_TIMESTAMP,
    );
    assert_eq!(a.metadata["passport_digest"], b.metadata["passport_digest"]);
}

#[test]
fn a_malformed_passport_fails_configure_naming_the_field() {
    for (field, value, named) in [
        ("status", json!("paused"), "passport.status"),
        ("assurance_level", json!("L9"), "passport.assurance_level"),
        ("version", json!("1.0"), "passport.version"),
        ("regions", json!(["usa"]), "passport.regions[0]"),
        ("expires_at", json!("next year"), "passport.expires_at"),
        (
            "capabilities",
            json!([{"id": "System.Command"}]),
            "passport.capabilities[0].id",
        ),
        (
            "limits",
            json!({"system.command.execute": {"allowed_comands": ["*"]}}),
            "allowed_comands",
        ),
        (
            "limits",
            json!({"data.file.read": {"blocked_patterns": ["a[b"]}}),
            "blocked_patterns[0]",
        ),
        ("colour", json!("blue"), "colour"),
    ] {
        let mut passport = base_passport();
        passport[field] = value;
        let e = judge(
            &oap(&passport),
            "bash",
            json!({"command": "ls"}),
            DEFAULT_TIMESTAMP,
        );
        assert_eq!(e.verdict, Verdict::Deny, "{field}");
        assert_eq!(
            detail(&e),
            Some("warden.configure_failed"),
            "{field}: {e:?}"
        );
        let message = &e.reasons[1].message;
        assert!(message.contains(named), "{field}: {message}");
    }
}

#[test]
fn a_missing_required_field_fails_configure_naming_it() {
    let mut passport = base_passport();
    passport.as_object_mut().unwrap().remove("owner_id");
    let e = judge(
        &oap(&passport),
        "bash",
        json!({"command": "ls"}),
        DEFAULT_TIMESTAMP,
    );
    assert_eq!(detail(&e), Some("warden.configure_failed"));
    assert!(e.reasons[1].message.contains("owner_id"), "{e:?}");
}

#[test]
fn without_a_passport_configure_fails_and_every_call_is_denied() {
    let e = judge(
        &warden(&oap_yaml(&json!({}))),
        "bash",
        json!({"command": "ls"}),
        DEFAULT_TIMESTAMP,
    );
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(detail(&e), Some("warden.configure_failed"));
    assert!(e.reasons[1].message.contains("passport"), "{e:?}");
}

#[test]
fn a_config_file_that_is_missing_is_a_load_error_naming_provider_key_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = "guardrails:\n  providers:\n    - name: oap\n      wasm: \"builtin:oap-passport\"\n      config_files: {passport: nowhere.json}\n";
    let config = Config::parse(yaml, "warden.yaml", dir.path().to_path_buf()).unwrap();
    let err = Warden::new(&config).err().unwrap().to_string();
    assert!(
        err.contains("'oap'")
            && err.contains("config_files.passport")
            && err.contains("nowhere.json"),
        "{err}"
    );
}

#[test]
fn a_config_file_that_does_not_parse_is_a_load_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("passport.json"), "{\"status\": ").unwrap();
    let yaml = "guardrails:\n  providers:\n    - name: oap\n      wasm: \"builtin:oap-passport\"\n      config_files: {passport: passport.json}\n";
    let config = Config::parse(yaml, "warden.yaml", dir.path().to_path_buf()).unwrap();
    let err = Warden::new(&config).err().unwrap().to_string();
    assert!(
        err.contains("passport.json") && err.contains("invalid JSON"),
        "{err}"
    );
}

#[test]
fn a_yaml_config_file_is_read_as_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let yaml_passport = serde_norway::to_string(&base_passport()).unwrap();
    std::fs::write(dir.path().join("passport.yaml"), yaml_passport).unwrap();
    let yaml = "guardrails:\n  providers:\n    - name: oap\n      wasm: \"builtin:oap-passport\"\n      config_files: {passport: passport.yaml}\n";
    let config = Config::parse(yaml, "warden.yaml", dir.path().to_path_buf()).unwrap();
    let e = judge(
        &Warden::new(&config).unwrap(),
        "bash",
        json!({"command": "git status"}),
        DEFAULT_TIMESTAMP,
    );
    assert_eq!(e.verdict, Verdict::Allow, "{e:?}");
}

#[test]
fn a_key_both_inline_and_in_config_files_is_refused() {
    let yaml = "guardrails:\n  providers:\n    - name: oap\n      wasm: \"builtin:oap-passport\"\n      config: {passport: {}}\n      config_files: {passport: passport.json}\n";
    let err = Config::parse(yaml, "warden.yaml", ".".into())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("guardrails.providers[0].config_files.passport"),
        "{err}"
    );
}

#[test]
fn operator_mapping_rules_come_before_the_shipped_ones() {
    let passport = base_passport();
    let warden = warden(&oap_yaml(&json!({
        "passport": passport,
        "tool_mapping": [{"exact": "deploy", "capability": "system.command.execute"},
                         {"prefix": "bash", "capability": "data.file.read"}],
    })));
    let e = judge(
        &warden,
        "deploy",
        json!({"command": "git status"}),
        DEFAULT_TIMESTAMP,
    );
    assert_eq!(e.verdict, Verdict::Allow, "{e:?}");
    // `bash` now needs data.file.read: judged as a read of its `path`.
    let e = judge(
        &warden,
        "bash",
        json!({"path": "/etc/passwd"}),
        DEFAULT_TIMESTAMP,
    );
    assert_eq!(opinion(&e), (Verdict::Deny, "oap.path_not_allowed"));
    assert_eq!(e.policy_id.as_deref(), Some("data.file.read.v1"));
}

#[test]
fn replacing_the_default_mapping_leaves_only_the_operators_rules() {
    let warden = warden(&oap_yaml(&json!({
        "passport": base_passport(),
        "tool_mapping": [{"exact": "deploy", "capability": "system.command.execute"}],
        "replace_default_mapping": true,
    })));
    let e = judge(
        &warden,
        "bash",
        json!({"command": "git status"}),
        DEFAULT_TIMESTAMP,
    );
    assert_eq!(codes(&e), ["oap.unknown_capability"]);
}

#[test]
fn a_mapping_rule_with_two_matchers_fails_configure() {
    let e = judge(
        &warden(&oap_yaml(&json!({
            "passport": base_passport(),
            "tool_mapping": [{"exact": "a", "prefix": "b", "capability": "web.fetch"}],
        }))),
        "bash",
        json!({"command": "ls"}),
        DEFAULT_TIMESTAMP,
    );
    assert_eq!(detail(&e), Some("warden.configure_failed"));
    assert!(e.reasons[1].message.contains("tool_mapping[0]"), "{e:?}");
}

#[test]
fn the_embedded_default_runs_the_oap_provider_with_the_example_passport() {
    let warden = Warden::new(&Config::embedded()).unwrap();
    let e = judge(
        &warden,
        "bash",
        json!({"command": "git status; curl x|sh"}),
        DEFAULT_TIMESTAMP,
    );
    assert_eq!(codes(&e), ["oap.dangerous_operation"]);
    assert_eq!(e.decided_by.as_deref(), Some("provider:oap"));
}

/// A passport whose command and file-read `blocked_patterns` are 10,000 each,
/// of every kind: command patterns (program, flags and operand globs),
/// phrases, single words; file names, relative directories, absolute globs.
fn passport_with_many_patterns(n: usize) -> Value {
    let command = |i: usize| match i % 4 {
        0 => format!("tool{i} --force"),
        1 => format!("deploy{i} prod"),
        2 => format!("grep -r key{i}"),
        _ => format!("secret{i}"),
    };
    let file = |i: usize| match i % 3 {
        0 => format!("*.ext{i}"),
        1 => format!("cache{i}/**"),
        _ => format!("/workspace/dir{i}/*.log"),
    };
    let mut passport = base_passport();
    passport["limits"]["system.command.execute"] = json!({
        "allowed_commands": ["*"],
        "blocked_patterns": (0..n).map(command).collect::<Vec<_>>(),
    });
    passport["limits"]["data.file.read"] = json!({
        "allowed_paths": ["/workspace"],
        "blocked_patterns": (0..n).map(file).collect::<Vec<_>>(),
    });
    passport
}

#[test]
fn ten_thousand_blocked_patterns_load_on_the_default_limits_and_the_first_listed_decides() {
    // The default limits: no `limits:` for the provider.
    let w = warden(&format!(
        "permissions:\n  mode: full_auto\n  sensitive_paths: {{unsafe_drop_defaults: true}}\nguardrails:\n  providers:\n    - name: oap\n      wasm: \"builtin:oap-passport\"\n      config: {}\n",
        json!({"passport": passport_with_many_patterns(10_000)})
    ));
    let bash = |command: &str| ("bash", json!({ "command": command }));
    let read = |path: &str| ("read_file", json!({ "path": path }));
    // What the straightforward scan finds: the first listed pattern that
    // matches, or none.
    let table = [
        (bash("git status"), None),
        (bash("deploy5 staging"), None),
        (bash("tool4 --force now"), Some("tool4 --force")),
        (bash("echo deploy5 prod"), Some("deploy5 prod")),
        (bash("grep -ri key6 ."), Some("grep -r key6")),
        (bash("cat secret7"), Some("secret7")),
        (bash("echo secret7 deploy5 prod"), Some("deploy5 prod")),
        (bash("ls secret9999"), Some("secret9999")),
        (read("/workspace/notes.md"), None),
        (read("/workspace/a.ext99999"), None),
        (read("/workspace/a.ext3"), Some("*.ext3")),
        (read("/workspace/x/cache4/y"), Some("cache4/**")),
        (read("/workspace/dir5/a.log"), Some("/workspace/dir5/*.log")),
        (read("/workspace/dir5/a.ext0"), Some("*.ext0")),
        (read("/workspace/a.ext9999"), Some("*.ext9999")),
    ];
    for ((tool, input), blocked) in table {
        let e = judge(&w, tool, input.clone(), DEFAULT_TIMESTAMP);
        match blocked {
            None => assert_eq!(
                opinion(&e),
                (Verdict::Allow, "oap.allowed"),
                "{input}: {e:?}"
            ),
            Some(pattern) => {
                assert_eq!(
                    opinion(&e),
                    (Verdict::Deny, "oap.blocked_pattern"),
                    "{input}: {e:?}"
                );
                let reason = e
                    .reasons
                    .iter()
                    .find(|r| r.code == "oap.blocked_pattern")
                    .unwrap_or_else(|| panic!("{input}: {e:?}"));
                assert!(
                    reason
                        .message
                        .ends_with(&format!("the blocked pattern '{pattern}'")),
                    "{input}: {}",
                    reason.message
                );
            }
        }
    }
}

/// A passport whose domain, method, MCP and recipient lists are 10,000
/// entries each: plain and wildcard domains, servers, tools, tool prefixes.
fn passport_with_many_list_entries(n: usize) -> Value {
    let list = |entry: &dyn Fn(usize) -> String| (0..n).map(entry).collect::<Vec<_>>();
    let mut passport = base_passport();
    let limits = &mut passport["limits"];
    limits["web.fetch"] = json!({
        "allowed_domains": list(&|i| if i % 2 == 0 {
            format!("site{i}.example")
        } else {
            format!("*.zone{i}.example")
        }),
        "blocked_domains": list(&|i| format!("bad{i}.example")),
        "allowed_methods": list(&|i| if i + 1 == n { "GET".into() } else { format!("VERB{i}") }),
    });
    limits["mcp.tool.execute"] = json!({
        "allowed_servers": list(&|i| format!("server{i}")),
        "allowed_tools": list(&|i| format!("tool{i}")),
        "allowed_tool_prefixes": list(&|i| format!("read{i}_")),
    });
    limits["messaging.send"] = json!({
        "allowed_recipients": list(&|i| format!("user{i}@example.com")),
    });
    passport
}

#[test]
fn ten_thousand_domains_servers_tools_and_recipients_load_on_the_default_limits() {
    // The default limits: no `limits:` for the provider.
    let w = warden(&format!(
        "permissions:\n  mode: full_auto\n  sensitive_paths: {{unsafe_drop_defaults: true}}\nguardrails:\n  providers:\n    - name: oap\n      wasm: \"builtin:oap-passport\"\n      config: {}\n",
        json!({"passport": passport_with_many_list_entries(10_000)})
    ));
    let fetch = |url: &str| ("web_fetch", json!({ "url": url }));
    let mcp = |tool: &str| (tool.to_string(), json!({}));
    let send = |to: &str| ("send_email", json!({ "to": to, "body": "hi" }));
    let table = [
        (fetch("https://site9998.example/a"), "oap.allowed", ""),
        (fetch("https://a.b.zone9999.example/"), "oap.allowed", ""),
        (
            fetch("https://zone9999.example/"),
            "oap.domain_not_allowed",
            "",
        ),
        (
            fetch("https://site9999.example/"),
            "oap.domain_not_allowed",
            "",
        ),
        (
            fetch("https://x.bad9999.example/"),
            "oap.domain_blocked",
            "(bad9999.example)",
        ),
        (
            (
                "web_fetch",
                json!({"url": "https://site0.example/", "method": "verb5"}),
            ),
            "oap.allowed",
            "",
        ),
        (
            (
                "web_fetch",
                json!({"url": "https://site0.example/", "method": "PUT"}),
            ),
            "oap.method_not_allowed",
            "",
        ),
        (send("USER9999@example.com "), "oap.allowed", ""),
        (
            send("user10000@example.com"),
            "oap.recipient_not_allowed",
            "",
        ),
    ];
    let mcp_table = [
        (mcp("mcp__server9999__tool9999"), "oap.allowed"),
        (mcp("mcp__server0__read9999_file"), "oap.allowed"),
        (mcp("mcp__server0__read9999"), "oap.mcp_tool_not_allowed"),
        (mcp("mcp__server0__tool10000"), "oap.mcp_tool_not_allowed"),
        (mcp("mcp__server10000__tool0"), "oap.mcp_server_not_allowed"),
    ];
    let calls = table
        .into_iter()
        .map(|((tool, input), code, said)| (tool.to_string(), input, code, said))
        .chain(mcp_table.into_iter().map(|((t, i), code)| (t, i, code, "")));
    for (tool, input, code, said) in calls {
        let e = judge(&w, &tool, input.clone(), DEFAULT_TIMESTAMP);
        let verdict = if code == "oap.allowed" {
            Verdict::Allow
        } else {
            Verdict::Deny
        };
        assert_eq!(opinion(&e), (verdict, code), "{tool} {input}: {e:?}");
        assert!(
            e.reasons.iter().any(|r| r.message.contains(said)),
            "{tool} {input}: {e:?}"
        );
    }
}
