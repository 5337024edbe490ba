//! What the host believes of a call's context, given who sent it: the
//! attribution fields the caller may set, the clock the call is judged by, and
//! the notice of what was ignored.
//!
//! The trust model, field by field, is the table in `docs/daemon.md` ("Trust").

use warden_types::caller::Attribution;
use warden_types::codes::CONTEXT_KEYS_DROPPED;
use warden_types::{Caller, Reason, ToolCall};

use crate::clock::now_rfc3339;

/// What of a call's context is believed, given who sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admitted<'a> {
    /// `context.user_role`, if the caller may assert it.
    pub user_role: Option<&'a str>,
    /// `context.user_id`, if the caller may assert it.
    pub user_id: Option<&'a str>,
    /// `context.oauth_provider`, if the caller may assert it.
    pub oauth_provider: Option<&'a str>,
    /// `context.oauth_id`, if the caller may assert it.
    pub oauth_id: Option<&'a str>,
    /// The time every time-based rule judges against (RFC 3339): the host's
    /// clock, or an internal caller's `context.timestamp`.
    pub judged_at: String,
    /// Attribution fields the caller sent but may not set: ignored.
    pub dropped: Vec<Attribution>,
}

/// Admits a call's context from `caller`: the attribution fields it may set,
/// and the time. Everything else in the context is judged as sent.
pub fn admit(call: &ToolCall, caller: Caller) -> Admitted<'_> {
    let context = &call.context;
    let asserts = caller.asserts();
    let believed = |field: Attribution| field.of(context).filter(|_| asserts.contains(field));
    let judged_at = match &context.timestamp {
        Some(claimed) if caller.sets_the_clock() => claimed.clone(),
        _ => now_rfc3339(),
    };
    Admitted {
        user_role: believed(Attribution::UserRole),
        user_id: believed(Attribution::UserId),
        oauth_provider: believed(Attribution::OauthProvider),
        oauth_id: believed(Attribution::OauthId),
        judged_at,
        dropped: Attribution::ALL
            .into_iter()
            .filter(|f| f.of(context).is_some() && !asserts.contains(*f))
            .collect(),
    }
}

impl Admitted<'_> {
    /// The notice added to the decision when attribution fields were ignored.
    pub fn notice(&self) -> Option<Reason> {
        (!self.dropped.is_empty()).then(|| {
            let keys: Vec<&str> = self.dropped.iter().map(|f| f.as_str()).collect();
            Reason::new(
                CONTEXT_KEYS_DROPPED,
                format!(
                    "context keys {} are honoured only from internal callers or a token that \
                     may assert them (asserts:) and were ignored",
                    keys.join(", ")
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warden_types::Asserts;

    fn call(context: serde_json::Value) -> ToolCall {
        serde_json::from_value(serde_json::json!({"tool_name": "deploy", "context": context}))
            .unwrap()
    }

    #[test]
    fn an_agent_is_believed_on_no_attribution_field() {
        let c = call(serde_json::json!({"user_role": "admin", "user_id": "u1", "agent_id": "a"}));
        let admitted = admit(&c, Caller::Agent);
        assert_eq!((admitted.user_role, admitted.user_id), (None, None));
        assert_eq!(
            admitted.dropped,
            [Attribution::UserRole, Attribution::UserId]
        );
        let notice = admitted.notice().unwrap();
        assert_eq!(notice.code, CONTEXT_KEYS_DROPPED);
        assert!(notice.message.contains("user_role, user_id"), "{notice:?}");
    }

    #[test]
    fn a_token_is_believed_on_exactly_the_fields_it_may_assert() {
        let c = call(serde_json::json!({"user_role": "admin", "oauth_id": "42"}));
        let admitted = admit(
            &c,
            Caller::Asserting(Asserts::NONE.with(Attribution::UserRole)),
        );
        assert_eq!(admitted.user_role, Some("admin"));
        assert_eq!(admitted.oauth_id, None);
        assert_eq!(admitted.dropped, [Attribution::OauthId]);
    }

    #[test]
    fn an_internal_caller_is_believed_on_every_field_and_the_clock() {
        let c =
            call(serde_json::json!({"user_role": "admin", "timestamp": "2020-01-01T00:00:00Z"}));
        let admitted = admit(&c, Caller::Internal);
        assert_eq!(admitted.user_role, Some("admin"));
        assert!(admitted.dropped.is_empty() && admitted.notice().is_none());
        assert_eq!(admitted.judged_at, "2020-01-01T00:00:00Z");
    }

    #[test]
    fn anyone_elses_timestamp_is_not_the_clock() {
        let c = call(serde_json::json!({"timestamp": "2020-01-01T00:00:00Z"}));
        for caller in [Caller::Agent, Caller::Asserting(Asserts::ALL)] {
            let judged_at = admit(&c, caller).judged_at;
            assert!(judged_at.as_str() > "2025", "{caller:?}: {judged_at}");
        }
    }

    #[test]
    fn asserts_read_and_write_as_field_names() {
        let asserts: Asserts = serde_json::from_str(r#"["user_id", "user_role"]"#).unwrap();
        assert_eq!(
            serde_json::to_string(&asserts).unwrap(),
            r#"["user_role","user_id"]"#
        );
        let err = serde_json::from_str::<Asserts>(r#"["interaction_mode"]"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'interaction_mode'") && err.contains("known: user_role"),
            "{err}"
        );
    }

    #[test]
    fn a_stored_caller_keeps_what_it_may_assert() {
        let caller = Caller::Asserting(Asserts::NONE.with(Attribution::UserRole));
        let text = serde_json::to_string(&caller).unwrap();
        assert_eq!(text, r#"{"asserting":["user_role"]}"#);
        assert_eq!(serde_json::from_str::<Caller>(&text).unwrap(), caller);
        assert_eq!(
            serde_json::from_str::<Caller>(r#""agent""#).unwrap(),
            Caller::Agent
        );
    }
}
