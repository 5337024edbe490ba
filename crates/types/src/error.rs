//! The daemon's JSON error body, and why the approval gate refused a request,
//! each with the HTTP status and the stable code the error body carries. The
//! codes are part of the wire contract, so they live with the other wire types.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::request::RequestError;
use crate::resolved::{ApprovalStatus, ResolvedBy};

/// A pending request, as an error names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PendingRequest {
    /// The request's id within its approval (`req_…`), as a decision names it.
    pub request_id: String,
    /// The model's tool call id; null when the message gave none.
    pub tool_call_id: Option<String>,
    /// The tool's name, as the model called it.
    pub tool_name: String,
}

/// How a resume's decisions differ from the pending requests.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Mismatch {
    /// Pending request ids that got no decision.
    pub missing: Vec<String>,
    /// Decided ids that are not pending.
    pub extra: Vec<String>,
    /// Ids decided more than once.
    pub duplicated: Vec<String>,
    /// Positions in `decisions` whose `request_id` is empty.
    pub empty: Vec<usize>,
}

impl Mismatch {
    /// True when the decisions name exactly the pending requests, once each.
    pub fn is_empty(&self) -> bool {
        self.missing.is_empty()
            && self.extra.is_empty()
            && self.duplicated.is_empty()
            && self.empty.is_empty()
    }
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if !self.missing.is_empty() {
            parts.push(format!("missing {}", self.missing.join(", ")));
        }
        if !self.extra.is_empty() {
            parts.push(format!("extra {}", self.extra.join(", ")));
        }
        if !self.duplicated.is_empty() {
            parts.push(format!("duplicated {}", self.duplicated.join(", ")));
        }
        if !self.empty.is_empty() {
            let positions: Vec<String> = self
                .empty
                .iter()
                .map(|i| format!("decisions[{i}]"))
                .collect();
            parts.push(format!("empty request_id at {}", positions.join(", ")));
        }
        f.write_str(&parts.join("; "))
    }
}

/// Why the approval gate refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApprovalError {
    /// The model response or its context was malformed.
    #[error("invalid request: {0}")]
    Request(#[from] RequestError),
    /// The thread already waits for a human: no new run until it is answered.
    #[error(
        "thread '{thread_id}' has a pending approval {approval_id} (run '{run_id}') for {}: resume it (or reject it) before a new run",
        describe(requests)
    )]
    ApprovalPending {
        /// The thread that waits.
        thread_id: String,
        /// The pending approval to answer first.
        approval_id: String,
        /// The run that paused.
        run_id: String,
        /// The calls waiting for a human.
        requests: Vec<PendingRequest>,
    },
    /// The approval was resolved first, by another resume or by a clear.
    #[error("approval {approval_id} is already {} ({}); another resume won", status.as_str(), by(resolved_by))]
    AlreadyResolved {
        /// The approval asked for.
        approval_id: String,
        /// How it ended.
        status: ApprovalStatus,
        /// What resolved it; `None` when the store does not say.
        resolved_by: Option<ResolvedBy>,
    },
    /// The thread has no such approval (or, with no id, no approval at all).
    #[error("thread '{thread_id}' has no approval{}", approval_id.as_deref().map(|id| format!(" {id}")).unwrap_or_default())]
    NotFound {
        /// The thread asked about.
        thread_id: String,
        /// The approval asked for; `None` when the request named none.
        approval_id: Option<String>,
    },
    /// No grant has this id.
    #[error("there is no grant {grant_id}")]
    GrantNotFound {
        /// The grant asked for.
        grant_id: String,
    },
    /// The decisions do not name exactly the pending requests, once each.
    #[error("decisions do not match the pending requests of approval {approval_id}: {mismatch}")]
    DecisionMismatch {
        /// The approval answered.
        approval_id: String,
        /// How the decisions differ from its pending requests.
        mismatch: Mismatch,
    },
    /// The resume body is malformed at `field`.
    #[error("{field}: {message}")]
    InvalidDecision {
        /// Where in the body (`decisions[0].args`, `reject_all.message`, `<body>`).
        field: String,
        /// What is wrong there.
        message: String,
    },
    /// A pause stored (by an older release) with calls that cannot carry a
    /// decision: it can only be rejected as a whole.
    #[error(
        "approval {approval_id} on thread '{thread_id}' holds calls that cannot carry a decision ({}); reject it as a whole with {{\"reject_all\": {{}}}} or `warden approvals clear --thread {thread_id}`",
        problems.join("; ")
    )]
    BrokenPause {
        /// The thread that paused.
        thread_id: String,
        /// The broken pause.
        approval_id: String,
        /// What is wrong with each of its calls.
        problems: Vec<String>,
    },
    /// The resume was consumed but its run could not be handed over.
    #[error(
        "handing the resumed run of approval {approval_id} over failed: {message}; {}",
        if *restored { "the approval is pending again and the resume can be retried" } else { "the approval could not be restored" }
    )]
    HandOff {
        /// The approval resumed.
        approval_id: String,
        /// Why the hand-off failed.
        message: String,
        /// True when the approval is pending again, so the resume can be retried.
        restored: bool,
    },
    /// Several principals each have a pending approval on this thread id; the
    /// answer must name the approval.
    #[error(
        "thread '{thread_id}' has pending approvals of several principals ({}); name the approval",
        principals.join(", ")
    )]
    AmbiguousThread {
        /// The thread named.
        thread_id: String,
        /// The principals with a pending approval on it.
        principals: Vec<String>,
    },
    /// The caller's token may not answer approvals: only approvers (and a
    /// relay naming the human) may.
    #[error(
        "the token '{token}' ({role}) may not answer approvals: that needs an approver token, or a token with `relay: true` naming the human in `reviewer`"
    )]
    ApproverRequired {
        /// The token's name.
        token: String,
        /// The token's role.
        role: String,
    },
    /// An approver named another human than itself.
    #[error(
        "the approver token '{token}' answers in its own name; `reviewer` '{reviewer}' is not it (only a relay token names someone else)"
    )]
    ReviewerMismatch {
        /// The approver token's name.
        token: String,
        /// The reviewer the body named.
        reviewer: String,
    },
    /// A relay named a human it is not granted to name (its `reviewers:`).
    #[error("the relay token '{token}' may not name '{reviewer}' as the reviewer: {why}")]
    ReviewerNotGranted {
        /// The relay token's name.
        token: String,
        /// The reviewer the body named.
        reviewer: String,
        /// Why the relay may not name them.
        why: String,
    },
    /// The approval store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn describe(requests: &[PendingRequest]) -> String {
    requests
        .iter()
        .map(|r| format!("'{}' ({})", r.tool_name, r.request_id))
        .collect::<Vec<_>>()
        .join(", ")
}

fn by(resolved_by: &Option<ResolvedBy>) -> String {
    match resolved_by {
        Some(ResolvedBy::Resume { run_id }) => format!("by run '{run_id}'"),
        Some(ResolvedBy::Clear { actor, .. }) => format!("cleared by {actor}"),
        Some(ResolvedBy::Expiry { after }) => format!("expired, unanswered for {after}"),
        None => "by another request".into(),
    }
}

/// The JSON error body of every route: `{"error": {"code", "message", "details"}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "Error"))]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorDetail {
    /// A stable, machine-readable code (`invalid_request`, `approval_pending`, ...).
    pub code: String,
    /// For a human: what failed, and what to do about it.
    pub message: String,
    /// The structured part of the error, for programs; absent when there is none.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
}

impl ApprovalError {
    /// A malformed field of an answer (a resume or a clear body): 422
    /// `invalid_decision` naming it; other request errors as they are.
    pub fn in_answer(err: RequestError) -> ApprovalError {
        match err {
            RequestError::Field { field, message } => {
                ApprovalError::InvalidDecision { field, message }
            }
            other => ApprovalError::Request(other),
        }
    }

    /// The HTTP status this error means.
    pub fn status(&self) -> u16 {
        match self {
            ApprovalError::Request(RequestError::TooLarge { .. }) => 413,
            // One status for a malformed request on every route.
            ApprovalError::Request(_) => 400,
            ApprovalError::ApprovalPending { .. } | ApprovalError::AlreadyResolved { .. } => 409,
            ApprovalError::NotFound { .. } | ApprovalError::GrantNotFound { .. } => 404,
            ApprovalError::DecisionMismatch { .. }
            | ApprovalError::InvalidDecision { .. }
            | ApprovalError::BrokenPause { .. } => 422,
            ApprovalError::HandOff { .. } => 503,
            ApprovalError::AmbiguousThread { .. } => 409,
            ApprovalError::ApproverRequired { .. }
            | ApprovalError::ReviewerMismatch { .. }
            | ApprovalError::ReviewerNotGranted { .. } => 403,
            ApprovalError::Store(StoreError::Unavailable { .. }) => 503,
            ApprovalError::Store(_) => 500,
        }
    }

    /// A stable, machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            ApprovalError::Request(RequestError::TooLarge { .. }) => "body_too_large",
            ApprovalError::Request(_) => "invalid_request",
            ApprovalError::ApprovalPending { .. } => "approval_pending",
            ApprovalError::AlreadyResolved { .. } => "approval_resolved",
            ApprovalError::NotFound { .. } => "approval_not_found",
            ApprovalError::GrantNotFound { .. } => "grant_not_found",
            ApprovalError::DecisionMismatch { .. } => "decisions_mismatch",
            ApprovalError::InvalidDecision { .. } => "invalid_decision",
            ApprovalError::BrokenPause { .. } => "broken_pause",
            ApprovalError::HandOff { .. } => "hand_off_failed",
            ApprovalError::AmbiguousThread { .. } => "ambiguous_thread",
            ApprovalError::ApproverRequired { .. } => "approver_required",
            ApprovalError::ReviewerMismatch { .. } => "reviewer_mismatch",
            ApprovalError::ReviewerNotGranted { .. } => "reviewer_not_granted",
            ApprovalError::Store(StoreError::Unavailable { .. }) => "store_unavailable",
            ApprovalError::Store(_) => "store_error",
        }
    }

    /// The structured part of the error, for programs.
    pub fn details(&self) -> Value {
        match self {
            ApprovalError::ApprovalPending {
                thread_id,
                approval_id,
                run_id,
                requests,
            } => {
                json!({"thread_id": thread_id, "approval_id": approval_id, "run_id": run_id, "requests": requests})
            }
            ApprovalError::AlreadyResolved {
                approval_id,
                status,
                resolved_by,
            } => json!({"approval_id": approval_id, "status": status, "resolved_by": resolved_by}),
            ApprovalError::DecisionMismatch {
                approval_id,
                mismatch,
            } => {
                json!({"approval_id": approval_id, "missing": mismatch.missing, "extra": mismatch.extra, "duplicated": mismatch.duplicated, "empty": mismatch.empty})
            }
            ApprovalError::InvalidDecision { field, .. } => json!({"field": field}),
            ApprovalError::Request(RequestError::Field { field, .. }) => json!({"field": field}),
            ApprovalError::BrokenPause {
                approval_id,
                problems,
                ..
            } => json!({"approval_id": approval_id, "problems": problems}),
            ApprovalError::HandOff {
                approval_id,
                restored,
                ..
            } => json!({"approval_id": approval_id, "restored": restored}),
            ApprovalError::AmbiguousThread {
                thread_id,
                principals,
            } => json!({"thread_id": thread_id, "principals": principals}),
            _ => Value::Null,
        }
    }

    /// The JSON error body for this error, as every route answers it.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code().to_string(),
                message: self.to_string(),
                details: self.details(),
            },
        }
    }
}

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store's database could not be opened or created.
    #[error("cannot open the approval store {path}: {message}")]
    Open {
        /// The database file.
        path: String,
        /// Why it could not be opened.
        message: String,
    },
    /// The store was written by a newer Warden, whose schema this one does not know.
    #[error(
        "the approval store {path} has schema version {found}; this Warden understands up to {supported}"
    )]
    Schema {
        /// The database file.
        path: String,
        /// The schema version the file has.
        found: i64,
        /// The newest schema version this Warden reads.
        supported: i64,
    },
    /// The database failed a statement; the message is the database's.
    #[error("approval store: {0}")]
    Database(String),
    /// Another connection or process held the lock past the busy timeout;
    /// nothing was changed.
    #[error("approval store: busy (another process holds its lock): {message}")]
    Busy {
        /// The database's message.
        message: String,
    },
    /// The store's database cannot be reached (down, restarting, or every
    /// pooled connection busy past the wait); nothing was changed by this
    /// call, and a later one may succeed.
    #[error("approval store unavailable: {message}")]
    Unavailable {
        /// Why, as the database client said.
        message: String,
    },
    /// A stored approval's body does not parse.
    #[error("approval store: record {approval_id} is unreadable: {message}")]
    Corrupt {
        /// The approval whose record is unreadable.
        approval_id: String,
        /// Why it does not parse.
        message: String,
    },
    /// A failed hand-off could not put its approval back to pending, because a
    /// newer pause holds the thread.
    #[error(
        "approval store: approval {approval_id} cannot be restored: its thread has another pending approval"
    )]
    RestoreBlocked {
        /// The approval that stays consumed.
        approval_id: String,
    },
}
