//! Who answers an approval, and on whose authority: a human in the console, or
//! a relay (an agent harness) that carries a human's answer, naming a human it
//! was granted to name.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use unicode_general_category::{GeneralCategory, get_general_category};

use warden_analysis::glob::wildcard;

use warden_types::approval::AnsweredBy;
use warden_types::error::ApprovalError;

/// What a credential may do with approvals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Authority {
    /// An approver (or an admin, where the operator lets admins approve):
    /// answers any principal's pauses, in its own name.
    Approver,
    /// A token with `relay: true`: relays the answer of the human it names
    /// in `reviewer` (one of the names it is granted), to its own principal's
    /// pauses only.
    Relay(Arc<RelayNames>),
    /// Anything else (an agent's own token): may not answer.
    Denied,
}

/// Who answers an approval: the human, and the token that relayed the answer
/// when a harness did. A relay answers only its own principal's pauses; a
/// human (an approver token, the console, the command line) any.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reviewer {
    /// The human who answers.
    pub name: String,
    /// The token that relayed the answer, when a harness did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relayed_by: Option<String>,
    /// Whose word this is: a human's, or an MCP client's own (left out of
    /// the JSON for a human, so that a stored resume's digest is unchanged).
    #[serde(default, skip_serializing_if = "AnsweredBy::is_human")]
    pub answered_by: AnsweredBy,
}

impl Reviewer {
    /// A human answering in their own name.
    pub fn human(name: impl Into<String>) -> Self {
        Reviewer {
            name: name.into(),
            relayed_by: None,
            answered_by: AnsweredBy::Human,
        }
    }

    /// A human's answer, relayed by the token named `by`.
    pub fn relayed(name: impl Into<String>, by: impl Into<String>) -> Self {
        Reviewer {
            name: name.into(),
            relayed_by: Some(by.into()),
            answered_by: AnsweredBy::Human,
        }
    }

    /// An MCP client's own answer to Warden's elicitation on a call of the
    /// principal `principal`: its word, not a human's.
    pub fn client_attested(principal: impl Into<String>) -> Self {
        Reviewer {
            name: principal.into(),
            relayed_by: None,
            answered_by: AnsweredBy::ClientAttested,
        }
    }

    /// Who answers, for a caller with `authority` holding the token named
    /// `token` (of `role`, for the message), which names `claimed` as the
    /// reviewer. An approver answers in its own name; a relay must name the
    /// human; nobody else may answer (403 `approver_required`).
    pub fn authorize(
        token: &str,
        role: &str,
        authority: &Authority,
        claimed: Option<&str>,
    ) -> Result<Reviewer, ApprovalError> {
        match (authority, claimed) {
            (Authority::Denied, _) => Err(ApprovalError::ApproverRequired {
                token: token.to_string(),
                role: role.to_string(),
            }),
            (Authority::Approver, None) => Ok(Reviewer::human(token)),
            (Authority::Approver, Some(name)) if name == token => Ok(Reviewer::human(token)),
            (Authority::Approver, Some(name)) => Err(ApprovalError::ReviewerMismatch {
                token: token.to_string(),
                reviewer: name.to_string(),
            }),
            (Authority::Relay(_), None) => Err(ApprovalError::InvalidDecision {
                field: "reviewer".into(),
                message: format!("the relay token '{token}' must name the human who answered"),
            }),
            (Authority::Relay(names), Some(name)) => {
                names.admit(token, name)?;
                Ok(Reviewer::relayed(name, token))
            }
        }
    }

    /// The principal whose approvals this reviewer may answer (`None`: any).
    pub fn scope(&self) -> Option<&str> {
        match self.answered_by {
            // A client answers only its own principal's asks.
            AnsweredBy::ClientAttested => Some(&self.name),
            AnsweredBy::Human => self.relayed_by.as_deref(),
        }
    }

    /// "alice", or `"bob", relayed by gateway`: a relayed name is what the
    /// relay claimed, quoted (and escaped) so that it cannot pass for more.
    pub fn describe(&self) -> String {
        if self.answered_by == AnsweredBy::ClientAttested {
            return format!("{}'s MCP client (client-attested)", self.name);
        }
        match &self.relayed_by {
            Some(by) => format!("{:?}, relayed by {by}", self.name),
            None => self.name.clone(),
        }
    }
}

/// The most characters of a reviewer's name.
pub const MAX_REVIEWER_CHARS: usize = 128;

/// Whether `name` can name a human: printable text of at most
/// [`MAX_REVIEWER_CHARS`] characters, not blank, no space at either end and no
/// space but U+0020, and no control, format (bidirectional controls,
/// zero-width characters), private-use, unassigned or separator character:
/// a name shown to a human must read as what it is.
pub fn check_reviewer_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("must not be blank".into());
    }
    let chars = name.chars().count();
    if chars > MAX_REVIEWER_CHARS {
        return Err(format!(
            "is {chars} characters; the limit is {MAX_REVIEWER_CHARS}"
        ));
    }
    if name.starts_with(char::is_whitespace) || name.ends_with(char::is_whitespace) {
        return Err("must not start or end with a space".into());
    }
    if let Some(c) = name.chars().find(|&c| !printable(c)) {
        return Err(format!(
            "must not contain U+{:04X} ({})",
            c as u32,
            get_general_category(c).abbreviation()
        ));
    }
    Ok(())
}

fn printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    !matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::Surrogate
            | GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
            | GeneralCategory::SpaceSeparator
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

/// The human names a relay token may give as the reviewer of an answer it
/// relays: those its `reviewers:` grants (names, or patterns where `*` matches
/// any run of characters, compared without regard to case), never the name of
/// a configured token (an approver's, another agent's, its own) or a name that
/// looks like one (case and confusable characters aside) unless `reviewers:`
/// lists that name itself. A relay without `reviewers:` (the form before it
/// existed, deprecated) may name anyone else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelayNames {
    /// `reviewers:`, lower-cased; `None`: not configured.
    granted: Option<Vec<String>>,
    /// The configured tokens' names, with what they look like.
    reserved: Vec<(Lookalike, String)>,
}

impl RelayNames {
    /// The names granted by `reviewers` (`None`: the option is absent), with
    /// `reserved` (every configured token's name) kept from a relay's claim.
    /// An empty or malformed entry of `reviewers` is refused with its index.
    pub fn new<'a>(
        reviewers: Option<&[String]>,
        reserved: impl IntoIterator<Item = &'a str>,
    ) -> Result<RelayNames, (usize, String)> {
        let granted = match reviewers {
            None => None,
            Some(list) => Some(
                list.iter()
                    .enumerate()
                    .map(|(index, pattern)| {
                        check_reviewer_name(pattern)
                            .map(|()| pattern.to_lowercase())
                            .map_err(|message| (index, message))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        Ok(RelayNames {
            granted,
            ..RelayNames::anyone_but(reserved)
        })
    }

    /// Any well-formed name but the `reserved` ones (and their lookalikes):
    /// for a relay that is the only principal there is (an embedding process).
    pub fn anyone_but<'a>(reserved: impl IntoIterator<Item = &'a str>) -> RelayNames {
        RelayNames {
            granted: None,
            reserved: reserved
                .into_iter()
                .map(|name| (Lookalike::of(name), name.to_string()))
                .collect(),
        }
    }

    /// Whether the relay token `token` may name `claimed` as the human who
    /// answered: 422 `invalid_decision` for a malformed name, 403
    /// `reviewer_not_granted` for a name it may not give.
    pub fn admit(&self, token: &str, claimed: &str) -> Result<(), ApprovalError> {
        check_reviewer_name(claimed).map_err(|message| ApprovalError::InvalidDecision {
            field: "reviewer".into(),
            message,
        })?;
        let refuse = |why: String| ApprovalError::ReviewerNotGranted {
            token: token.to_string(),
            reviewer: claimed.to_string(),
            why,
        };
        let lowered = claimed.to_lowercase();
        let granted = self.granted.as_deref();
        // Granted by name itself: the operator meant this very name.
        if granted.is_some_and(|list| list.contains(&lowered)) {
            return Ok(());
        }
        let keys = Lookalike::of(claimed);
        if let Some((_, name)) = self.reserved.iter().find(|(k, _)| k.matches(&keys)) {
            return Err(refuse(format!(
                "it is (or looks like) the configured token '{name}'; list it in the relay's `reviewers:` to allow it"
            )));
        }
        match granted {
            None => Ok(()),
            Some(list) if list.iter().any(|g| wildcard(g, &lowered)) => Ok(()),
            Some(_) => Err(refuse("it matches none of the relay's `reviewers:`".into())),
        }
    }
}

/// What two names that a human would read alike have in common: their Unicode
/// confusable skeleton (UTS #39), taken of the lower-cased name (`ALICE` and
/// `аlice`, a Cyrillic а, are `alice`) and, lower-cased, of the name as
/// written (`aIice`, a capital I, is `alice` too, which lower-casing first
/// would have made `aiice`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Lookalike([String; 2]);

impl Lookalike {
    fn of(name: &str) -> Lookalike {
        use unicode_security::confusable_detection::skeleton;
        Lookalike([
            skeleton(&name.to_lowercase()).collect(),
            skeleton(name).collect::<String>().to_lowercase(),
        ])
    }

    fn matches(&self, other: &Lookalike) -> bool {
        self.0[0] == other.0[0] || self.0[1] == other.0[1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn granted(reviewers: &[&str]) -> RelayNames {
        let list: Vec<String> = reviewers.iter().map(|r| r.to_string()).collect();
        RelayNames::new(Some(&list), ["alice", "gateway"]).unwrap()
    }

    fn code(names: &RelayNames, claimed: &str) -> Option<&'static str> {
        names.admit("gateway", claimed).err().map(|e| e.code())
    }

    #[test]
    fn a_name_that_does_not_read_as_what_it_is_is_refused() {
        for name in [
            "",
            " ",
            "bob ",
            "bo\u{202e}b",
            "bo\u{200b}b",
            "bo\u{a0}b",
            "bo\nb",
        ] {
            assert!(check_reviewer_name(name).is_err(), "{name:?}");
        }
        for name in ["bob", "Bob Smith", "bob@example.com", "Zoë", "山田"] {
            assert_eq!(check_reviewer_name(name), Ok(()), "{name:?}");
        }
    }

    #[test]
    fn a_pattern_matches_any_run_of_characters_without_regard_to_case() {
        let names = granted(&["*@example.com"]);
        assert_eq!(code(&names, "Bob@Example.com"), None);
        assert_eq!(
            code(&names, "bob@example.org"),
            Some("reviewer_not_granted")
        );
    }

    #[test]
    fn a_configured_name_and_its_lookalikes_need_a_grant_by_name() {
        let anyone = granted(&["*"]);
        for name in ["alice", "ALICE", "\u{430}lice", "aIice", "a1ice", "gateway"] {
            assert_eq!(code(&anyone, name), Some("reviewer_not_granted"), "{name}");
        }
        assert_eq!(code(&granted(&["alice"]), "alice"), None);
    }

    #[test]
    fn without_reviewers_anyone_but_a_configured_name_may_be_named() {
        let legacy = RelayNames::new(None, ["alice"]).unwrap();
        assert_eq!(code(&legacy, "bob"), None);
        assert_eq!(code(&legacy, "Alice"), Some("reviewer_not_granted"));
        assert_eq!(code(&legacy, "bob\u{202e}"), Some("invalid_decision"));
    }

    #[test]
    fn a_relayed_name_is_quoted_in_what_the_log_says() {
        let reviewer = Reviewer::relayed("bob\", relayed by ops", "gateway");
        assert_eq!(
            reviewer.describe(),
            r#""bob\", relayed by ops", relayed by gateway"#
        );
    }
}
