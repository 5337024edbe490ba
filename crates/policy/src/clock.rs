//! The host's clock, as the policy reads it.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The current time, RFC 3339, UTC.
pub fn now_rfc3339() -> String {
    OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

/// `t` as RFC 3339, UTC (the epoch for a time before it).
pub fn rfc3339(t: std::time::SystemTime) -> String {
    OffsetDateTime::from(t)
        .format(&Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}
