//! How long one judgement can take at most under a configuration, so that
//! `warden.Warden` can tell whether a call may be judged on an asyncio event
//! loop (inline) or must go to a worker thread.
//!
//! The sandboxed components are what can take long: each provider, and the
//! classifier triage may consult, runs under its own limits, and each one's
//! worst case is the runtime's (`Limits::worst_case`: the wait for a free
//! instance, configuring a new one, the call). The native stages before and
//! after them do work that grows with the call's size, which the request
//! limits bound; they are not counted here.

use std::time::Duration;

use warden::Snapshot;

/// The sum of the worst cases of every component a call can run through:
/// the providers (when `guardrails.enabled`) and the classifier.
pub fn worst_case(snapshot: &Snapshot) -> Duration {
    let providers: Duration = if snapshot.guardrails.enabled {
        snapshot
            .providers
            .providers()
            .iter()
            .map(|p| p.limits().worst_case())
            .sum()
    } else {
        Duration::ZERO
    };
    let classifier = snapshot
        .classifier
        .as_ref()
        .map_or(Duration::ZERO, |c| c.limits().worst_case());
    providers + classifier
}
