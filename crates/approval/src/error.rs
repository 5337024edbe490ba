//! Why the approval gate refused a request, each with the HTTP status and the
//! stable code the daemon answers with, and the JSON error body. They are wire
//! types (the error body's codes are part of the API), so they live in
//! `warden-types`; this module keeps their old path.

pub use warden_types::error::{
    ApprovalError, ErrorBody, ErrorDetail, Mismatch, PendingRequest, StoreError,
};
