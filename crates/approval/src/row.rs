//! An approval as a database row, shared by the stores: the immutable part
//! of a record is one JSON column ([`Body`]), the parts the stores compare
//! (status, version, principal, thread, expiry, keys) are columns of their
//! own. Decoding, purging and the journal's entries read the same way
//! whichever database holds them.

use serde::{Deserialize, Serialize};

use super::grant::Grant;
use crate::store::{
    ApprovalEvent, ApprovalKind, ApprovalRecord, ApprovalStatus, EventKind, ResumeKey, StoreError,
    StoredRequest,
};
use warden_types::Caller;
use warden_types::approval::{CallOutcome, Resolution};
use warden_types::message::AiMessage;
use warden_types::request::CallContext;

/// The columns of an approval the stores read, in [`Row`]'s order (a macro,
/// so that each store's statements are constants).
macro_rules! columns {
    () => {
        "approval_id, thread_id, run_id, status, version, created_at, body, resolution, principal, resume_key, resume_digest, expires_at_ms, consumed_at"
    };
}
pub(crate) use columns;

/// The immutable part of a record, stored as one JSON column.
#[derive(Serialize, Deserialize)]
pub(crate) struct Body {
    caller: Caller,
    context: CallContext,
    message: AiMessage,
    requests: Vec<StoredRequest>,
    calls: Vec<CallOutcome>,
    response_digest: String,
    #[serde(default)]
    generation: u64,
    #[serde(default)]
    kind: ApprovalKind,
}

impl Body {
    /// The JSON column of `record`.
    pub(crate) fn of(record: &ApprovalRecord) -> Result<String, StoreError> {
        json(&Body {
            caller: record.caller,
            context: record.context.clone(),
            message: record.message.clone(),
            requests: record.requests.clone(),
            calls: record.calls.clone(),
            response_digest: record.response_digest.clone(),
            generation: record.generation,
            kind: record.kind,
        })
    }
}

pub(crate) fn json<T: Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Database(e.to_string()))
}

/// A row as read (`COLUMNS`), decoded after the statement is done.
pub(crate) struct Row {
    pub(crate) approval_id: String,
    pub(crate) principal: String,
    pub(crate) thread_id: String,
    pub(crate) run_id: String,
    pub(crate) status: String,
    pub(crate) version: i64,
    pub(crate) created_at: String,
    pub(crate) body: String,
    pub(crate) resolution: Option<String>,
    pub(crate) resume_key: Option<String>,
    pub(crate) resume_digest: Option<String>,
    pub(crate) expires_at_ms: Option<i64>,
    pub(crate) consumed_at: Option<String>,
}

impl Row {
    pub(crate) fn decode(self) -> Result<ApprovalRecord, StoreError> {
        let corrupt = |message: String| StoreError::Corrupt {
            approval_id: self.approval_id.clone(),
            message,
        };
        let status = ApprovalStatus::parse(&self.status)
            .ok_or_else(|| corrupt(format!("unknown status '{}'", self.status)))?;
        let body: Body =
            serde_json::from_str(&self.body).map_err(|e| corrupt(format!("body: {e}")))?;
        let resolution = match &self.resolution {
            Some(text) => Some(
                serde_json::from_str::<Resolution>(text)
                    .map_err(|e| corrupt(format!("resolution: {e}")))?,
            ),
            None => None,
        };
        let resume_key = match (self.resume_key, self.resume_digest) {
            (Some(key), Some(digest)) => Some(ResumeKey { key, digest }),
            _ => None,
        };
        Ok(ApprovalRecord {
            approval_id: self.approval_id,
            principal: self.principal,
            thread_id: self.thread_id,
            run_id: self.run_id,
            status,
            version: self.version as u64,
            created_at: self.created_at,
            caller: body.caller,
            context: body.context,
            message: body.message,
            requests: body.requests,
            calls: body.calls,
            response_digest: body.response_digest,
            generation: body.generation,
            resolution,
            resume_key,
            expires_at_ms: self.expires_at_ms,
            kind: body.kind,
            consumed_at: self.consumed_at,
        })
    }
}

pub(crate) fn decode_grant(body: &str) -> Result<Grant, StoreError> {
    serde_json::from_str(body).map_err(|e| StoreError::Corrupt {
        approval_id: "a grant".into(),
        message: e.to_string(),
    })
}

/// The body and resolution columns of a resolved approval with their
/// arguments replaced by digests ([`super::purge`]).
pub(crate) fn purged(
    approval_id: &str,
    body: &str,
    resolution: Option<&str>,
) -> Result<(String, Option<String>), StoreError> {
    let corrupt = |message: String| StoreError::Corrupt {
        approval_id: approval_id.to_string(),
        message,
    };
    let mut body: Body = serde_json::from_str(body).map_err(|e| corrupt(format!("body: {e}")))?;
    super::purge::message(&mut body.message);
    super::purge::calls(&mut body.calls);
    let resolution = match resolution {
        Some(text) => {
            let mut resolution: Resolution =
                serde_json::from_str(text).map_err(|e| corrupt(format!("resolution: {e}")))?;
            super::purge::resolution(&mut resolution);
            Some(json(&resolution)?)
        }
        None => None,
    };
    Ok((json(&body)?, resolution))
}

/// A journal entry as stored: its sequence number, kind and JSON.
pub(crate) fn decode_event(seq: i64, kind: &str, text: &str) -> Result<ApprovalEvent, StoreError> {
    let corrupt = |message: String| StoreError::Corrupt {
        approval_id: format!("journal entry {seq}"),
        message,
    };
    EventKind::parse(kind).ok_or_else(|| corrupt(format!("unknown kind '{kind}'")))?;
    let mut event: ApprovalEvent =
        serde_json::from_str(text).map_err(|e| corrupt(e.to_string()))?;
    event.seq = seq as u64;
    Ok(event)
}
