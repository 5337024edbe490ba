//! Who is calling, and what they may say about a call: the attribution fields
//! that grant authority and the set of them a caller's credential may assert.
//! Authority comes from the caller's credential (a token's role and its
//! `asserts:`, or the process embedding the library), never from the request
//! body; what the host then believes of a context is `warden_policy::trust`.
//!
//! The trust model, field by field, is the table in `docs/daemon.md` ("Trust").

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

use crate::request::CallContext;

/// Who is calling, as established by the caller's authentication (a token's
/// role, or the process embedding the library), never by the request body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Caller {
    /// An agent harness: may not choose the run's interaction mode, the clock
    /// or an attribution field that grants authority (`user_role`, ...).
    #[default]
    Agent,
    /// An agent harness whose token may assert these attribution fields
    /// (`asserts:`), and nothing else an agent may not set.
    Asserting(Asserts),
    /// A trusted internal component (the harness's own scheduler or gateway):
    /// may set every context key, and its `timestamp` is believed.
    Internal,
}

/// An attribution field that grants authority: rules and providers decide who
/// may do what by it, so only a caller trusted to say it is believed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Attribution {
    /// `user_role`: the role rules and providers grant by.
    UserRole,
    /// `user_id`: the human on whose behalf the agent acts.
    UserId,
    /// `oauth_provider`: who authenticated the user.
    OauthProvider,
    /// `oauth_id`: the user's id at that provider.
    OauthId,
}

impl Attribution {
    /// Every attribution field, in the order listings name them.
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

    /// The field named as requests spell it; `None` for any other name.
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
    /// Believed on no attribution field (a plain agent).
    pub const NONE: Asserts = Asserts(0);
    /// Believed on every attribution field (an internal caller).
    pub const ALL: Asserts = Asserts(0b1111);

    /// Whether the field is among them.
    pub fn contains(self, field: Attribution) -> bool {
        self.0 & field.bit() != 0
    }

    /// These fields and `field`.
    pub fn with(self, field: Attribution) -> Asserts {
        Asserts(self.0 | field.bit())
    }

    /// True when no field is among them.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The fields, in [`Attribution::ALL`]'s order.
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
