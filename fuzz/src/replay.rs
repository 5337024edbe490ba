//! The decision log's replay reader (`warden replay`) on any bytes, line by
//! line. It must never panic, and it never invents: a line it rebuilds into a
//! call logged every argument of that call and left nothing out, redacted or
//! cut, and the call it rebuilds is one the request parser accepts. Shared
//! with the corpus replay test (`crates/log/tests/all/fuzz_corpus.rs`):
//! `replay_wire` is what each side gives it.

use serde_json::{Map, Value};

use super::replay_wire::{Entry, read_line};

pub fn log_replay(data: &[u8]) {
    for line in data.split(|&b| b == b'\n') {
        let Entry::Call(logged) = read_line(line) else {
            continue;
        };
        let object: Map<String, Value> =
            serde_json::from_slice(line).expect("a line rebuilt into a call is a JSON object");
        let logged_names = object["arguments"]
            .as_object()
            .expect("a rebuilt call had its arguments logged")
            .keys()
            .collect::<std::collections::BTreeSet<_>>();
        let input = logged
            .call
            .tool_input
            .as_object()
            .expect("tool_input is an object");
        let rebuilt_names = input.keys().collect::<std::collections::BTreeSet<_>>();
        assert_eq!(
            rebuilt_names, logged_names,
            "an argument was invented or lost"
        );
        for kept_out in ["omitted", "redacted", "cut"] {
            let list = &object["replay"][kept_out];
            assert!(
                list.is_null() || list.as_array().is_some_and(Vec::is_empty),
                "a line with {kept_out} arguments was rebuilt"
            );
        }
        assert_eq!(object["tool_name"], logged.call.tool_name.as_str());
        assert_eq!(
            logged.call.context.timestamp.as_deref(),
            object["judged_at"].as_str(),
            "a rebuilt call is judged at the time the live call was"
        );
        logged.call.validate().expect("a rebuilt call validates");
    }
}
