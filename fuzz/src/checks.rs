//! What must hold for any input, whatever a model wrote: no panic, and the
//! invariants below. Each function is one fuzz target; the corpus replay test
//! (`crates/approval/tests/all/fuzz_corpus.rs`) runs the same functions on every
//! corpus entry and every regression against the real crates, through its own
//! `wire` module.

use std::collections::HashSet;

use warden_analysis::{path, shell};
use warden_policy::redact::Redactor;

use super::wire::{
    AiMessage, Asserts, Caller, SourceMap, ToolCall, admit, list_calls, parse_model_response,
    read_yaml, reads_alike, split_pg_url,
};

/// The shell parser and flattener: any text is analysed without a panic, and
/// what the analysis reports points into itself.
pub fn shell(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let analysis = shell::analyze(text);
    for function in &analysis.functions {
        assert!(function.commands.start <= function.commands.end);
        assert!(function.commands.end <= analysis.commands.len());
    }
    for i in 0..analysis.commands.len() {
        let upstream = analysis.upstream(i);
        assert!(upstream.iter().all(|&j| j < analysis.commands.len()));
    }
}

/// The path canonicaliser: `PATH\0CWD\0HOME` (the last two optional, used
/// when absolute). Canonicalising is idempotent, and the comparison form and
/// the look-alike check take anything.
pub fn path(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.split('\0');
    let raw = parts.next().unwrap_or_default();
    let cwd = parts.next().filter(|p| p.starts_with('/'));
    let home = parts.next().filter(|p| p.starts_with('/'));
    let once = path::canonicalize(raw, cwd, home);
    let twice = path::canonicalize(&once, cwd, home);
    assert_eq!(once, twice, "canonicalize({raw:?}, {cwd:?}, {home:?})");
    let _ = path::comparison_form(&once);
    let _ = path::find_suspicious(raw);
}

/// The request parser: a request that parses is valid, reads back as itself,
/// and is believed on no attribution field unless the caller may assert it.
pub fn request(data: &[u8]) {
    let Ok(call) = ToolCall::from_json(data) else {
        return;
    };
    assert!(call.validate().is_ok(), "a parsed request validates");
    let text = serde_json::to_string(&call).expect("a request serialises");
    let again = ToolCall::from_json(text.as_bytes()).expect("a serialised request parses");
    assert_eq!(text, serde_json::to_string(&again).unwrap());
    let agent = admit(&call, Caller::Agent);
    assert_eq!(
        (
            agent.user_role,
            agent.user_id,
            agent.oauth_provider,
            agent.oauth_id
        ),
        (None, None, None, None),
        "an agent is believed on no attribution field"
    );
    let internal = admit(&call, Caller::Internal);
    assert!(internal.dropped.is_empty());
    if let Some(claimed) = &call.context.timestamp {
        assert_eq!(&internal.judged_at, claimed);
    }
    let _ = admit(&call, Caller::Asserting(Asserts::ALL));
}

/// The model-response parser and the surface check: once the unaddressable
/// calls and the unjudged entries are removed, every surface agrees with the
/// call list, and still does after a call's arguments are edited.
pub fn model_response(data: &[u8]) {
    // What cannot be parsed whole is still read for its calls (no panic, any
    // depth); what parses whole, it lists call for call.
    let listed = list_calls(data);
    let Some(message) = parse_model_response(data) else {
        return;
    };
    let calls = |m: &AiMessage| -> Vec<(Option<String>, String)> {
        m.tool_calls
            .iter()
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect()
    };
    // serde also reads a struct from an array of its fields in order, at any
    // level; the listing reads a body, its message and its calls as the
    // objects every harness sends, and a body it does not list has no call
    // answered by name (as before it existed).
    if sent_as_objects(data) {
        let listed = listed.expect("a model response object that parses is listed");
        assert_eq!(calls(&listed), calls(&message));
    }
    let problems = message.addressability();
    assert_eq!(problems.len(), message.tool_calls.len());
    let removed: HashSet<Option<String>> = message
        .tool_calls
        .iter()
        .zip(&problems)
        .filter(|(_, p)| p.is_some())
        .map(|(c, _)| c.id.clone())
        .collect();
    let mismatches = message.surface_mismatches(&removed);
    let mut cleaned: AiMessage = message.clone();
    cleaned.remove_mismatched(&mismatches);
    cleaned.remove_calls(&removed);
    let left = cleaned.surface_mismatches(&HashSet::new());
    assert!(left.is_empty(), "still unjudged after removal: {left:?}");
    assert!(cleaned.addressability().iter().all(Option::is_none));
    // An edit on resume reaches every surface in its own form, or the entry
    // that cannot carry it goes: the surfaces still agree.
    if let Some(id) = cleaned.tool_calls.first().and_then(|c| c.id.clone()) {
        cleaned.replace_args(&id, &serde_json::json!({"__arg1": "edited", "n": [1]}));
        let left = cleaned.surface_mismatches(&HashSet::new());
        assert!(left.is_empty(), "disagreeing after an edit: {left:?}");
    }
}

/// Whether a model response that parses was sent in the objects' form: the
/// body, its message and each of its calls an object, not an array of fields.
fn sent_as_objects(data: &[u8]) -> bool {
    let Ok(serde_json::Value::Object(body)) = serde_json::from_slice(data) else {
        return false;
    };
    let Some(serde_json::Value::Object(message)) = body.get("message") else {
        return false;
    };
    message
        .get("tool_calls")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|calls| calls.iter().all(serde_json::Value::is_object))
}

/// The redactor, on whatever text a model wrote (a command, an id, a tool
/// name): no panic, and redacting twice changes nothing more.
pub fn redact(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let redactor = Redactor::builtin();
    let once = redactor.redact(text);
    assert_eq!(redactor.redact(&once), once, "redact({text:?})");
}

/// The DeepCode config reader (`warden rules import --from deepcode`): no
/// panic; what it emits loads in Warden's permission engine (the import checks
/// that itself, so an error naming the emitted block is this check failing),
/// and the same file imports the same way twice.
pub fn deepcode_config(data: &[u8]) {
    use warden_policy::deepcode_import::{ImportError, import};
    match import(data) {
        Ok(first) => {
            let second = import(data).expect("an imported config imports again");
            assert_eq!(first.permissions, second.permissions);
        }
        Err(ImportError::Unsupported { rule, message }) => {
            assert!(!rule.starts_with("the emitted"), "{rule}: {message}");
        }
        Err(ImportError::Malformed { .. }) => {}
    }
}

/// The policy test suite reader (`warden policy test SUITE.yaml`,
/// `warden_policy::suite`): no panic; a suite read has a case, every case's
/// request validates as a request does, and the same text reads the same way
/// twice.
pub fn policy_suite(data: &[u8]) {
    use warden_policy::suite::Suite;
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(suite) = Suite::parse(text, "suite.yaml") {
        assert!(!suite.cases.is_empty());
        for case in &suite.cases {
            case.request.validate().expect("a case's request validates");
        }
        let again = Suite::parse(text, "suite.yaml").expect("a suite read reads again");
        let names = |s: &Suite| s.cases.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&suite), names(&again));
    }
}

/// The PostgreSQL URL reader (`hitl_approval.store`'s URL, from the
/// environment; `warden_approval::postgres_url`): no panic; what it leaves for
/// the client names neither `sslmode` nor `sslrootcert`, and a URL's is left
/// the same when read again.
pub fn pg_url(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(split) = split_pg_url(text) else {
        return;
    };
    let again = split_pg_url(&split.rest).expect("what is left reads again");
    assert!(
        again.mode.is_none() && again.root_cert.is_none(),
        "{text:?}"
    );
    if text.starts_with("postgres://") || text.starts_with("postgresql://") {
        assert_eq!(again.rest, split.rest);
    }
}

/// Configuration text read by the JSON parser
/// (`warden_runtime::json_config`): where it says the text reads alike and
/// serde_json reads it, the YAML reader reads the same values (the same
/// JSON, so the same kinds of number and the same signs), and its lines are
/// the YAML event parser's wherever that one reads the text.
pub fn config_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if !reads_alike(text) {
        return;
    }
    let Ok(json) = serde_json::from_str::<serde_json::Value>(text) else {
        return;
    };
    let yaml = read_yaml(text).unwrap_or_else(|err| panic!("YAML refuses {text:?}: {err}"));
    assert_eq!(json.to_string(), yaml.to_string(), "{text:?}");
    let events = SourceMap::of_yaml_events(text, "f");
    if !events.is_empty() {
        assert_eq!(SourceMap::of_yaml(text, "f"), events, "{text:?}");
    }
}
