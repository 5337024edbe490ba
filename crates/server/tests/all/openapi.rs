//! `docs/openapi.json` is generated: the paths, operations and security come
//! from the hand-written skeleton `crates/server/openapi-template.json`, and
//! every schema under `components.schemas` from the wire types
//! (`warden-types`, feature `schema`). This test fails when the committed
//! document differs from what the types give, so that the document cannot
//! drift from what the daemon sends; with `WARDEN_BLESS=1` it writes the
//! document instead.

use std::path::PathBuf;

use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value};
use warden_types::admin::{Health, ProviderList, ProviderStatus, ReloadReport};
use warden_types::approval::{
    ApprovalPage, ApprovalRequest, ApprovalView, CallOutcome, ClearRequest, GateOutcome, Grant,
    GrantList, InteractionAnswer, InteractionQuery, McpAskAnswer, McpAttestation, ModelResponse,
    Resolution, ResumeRequest, RevokeRequest,
};
use warden_types::error::ErrorBody;
use warden_types::tools::{OfferAnswer, OfferQuery};
use warden_types::{Evaluation, StageReport, ToolCall};

/// How to regenerate the document (also in docs/daemon.md).
const BLESS: &str = "WARDEN_BLESS=1 cargo test -p warden-server --test all openapi";

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn generator(settings: SchemaSettings) -> SchemaGenerator {
    settings
        .with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        })
        .into_generator()
}

fn add<T: JsonSchema>(generator: &mut SchemaGenerator) {
    generator.subschema_for::<T>();
}

/// Every schema of the document, by name. Request bodies are described as the
/// daemon reads them (a field with a default may be left out); answers as it
/// writes them (a field it always writes is required). A type that is both
/// (the AI message) is described as a request, the looser of the two.
fn schemas() -> Map<String, Value> {
    // OpenAPI 3.1 schemas are JSON Schema 2020-12.
    let mut requests = generator(SchemaSettings::draft2020_12().for_deserialize());
    add::<ToolCall>(&mut requests);
    add::<ModelResponse>(&mut requests);
    add::<ResumeRequest>(&mut requests);
    add::<ClearRequest>(&mut requests);
    add::<RevokeRequest>(&mut requests);
    add::<InteractionQuery>(&mut requests);
    add::<OfferQuery>(&mut requests);
    add::<McpAttestation>(&mut requests);

    let mut answers = generator(SchemaSettings::draft2020_12().for_serialize());
    add::<Evaluation>(&mut answers);
    add::<StageReport>(&mut answers);
    add::<GateOutcome>(&mut answers);
    add::<CallOutcome>(&mut answers);
    add::<ApprovalRequest>(&mut answers);
    add::<ApprovalPage>(&mut answers);
    add::<ApprovalView>(&mut answers);
    add::<Resolution>(&mut answers);
    add::<Grant>(&mut answers);
    add::<GrantList>(&mut answers);
    add::<InteractionAnswer>(&mut answers);
    add::<OfferAnswer>(&mut answers);
    add::<McpAskAnswer>(&mut answers);
    add::<ReloadReport>(&mut answers);
    add::<ProviderList>(&mut answers);
    add::<ProviderStatus>(&mut answers);
    add::<Health>(&mut answers);
    add::<ErrorBody>(&mut answers);

    let mut schemas = requests.take_definitions(true);
    for (name, schema) in answers.take_definitions(true) {
        schemas.entry(name).or_insert(schema);
    }
    schemas
}

/// The whole document: the skeleton with the generated schemas.
fn generate() -> Value {
    let template = std::fs::read_to_string(repo_root().join("crates/server/openapi-template.json"))
        .expect("crates/server/openapi-template.json");
    let mut doc: Value = serde_json::from_str(&template).expect("the template is JSON");
    doc["components"]["schemas"] = Value::Object(schemas());
    doc
}

/// Every `$ref` in `value`.
fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(target)) => out.push(target.clone()),
                    _ => refs(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[test]
fn the_committed_openapi_document_is_what_the_types_generate() {
    let generated = generate();
    let path = repo_root().join("docs/openapi.json");
    if std::env::var_os("WARDEN_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
        std::fs::write(&path, text).unwrap();
        return;
    }
    let committed: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .expect("docs/openapi.json is JSON");
    assert!(
        committed == generated,
        "docs/openapi.json differs from what the wire types (warden-types) and \
         crates/server/openapi-template.json generate; regenerate it with `{BLESS}` \
         and commit the result"
    );
}

#[test]
fn every_schema_the_openapi_document_refers_to_is_generated() {
    let doc = generate();
    let mut found = Vec::new();
    refs(&doc, &mut found);
    for target in found {
        let name = target
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{target} points outside components.schemas"));
        assert!(
            doc["components"]["schemas"].get(name).is_some(),
            "{target} is not generated: add its type to `schemas()`"
        );
    }
}
