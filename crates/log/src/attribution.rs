//! Who a logged call is attributed to: the fields DeerFlow's guardrail
//! request carries (agent, passport, thread, run, tool call, user and role,
//! OAuth provider and id, subagent flag, the call's time), as the judgment
//! honoured them and, for each field the trust rules (`warden_policy::trust`)
//! dropped or replaced, as the request claimed it.
//!
//! The line's `attribution` is `{honoured: {...}, claimed: {...}}`: `honoured`
//! is what providers and rules were given; `claimed` holds only the fields
//! whose claim was not honoured as sent (absent when every claim was), so a
//! reader sees both exactly where they differ.

use std::borrow::Cow;

use serde::Serialize;
use warden_policy::redact::Redactor;
use warden_types::caller::Attribution;
use warden_types::request::ToolCall;
use warden_types::{Caller, Evaluation};

/// What decides how a call's claims were honoured: who sent it (its
/// credential) and the configured passport (`guardrails.passport`), which
/// replaces the agent id the request names, as DeerFlow's middleware does.
#[derive(Clone, Copy, Debug)]
pub struct CallerTrust<'a> {
    /// Who sent the call, by its credential.
    pub caller: Caller,
    /// `guardrails.passport` of the configuration that judged the call.
    pub passport: Option<&'a str>,
}

/// The attribution fields of one side (honoured or claimed); absent fields
/// are left out of the line. Ids are logged with their secret-shaped parts
/// replaced.
#[derive(Debug, Default, Serialize, PartialEq)]
pub struct AttributionFields<'a> {
    /// The agent: the passport when one is configured, else the request's `agent_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Cow<'a, str>>,
    /// The passport a passport provider judged the call on (its `passport_id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passport_id: Option<Cow<'a, str>>,
    /// The conversation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<Cow<'a, str>>,
    /// The run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<Cow<'a, str>>,
    /// The model's id of the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<Cow<'a, str>>,
    /// The user the agent acts for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<Cow<'a, str>>,
    /// The user's role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_role: Option<Cow<'a, str>>,
    /// Who authenticated the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oauth_provider: Option<Cow<'a, str>>,
    /// The user's id at that provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oauth_id: Option<Cow<'a, str>>,
    /// Whether the call came from a subagent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_subagent: Option<bool>,
    /// The call's time: honoured, the time it was judged at; claimed, the
    /// request's `context.timestamp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Cow<'a, str>>,
}

impl AttributionFields<'_> {
    /// True when no field is set.
    pub fn is_empty(&self) -> bool {
        *self == AttributionFields::default()
    }
}

/// A call's attribution, as logged (see the module's documentation).
#[derive(Debug, Serialize)]
pub struct LoggedAttribution<'a> {
    /// What the judgment used.
    pub honoured: AttributionFields<'a>,
    /// What the request said, for the fields the trust rules dropped or replaced.
    #[serde(skip_serializing_if = "AttributionFields::is_empty")]
    pub claimed: AttributionFields<'a>,
}

impl<'a> LoggedAttribution<'a> {
    /// The attribution of `call`, judged as `evaluation` says by a caller
    /// trusted as `trust` says, its values cleaned by `redactor`.
    pub fn of(
        call: &'a ToolCall,
        evaluation: &'a Evaluation,
        trust: CallerTrust<'a>,
        redactor: &Redactor,
    ) -> Self {
        let ctx = &call.context;
        let clean = |value: &'a str| redactor.redact(value);
        let sent = |value: &'a Option<String>| value.as_deref().map(clean);
        let mut honoured = AttributionFields {
            agent_id: trust.passport.or(ctx.agent_id.as_deref()).map(clean),
            passport_id: evaluation
                .metadata
                .get("passport_id")
                .and_then(|v| v.as_str())
                .map(clean),
            thread_id: sent(&ctx.thread_id),
            run_id: sent(&ctx.run_id),
            tool_call_id: sent(&call.tool_call_id),
            is_subagent: Some(ctx.is_subagent),
            timestamp: Some(Cow::Borrowed(evaluation.judged_at.as_str())),
            ..AttributionFields::default()
        };
        let mut claimed = AttributionFields::default();
        if trust.passport.is_some() && ctx.agent_id.as_deref() != trust.passport {
            claimed.agent_id = sent(&ctx.agent_id);
        }
        if let Some(timestamp) = ctx.timestamp.as_deref()
            && timestamp != evaluation.judged_at
        {
            claimed.timestamp = Some(clean(timestamp));
        }
        let asserts = trust.caller.asserts();
        for field in Attribution::ALL {
            let Some(value) = field.of(ctx).map(clean) else {
                continue;
            };
            let side = if asserts.contains(field) {
                &mut honoured
            } else {
                &mut claimed
            };
            *side.slot(field) = Some(value);
        }
        LoggedAttribution { honoured, claimed }
    }
}

impl<'a> AttributionFields<'a> {
    fn slot(&mut self, field: Attribution) -> &mut Option<Cow<'a, str>> {
        match field {
            Attribution::UserRole => &mut self.user_role,
            Attribution::UserId => &mut self.user_id,
            Attribution::OauthProvider => &mut self.oauth_provider,
            Attribution::OauthId => &mut self.oauth_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use warden_types::Asserts;

    fn call(context: serde_json::Value) -> ToolCall {
        serde_json::from_value(json!({"tool_name": "deploy", "tool_call_id": "c1",
                                      "context": context}))
        .unwrap()
    }

    fn evaluation(judged_at: &str, metadata: serde_json::Value) -> Evaluation {
        serde_json::from_value(json!({
            "verdict": "allow", "allow": true, "reasons": [], "policy_id": null,
            "metadata": metadata, "decided_by": null, "interaction_mode": "interactive",
            "stages": [], "generation": 1, "duration_us": 1, "judged_at": judged_at,
        }))
        .unwrap()
    }

    fn logged(call: &ToolCall, evaluation: &Evaluation, trust: CallerTrust) -> serde_json::Value {
        let redactor = Redactor::new(&[]).unwrap();
        serde_json::to_value(LoggedAttribution::of(call, evaluation, trust, &redactor)).unwrap()
    }

    const NOW: &str = "2026-12-05T00:00:00Z";

    #[test]
    fn a_role_an_agent_claims_shows_as_claimed_and_not_honoured() {
        let c = call(json!({"user_role": "admin", "user_id": "mallory", "thread_id": "t"}));
        let e = evaluation(NOW, json!({}));
        let trust = CallerTrust {
            caller: Caller::Agent,
            passport: None,
        };
        let a = logged(&c, &e, trust);
        assert_eq!(
            a["claimed"],
            json!({"user_role": "admin", "user_id": "mallory"})
        );
        assert_eq!(
            a["honoured"],
            json!({"thread_id": "t", "tool_call_id": "c1", "is_subagent": false,
                   "timestamp": NOW})
        );
    }

    #[test]
    fn a_field_the_token_may_assert_is_honoured_and_not_repeated_as_claimed() {
        let c = call(json!({"user_role": "admin", "oauth_id": "42"}));
        let e = evaluation(NOW, json!({}));
        let caller = Caller::Asserting(Asserts::NONE.with(Attribution::UserRole));
        let a = logged(
            &c,
            &e,
            CallerTrust {
                caller,
                passport: None,
            },
        );
        assert_eq!(a["honoured"]["user_role"], "admin");
        assert_eq!(a["claimed"], json!({"oauth_id": "42"}));
    }

    #[test]
    fn the_passport_replaces_the_agent_id_and_both_show() {
        let c = call(json!({"agent_id": "someone-else", "is_subagent": true}));
        let e = evaluation(
            NOW,
            json!({"passport_id": "550e8400-e29b-41d4-a716-446655440000"}),
        );
        let trust = CallerTrust {
            caller: Caller::Agent,
            passport: Some("agent-7"),
        };
        let a = logged(&c, &e, trust);
        assert_eq!(a["honoured"]["agent_id"], "agent-7");
        assert_eq!(
            a["honoured"]["passport_id"],
            "550e8400-e29b-41d4-a716-446655440000"
        );
        assert_eq!(a["honoured"]["is_subagent"], true);
        assert_eq!(a["claimed"], json!({"agent_id": "someone-else"}));
    }

    #[test]
    fn an_internal_callers_claims_are_all_honoured() {
        let c = call(json!({"user_role": "admin", "oauth_provider": "github",
                            "timestamp": "2020-01-01T00:00:00Z", "agent_id": "a1"}));
        let e = evaluation("2020-01-01T00:00:00Z", json!({}));
        let trust = CallerTrust {
            caller: Caller::Internal,
            passport: None,
        };
        let a = logged(&c, &e, trust);
        assert!(a.get("claimed").is_none(), "{a}");
        assert_eq!(a["honoured"]["timestamp"], "2020-01-01T00:00:00Z");
        assert_eq!(a["honoured"]["oauth_provider"], "github");
        assert_eq!(a["honoured"]["agent_id"], "a1");
    }

    #[test]
    fn an_agents_timestamp_is_claimed_and_the_judging_time_honoured() {
        let c = call(json!({"timestamp": "2020-01-01T00:00:00Z"}));
        let e = evaluation(NOW, json!({}));
        let trust = CallerTrust {
            caller: Caller::Agent,
            passport: None,
        };
        let a = logged(&c, &e, trust);
        assert_eq!(a["claimed"], json!({"timestamp": "2020-01-01T00:00:00Z"}));
        assert_eq!(a["honoured"]["timestamp"], NOW);
    }

    #[test]
    fn secrets_in_attribution_values_are_redacted() {
        let c = call(json!({"user_id": "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"}));
        let e = evaluation(NOW, json!({}));
        let trust = CallerTrust {
            caller: Caller::Internal,
            passport: None,
        };
        let a = logged(&c, &e, trust);
        let user = a["honoured"]["user_id"].as_str().unwrap();
        assert!(!user.contains("ghp_0123456789"), "{user}");
    }
}
