//! What the approval gate answers: per call run / denied / pending, the rewritten
//! message, the run's state, and the pending approval a human must answer. These
//! are the bodies of the daemon's tool-calls, approvals and resume routes, so
//! they are wire types in `warden-types`; this module keeps their old path.

pub use warden_types::approval::{
    ApprovalRequest, ApprovalStatus, CallOutcome, CallStatus, DecisionKind, GateOutcome,
    Resolution, ResolvedBy, RunState,
};
