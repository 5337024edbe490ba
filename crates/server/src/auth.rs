//! Who may call the daemon: bearer tokens from the configuration (or from the
//! environment variables it names), each with a role. Presented tokens are
//! compared in constant time against every configured token, so neither the
//! answer's timing nor its content says which token came close.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use warden_approval::reviewer::RelayNames;
use warden_types::Asserts;

/// What a token may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// An agent harness: evaluate, tool-calls, approvals.
    Agent,
    /// As `agent`, and may set the internal-only context keys (interaction mode).
    Internal,
    /// The operator: reload, list providers (and answer approvals, where
    /// `hitl_approval.admins_may_approve` says so).
    Admin,
    /// A human who answers approvals: resume, clear, grants, the console.
    Approver,
}

impl Role {
    /// The role's name as the config and the logs spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Agent => "agent",
            Role::Internal => "internal",
            Role::Admin => "admin",
            Role::Approver => "approver",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a route requires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Agents and internal callers.
    Agent,
    /// Operators.
    Admin,
    /// Approvers (and admins, where the operator lets them approve).
    Approver,
    /// Any valid token; the route decides what each may do (the approval
    /// routes: an agent sees its own pauses, an approver everyone's).
    Token,
}

impl Access {
    /// Whether a token of `role` may use the route; `admins_approve` is
    /// `hitl_approval.admins_may_approve`.
    pub fn allows(self, role: Role, admins_approve: bool) -> bool {
        match self {
            Access::Agent => matches!(role, Role::Agent | Role::Internal),
            Access::Admin => role == Role::Admin,
            Access::Approver => role == Role::Approver || (role == Role::Admin && admins_approve),
            Access::Token => true,
        }
    }

    /// What a token needs for the route, for a 403's message.
    pub fn describe(self) -> &'static str {
        match self {
            Access::Agent => "the agent or internal role",
            Access::Admin => "the admin role",
            Access::Approver => "the approver role",
            Access::Token => "a valid token",
        }
    }
}

/// One configured token (`server.tokens[i]`).
#[derive(Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TokenSpec {
    /// Who holds it, as the audit and decision logs name them.
    pub name: String,
    /// What it may do.
    pub role: Role,
    /// The token itself; prefer `token_env`.
    #[serde(default)]
    pub token: Option<String>,
    /// The environment variable holding the token.
    #[serde(default)]
    pub token_env: Option<String>,
    /// The attribution fields (`user_role`, `user_id`, `oauth_provider`,
    /// `oauth_id`) this token's calls are believed on; an agent's others are
    /// dropped. Internal tokens may set them all.
    #[serde(default)]
    pub asserts: Asserts,
    /// May relay a named human's answer to a resume (agent and internal
    /// tokens only): the harness shows the question in its own UI.
    #[serde(default)]
    pub relay: bool,
    /// The humans a relay token may name as the reviewer: names, or patterns
    /// where `*` matches any run of characters (`"*@example.com"`), compared
    /// without regard to case. A configured token's name only if listed as
    /// itself. Absent (deprecated): any name but a configured token's.
    #[serde(default)]
    pub reviewers: Option<Vec<String>>,
}

impl fmt::Debug for TokenSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSpec")
            .field("name", &self.name)
            .field("role", &self.role)
            .field("token", &self.token.as_ref().map(|_| "<hidden>"))
            .field("token_env", &self.token_env)
            .field("asserts", &self.asserts)
            .field("relay", &self.relay)
            .field("reviewers", &self.reviewers)
            .finish()
    }
}

/// The shortest token accepted: shorter ones can be guessed.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Why the configured tokens cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum TokenError {
    /// Neither or both of `token` and `token_env`.
    #[error("server.tokens[{index}]: set exactly one of `token` and `token_env`")]
    Source {
        /// Which entry of `server.tokens`.
        index: usize,
    },
    #[error("server.tokens[{index}].token_env: the environment variable {var} is not set")]
    /// The variable `token_env` names is not set.
    MissingEnv {
        /// Which entry of `server.tokens`.
        index: usize,
        /// The variable's name.
        var: String,
    },
    #[error(
        "server.tokens[{index}]: the token is {chars} characters; at least {MIN_TOKEN_CHARS} are required"
    )]
    /// The token is shorter than [`MIN_TOKEN_CHARS`].
    TooShort {
        /// Which entry of `server.tokens`.
        index: usize,
        /// The token's length.
        chars: usize,
    },
    #[error("server.tokens[{index}].name: '{name}' is used twice")]
    /// Two tokens have one name, so the logs could not tell them apart.
    DuplicateName {
        /// Which entry of `server.tokens` repeats the name.
        index: usize,
        /// The name.
        name: String,
    },
    #[error("server.tokens[{index}]: the same token is configured twice")]
    /// Two entries have the same token, so it would have two roles.
    DuplicateToken {
        /// Which entry of `server.tokens` repeats the token.
        index: usize,
    },
    #[error("server.tokens[{index}].name: must not be empty")]
    /// A token without a name.
    EmptyName {
        /// Which entry of `server.tokens`.
        index: usize,
    },
    #[error(
        "server.tokens[{index}].asserts: a token with the {role} role judges no calls, so it asserts nothing"
    )]
    /// `asserts:` on a token whose role judges no calls.
    AssertsUnused {
        /// Which entry of `server.tokens`.
        index: usize,
        /// Its role.
        role: Role,
    },
    #[error(
        "server.tokens[{index}].relay: only agent and internal tokens relay a human's answer; a token with the {role} role cannot"
    )]
    /// `relay: true` on a token that is neither an agent's nor internal.
    RelayRole {
        /// Which entry of `server.tokens`.
        index: usize,
        /// Its role.
        role: Role,
    },
    #[error(
        "server.tokens[{index}].reviewers: only a relay token names reviewers; set `relay: true` or remove it"
    )]
    /// `reviewers:` on a token that does not relay.
    ReviewersWithoutRelay {
        /// Which entry of `server.tokens`.
        index: usize,
    },
    #[error("server.tokens[{index}].reviewers[{entry}]: {message}")]
    /// A `reviewers:` entry that is not a name or a pattern.
    Reviewer {
        /// Which entry of `server.tokens`.
        index: usize,
        /// Which entry of its `reviewers`.
        entry: usize,
        /// What is wrong with it.
        message: String,
    },
}

/// An authenticated caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    /// The token's configured name: the logs and approvals name the caller by it.
    pub name: Arc<str>,
    /// What it may do.
    pub role: Role,
    /// The attribution fields its calls are believed on (`asserts:`).
    pub asserts: Asserts,
    /// May relay the answer of a human it names (one of these) to a resume;
    /// `None`: may not relay.
    pub relay: Option<Arc<RelayNames>>,
}

/// Admission's answer for a request's bearer token, kept with the request
/// (an extension) so that the route's authorization need not hash and look
/// the token up again: who holds it, and the token set that said so (a
/// reload may swap it before the route runs; see
/// `DaemonState::authorize_admitted`).
#[derive(Clone)]
pub(crate) struct Authenticated {
    pub(crate) principal: Principal,
    pub(crate) tokens: Arc<Tokens>,
}

/// The configured tokens, resolved and hashed.
pub struct Tokens {
    entries: Vec<Entry>,
}

struct Entry {
    principal: Principal,
    digest: [u8; 32],
}

impl Tokens {
    /// Resolves every token (reading `token_env` through `env`).
    pub fn resolve(
        specs: &[TokenSpec],
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Tokens, TokenError> {
        let mut entries: Vec<Entry> = Vec::with_capacity(specs.len());
        for (index, spec) in specs.iter().enumerate() {
            if spec.name.trim().is_empty() {
                return Err(TokenError::EmptyName { index });
            }
            if spec.relay && !matches!(spec.role, Role::Agent | Role::Internal) {
                return Err(TokenError::RelayRole {
                    index,
                    role: spec.role,
                });
            }
            let relay = match (spec.relay, &spec.reviewers) {
                (false, None) => None,
                (false, Some(_)) => return Err(TokenError::ReviewersWithoutRelay { index }),
                (true, reviewers) => Some(Arc::new(
                    RelayNames::new(reviewers.as_deref(), specs.iter().map(|s| s.name.as_str()))
                        .map_err(|(entry, message)| TokenError::Reviewer {
                            index,
                            entry,
                            message,
                        })?,
                )),
            };
            let secret = match (&spec.token, &spec.token_env) {
                (Some(token), None) => token.clone(),
                (None, Some(var)) => env(var).ok_or_else(|| TokenError::MissingEnv {
                    index,
                    var: var.clone(),
                })?,
                _ => return Err(TokenError::Source { index }),
            };
            let chars = secret.chars().count();
            if chars < MIN_TOKEN_CHARS {
                return Err(TokenError::TooShort { index, chars });
            }
            if !spec.asserts.is_empty() && !Access::Agent.allows(spec.role, false) {
                return Err(TokenError::AssertsUnused {
                    index,
                    role: spec.role,
                });
            }
            if entries.iter().any(|e| *e.principal.name == *spec.name) {
                return Err(TokenError::DuplicateName {
                    index,
                    name: spec.name.clone(),
                });
            }
            let digest = digest(&secret);
            if entries.iter().any(|e| e.digest == digest) {
                return Err(TokenError::DuplicateToken { index });
            }
            entries.push(Entry {
                principal: Principal {
                    name: spec.name.as_str().into(),
                    role: spec.role,
                    asserts: spec.asserts,
                    relay,
                },
                digest,
            });
        }
        Ok(Tokens { entries })
    }

    /// The caller holding `presented`, if any. Every configured token is
    /// compared, in constant time, whatever matches.
    pub fn authenticate(&self, presented: &str) -> Option<Principal> {
        self.authenticate_digest(&token_digest(presented))
    }

    /// The caller holding the token whose [`token_digest`] is `presented`, if
    /// it is still configured: the console keeps this digest, never the token.
    pub fn authenticate_digest(&self, presented: &[u8; 32]) -> Option<Principal> {
        let mut found = None;
        for entry in &self.entries {
            if bool::from(entry.digest.ct_eq(presented)) {
                found = Some(&entry.principal);
            }
        }
        found.cloned()
    }

    /// No token is configured (the daemon refuses to start so).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// What identifies a token without holding it: its SHA-256.
pub fn token_digest(token: &str) -> [u8; 32] {
    digest(token)
}

/// Hashing first makes every comparison the same length.
fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The token of an `Authorization: Bearer <token>` header value.
pub fn bearer(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// What the configured tokens still say in a deprecated form, one warning
/// each: a relay token without `reviewers:` may name any human.
pub fn deprecations(specs: &[TokenSpec]) -> Vec<String> {
    specs
        .iter()
        .enumerate()
        .filter(|(_, spec)| spec.relay && spec.reviewers.is_none())
        .map(|(index, spec)| {
            format!(
                "server.tokens[{index}] ('{}') relays without `reviewers:`, so it may name any human \
                 but a configured token as the reviewer; this is deprecated: add \
                 `reviewers: [...]` (names or patterns such as \"*@example.com\") with the humans it relays for",
                spec.name
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: &str = "0123456789abcdef-agent";

    fn spec(name: &str, role: Role, token: &str) -> TokenSpec {
        TokenSpec {
            name: name.into(),
            role,
            token: Some(token.into()),
            token_env: None,
            asserts: Asserts::NONE,
            relay: false,
            reviewers: None,
        }
    }

    #[test]
    fn a_configured_token_authenticates_its_holder() {
        let tokens = Tokens::resolve(&[spec("harness", Role::Agent, LONG)], |_| None).unwrap();
        let who = tokens.authenticate(LONG).unwrap();
        assert_eq!((&*who.name, who.role), ("harness", Role::Agent));
        assert_eq!(tokens.authenticate("0123456789abcdef-agenT"), None);
        assert_eq!(tokens.authenticate(""), None);
    }

    #[test]
    fn a_token_is_read_from_the_named_variable() {
        let spec = TokenSpec {
            token: None,
            token_env: Some("T".into()),
            ..spec("ops", Role::Admin, "")
        };
        let tokens = Tokens::resolve(std::slice::from_ref(&spec), |v| {
            (v == "T").then(|| LONG.to_string())
        })
        .unwrap();
        assert_eq!(tokens.authenticate(LONG).unwrap().role, Role::Admin);
        let err = Tokens::resolve(&[spec], |_| None).err().unwrap();
        assert_eq!(
            err,
            TokenError::MissingEnv {
                index: 0,
                var: "T".into()
            }
        );
    }

    #[test]
    fn short_or_duplicate_tokens_are_refused() {
        let short = Tokens::resolve(&[spec("a", Role::Agent, "short")], |_| None);
        assert!(matches!(short, Err(TokenError::TooShort { .. })));
        let twice = Tokens::resolve(
            &[spec("a", Role::Agent, LONG), spec("b", Role::Admin, LONG)],
            |_| None,
        );
        assert!(matches!(
            twice,
            Err(TokenError::DuplicateToken { index: 1 })
        ));
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer "), None);
    }

    #[test]
    fn a_token_carries_the_fields_it_may_assert() {
        let spec = TokenSpec {
            asserts: serde_json::from_str(r#"["user_role"]"#).unwrap(),
            ..spec("gateway", Role::Agent, LONG)
        };
        let tokens = Tokens::resolve(&[spec], |_| None).unwrap();
        let who = tokens.authenticate(LONG).unwrap();
        assert_eq!(format!("{:?}", who.asserts), r#"["user_role"]"#);
    }

    #[test]
    fn an_admin_token_that_asserts_fields_is_refused() {
        let spec = TokenSpec {
            asserts: Asserts::ALL,
            ..spec("ops", Role::Admin, LONG)
        };
        let err = Tokens::resolve(&[spec], |_| None).err().unwrap();
        assert_eq!(
            err,
            TokenError::AssertsUnused {
                index: 0,
                role: Role::Admin
            }
        );
        assert!(
            err.to_string().contains("server.tokens[0].asserts"),
            "{err}"
        );
    }

    #[test]
    fn roles_reach_only_their_routes() {
        assert!(
            Access::Agent.allows(Role::Agent, false) && Access::Agent.allows(Role::Internal, false)
        );
        assert!(
            !Access::Agent.allows(Role::Admin, false)
                && !Access::Agent.allows(Role::Approver, false)
        );
        assert!(
            Access::Admin.allows(Role::Admin, false)
                && !Access::Admin.allows(Role::Internal, false)
        );
        assert!(!Access::Admin.allows(Role::Approver, false));
    }

    #[test]
    fn only_approvers_approve_unless_admins_are_let_in() {
        assert!(Access::Approver.allows(Role::Approver, false));
        for role in [Role::Agent, Role::Internal, Role::Admin] {
            assert!(!Access::Approver.allows(role, false), "{role}");
        }
        assert!(Access::Approver.allows(Role::Admin, true));
        assert!(!Access::Approver.allows(Role::Agent, true));
    }

    #[test]
    fn only_agent_and_internal_tokens_may_relay() {
        for role in [Role::Agent, Role::Internal] {
            let relay = TokenSpec {
                relay: true,
                ..spec("gw", role, LONG)
            };
            assert!(
                Tokens::resolve(&[relay], |_| None)
                    .unwrap()
                    .authenticate(LONG)
                    .unwrap()
                    .relay
                    .is_some()
            );
        }
        for role in [Role::Approver, Role::Admin] {
            let relay = TokenSpec {
                relay: true,
                ..spec("gw", role, LONG)
            };
            assert_eq!(
                Tokens::resolve(&[relay], |_| None).err(),
                Some(TokenError::RelayRole { index: 0, role })
            );
        }
    }

    #[test]
    fn reviewers_need_relay_and_well_formed_entries() {
        let named = |relay, reviewers: &[&str]| TokenSpec {
            relay,
            reviewers: Some(reviewers.iter().map(|r| r.to_string()).collect()),
            ..spec("gw", Role::Agent, LONG)
        };
        assert_eq!(
            Tokens::resolve(&[named(false, &["bob"])], |_| None).err(),
            Some(TokenError::ReviewersWithoutRelay { index: 0 })
        );
        let err = Tokens::resolve(&[named(true, &["bob", " "])], |_| None)
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .starts_with("server.tokens[0].reviewers[1]: "),
            "{err}"
        );
        assert!(Tokens::resolve(&[named(true, &["*@example.com"])], |_| None).is_ok());
    }

    #[test]
    fn only_a_relay_without_reviewers_is_deprecated() {
        let relay = TokenSpec {
            relay: true,
            ..spec("gw", Role::Agent, LONG)
        };
        let granted = TokenSpec {
            reviewers: Some(vec!["bob".into()]),
            ..relay.clone()
        };
        assert_eq!(deprecations(&[granted]), Vec::<String>::new());
        let warnings = deprecations(&[spec("a", Role::Agent, LONG), relay]);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("server.tokens[1] ('gw')"),
            "{warnings:?}"
        );
    }
}
