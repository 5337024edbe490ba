//! Who may set what in a call's context. Authority comes from the caller's
//! credential (a token's role and its `asserts:`, or the process embedding the
//! library), never from the request body. Owns the attribution fields that grant
//! authority, the set of them a caller may assert, the clock a call is judged
//! by, and the notice of what was ignored.
//!
//! The trust model, field by field, is the table in `docs/daemon.md` ("Trust").

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

use crate::decision::Reason;
use crate::request::{CallContext, Caller, ToolCall, now_rfc3339};

/// The reason code added when a caller sent context keys it may not set
/// (interaction keys, attribution fields): they were ignored.
pub const CONTEXT_KEYS_DROPPED: &str = "warden.context_keys_dropped";

/// An attribution field that grants authority: rules and providers decide who
/// may do what by it, so only a caller trusted to say it is believed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Attribution {
    UserRole,
    UserId,
    OauthProvider,
    OauthId,
}

impl Attribution {
    pub const ALL: [Attribution; 4] = [
        Attribution::UserRole,
        Attribution::UserId,
        Attribution::OauthProvider,
        Attribution::OauthId,
    ];

    /// The context key, as requests and `asserts:` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Attribution::UserRole => "user_role",
            Attribution::UserId => "user_id",
            Attribution::OauthProvider => "oauth_provider",
            Attribution::OauthId => "oauth_id",
        }
    }

    pub fn parse(text: &str) -> Option<Attribution> {
        Attribution::ALL.into_iter().find(|a| a.as_str() == text)
    }

    /// The field's value in a context.
    pub fn of(self, context: &CallContext) -> Option<&str> {
        match self {
            Attribution::UserRole => context.user_role.as_deref(),
            Attribution::UserId => context.user_id.as_deref(),
            Attribution::OauthProvider => context.oauth_provider.as_deref(),
            Attribution::OauthId => context.oauth_id.as_deref(),
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }

    fn unknown(name: &str) -> String {
        format!(
            "'{name}' is not an attribution field a token may assert (known: {})",
            Attribution::ALL.map(Attribution::as_str).join(", ")
        )
    }
}

impl std::str::FromStr for Attribution {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Attribution::parse(text).ok_or_else(|| Attribution::unknown(text))
    }
}

/// The attribution fields a caller may assert: a token's `asserts:`
/// (`[user_role, user_id, oauth_provider, oauth_id]`, any subset).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Asserts(u8);

impl Asserts {
    pub const NONE: Asserts = Asserts(0);
    pub const ALL: Asserts = Asserts(0b1111);

    pub fn contains(self, field: Attribution) -> bool {
        self.0 & field.bit() != 0
    }

    pub fn with(self, field: Attribution) -> Asserts {
        Asserts(self.0 | field.bit())
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = Attribution> {
        Attribution::ALL
            .into_iter()
            .filter(move |a| self.contains(*a))
    }
}

impl FromIterator<Attribution> for Asserts {
    fn from_iter<I: IntoIterator<Item = Attribution>>(iter: I) -> Self {
        iter.into_iter().fold(Asserts::NONE, Asserts::with)
    }
}

impl fmt::Debug for Asserts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(Attribution::as_str))
            .finish()
    }
}

/// A list of field names, as `asserts:` and a stored caller spell it.
impl Serialize for Asserts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for field in self.iter() {
            seq.serialize_element(field.as_str())?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Asserts {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = Asserts;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of attribution fields")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Asserts, A::Error> {
                let mut asserts = Asserts::NONE;
                while let Some(name) = seq.next_element::<String>()? {
                    let field = Attribution::parse(&name)
                        .ok_or_else(|| de::Error::custom(Attribution::unknown(&name)))?;
                    asserts = asserts.with(field);
                }
                Ok(asserts)
            }
        }
        deserializer.deserialize_seq(Fields)
    }
}

impl Caller {
    /// The caller a credential makes: internal, or an agent believed on the
    /// attribution fields in `asserts`.
    pub fn of_credential(internal: bool, asserts: Asserts) -> Caller {
        if internal {
            Caller::Internal
        } else if asserts.is_empty() {
            Caller::Agent
        } else {
            Caller::Asserting(asserts)
        }
    }

    /// The attribution fields this caller is believed on.
    pub fn asserts(self) -> Asserts {
        match self {
            Caller::Agent => Asserts::NONE,
            Caller::Asserting(asserts) => asserts,
            Caller::Internal => Asserts::ALL,
        }
    }

    /// Whether this caller's `context.timestamp` is the time its call is
    /// judged at. Only an internal caller's is; anyone else's is recorded.
    pub fn sets_the_clock(self) -> bool {
        self == Caller::Internal
    }
}

/// What of a call's context is believed, given who sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admitted<'a> {
    pub user_role: Option<&'a str>,
    pub user_id: Option<&'a str>,
    pub oauth_provider: Option<&'a str>,
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
