//! A paused call's full arguments are kept while its approval is pending and,
//! once it is resolved, for the replay window only; then they leave the disk,
//! leaving their digests (the journal's) in the record.

use super::common::approval::*;
use serde_json::json;
use warden_approval::purge::{PURGED_KEY, REPLAY_WINDOW_MS};
use warden_approval::ListFilter;

const SECRET: &str = "sk-live-4f2a9c7e1b3d5f60";

fn paused_with_secret(g: &TestGate) -> warden_approval::GateOutcome {
    g.submit(
        "t1",
        "r1",
        &serde_json::from_value(json!({"message": {
            "tool_calls": [{"id": "c1", "name": "bash", "args": {"command": format!("deploy --key {SECRET}")}}],
            "raw_tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash",
                "arguments": json!({"command": format!("deploy --key {SECRET}")}).to_string()}}]
        }}))
        .unwrap(),
    )
}

/// Everything the store keeps, as text.
fn on_disk(g: &TestGate) -> String {
    g.stored_text()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[test]
fn a_pending_approval_keeps_its_arguments() {
    let g = gate(BASH_NEEDS_APPROVAL);
    paused_with_secret(&g);
    assert_eq!(
        g.gate
            .purge_resolved_at(now_ms() + 2 * REPLAY_WINDOW_MS)
            .unwrap(),
        0
    );
    let view = &g.gate.approvals(&ListFilter::default()).unwrap()[0];
    assert!(view.requests[0].args.to_string().contains(SECRET));
}

#[test]
fn a_resolved_approval_keeps_its_arguments_for_the_replay_window() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused_with_secret(&g);
    g.resume("t1", &o, &approve_all(&o)).unwrap();
    assert_eq!(g.gate.purge_resolved().unwrap(), 0);
    let replayed = g.resume("t1", &o, &approve_all(&o)).unwrap();
    assert!(replayed.replayed);
    assert!(replayed.calls[0].args.to_string().contains(SECRET));
}

#[test]
fn after_the_replay_window_the_arguments_leave_the_disk_and_their_digests_stay() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused_with_secret(&g);
    g.resume("t1", &o, &approve_all(&o)).unwrap();
    assert_eq!(
        g.gate
            .purge_resolved_at(now_ms() + REPLAY_WINDOW_MS + 1)
            .unwrap(),
        1
    );
    assert!(
        !on_disk(&g).contains(SECRET),
        "no copy left in the store's files"
    );

    let store = g.open_store();
    let record = store
        .get(o.approval_id.as_deref().unwrap())
        .unwrap()
        .unwrap();
    let digest = record.message.tool_calls[0].args[PURGED_KEY]
        .as_str()
        .unwrap()
        .to_string();
    let journal = store.events(&Default::default()).unwrap();
    assert_eq!(
        journal[1].calls[0].args_sha256, digest,
        "the journal's digest"
    );
    let resolution = record.resolution.unwrap();
    assert_eq!(resolution.calls[0].args[PURGED_KEY], digest);
    assert!(record.message.raw_tool_calls.is_none());
}

#[test]
fn a_purge_is_done_once() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused_with_secret(&g);
    g.resume("t1", &o, &approve_all(&o)).unwrap();
    let later = now_ms() + REPLAY_WINDOW_MS + 1;
    assert_eq!(g.gate.purge_resolved_at(later).unwrap(), 1);
    assert_eq!(g.gate.purge_resolved_at(later).unwrap(), 0);
}
