//! The manifest `export!` writes is JSON the host reads: name, version,
//! contract and the author's schema, escaped where it must be.

use warden_provider::__private::{CONTRACT, manifest};

fn written(name: &str, version: &str, schema: Option<&str>) -> serde_json::Value {
    let (bytes, len) = manifest::<512>(name, version, schema);
    assert_eq!(
        manifest::<0>(name, version, schema).1,
        len,
        "the length pass agrees"
    );
    serde_json::from_slice(&bytes[..len]).expect("the manifest is JSON")
}

#[test]
fn the_manifest_names_the_provider_version_contract_and_schema() {
    let value = written("blocklist", "1.2.3", Some(r#"{"type":"object"}"#));
    assert_eq!(
        value,
        serde_json::json!({
            "name": "blocklist",
            "version": "1.2.3",
            "contract": CONTRACT,
            "config_schema": {"type": "object"},
        })
    );
}

#[test]
fn without_a_schema_the_manifest_has_none() {
    let value = written("a", "0.1.0", None);
    assert!(value.get("config_schema").is_none(), "{value}");
}

#[test]
fn a_name_with_quotes_and_control_characters_stays_json() {
    let value = written("we\"ird\\\n", "0.1.0", None);
    assert_eq!(value["name"], "we\"ird\\\n");
}

#[test]
fn the_contract_is_the_one_in_the_wit() {
    let wit = include_str!("../wit/guardrail.wit");
    assert!(wit.contains(&format!("package {CONTRACT};")), "{CONTRACT}");
}
