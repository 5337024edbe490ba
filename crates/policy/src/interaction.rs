//! The run's interaction policy: resolved once per call from trusted context, the
//! single answer to "may a human be asked?" for approvals, clarification and
//! sandbox network requests, and the guidance the agent gets in its prompt.

use serde::Serialize;
pub use warden_types::InteractionMode;

use warden_types::Caller;
use warden_types::request::{CallContext, RequestError};

/// The context keys that choose the interaction mode: honoured only from
/// internal callers.
pub const INTERNAL_ONLY_KEYS: [&str; 4] = [
    "interaction_mode",
    "non_interactive",
    "disable_clarification",
    "channel_name",
];

/// Keys that describe the current process only and are never persisted with a
/// pause or an approval.
pub const RUNTIME_ONLY_KEYS: [&str; 2] = ["channel_name", "disable_clarification"];

/// The tool through which an agent asks its user a question.
pub const CLARIFICATION_TOOL: &str = "ask_clarification";

/// What was decided about a run's interaction with humans.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunInteractionPolicy {
    /// The run's interaction mode.
    pub mode: InteractionMode,
    /// The call comes from a subagent: it never asks a human itself.
    pub is_subagent: bool,
    /// The harness can pause the run for a human and resume it (the default).
    /// Any caller may say it cannot: that only makes decisions stricter.
    pub can_resume: bool,
    /// Internal-only keys the caller sent but is not allowed to set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_keys: Vec<&'static str>,
}

/// What happens to a sandbox network request that needs a human's approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkApproval {
    /// Put it to the human in front of the run.
    AskHuman,
    /// Deny it without asking anyone.
    Deny,
}

impl RunInteractionPolicy {
    /// Resolves the policy. An explicit `interaction_mode` wins and must be one
    /// of the four modes; otherwise the legacy hints, in order:
    /// `non_interactive` → scheduled, `channel_name: github` → webhook,
    /// `disable_clarification` → autonomous, else interactive. From a caller
    /// that is not internal, all four keys are dropped.
    pub fn resolve(context: &CallContext, caller: Caller) -> Result<Self, RequestError> {
        let is_subagent = context.is_subagent;
        let can_resume = context.can_resume != Some(false);
        if caller != Caller::Internal {
            let sent = [
                context.interaction_mode.is_some(),
                context.non_interactive.is_some(),
                context.disable_clarification.is_some(),
                context.channel_name.is_some(),
            ];
            let dropped_keys = INTERNAL_ONLY_KEYS
                .into_iter()
                .zip(sent)
                .filter_map(|(key, sent)| sent.then_some(key))
                .collect();
            return Ok(RunInteractionPolicy {
                mode: InteractionMode::Interactive,
                is_subagent,
                can_resume,
                dropped_keys,
            });
        }
        let mode = match context.interaction_mode.as_deref() {
            Some(given) => InteractionMode::parse(given).ok_or_else(|| {
                RequestError::UnknownInteractionMode {
                    given: given.to_string(),
                    expected: InteractionMode::ALL.map(InteractionMode::as_str).join(", "),
                }
            })?,
            None if context.non_interactive == Some(true) => InteractionMode::Scheduled,
            None if context.channel_name.as_deref() == Some("github") => InteractionMode::Webhook,
            None if context.disable_clarification == Some(true) => InteractionMode::Autonomous,
            None => InteractionMode::Interactive,
        };
        Ok(RunInteractionPolicy {
            mode,
            is_subagent,
            can_resume,
            dropped_keys: Vec::new(),
        })
    }

    /// Whether anyone can be asked anything during this call: only an
    /// interactive lead agent whose harness can pause and resume.
    pub fn can_ask_human(&self) -> bool {
        self.mode == InteractionMode::Interactive && !self.is_subagent && self.can_resume
    }

    /// Why nobody can be asked, when nobody can: a subagent, a harness that
    /// cannot pause, or a run that is not interactive (checked in that order).
    pub fn why_no_human(&self) -> Option<String> {
        if self.is_subagent {
            Some("a subagent cannot ask a human".into())
        } else if !self.can_resume {
            Some("the harness cannot pause this run for a human".into())
        } else if self.mode != InteractionMode::Interactive {
            Some(format!(
                "nobody can be asked in a {} run",
                self.mode.as_str()
            ))
        } else {
            None
        }
    }

    /// Whether the agent should be offered this tool: `ask_clarification` only
    /// where a human can answer.
    pub fn offers_tool(&self, tool_name: &str) -> bool {
        tool_name != CLARIFICATION_TOOL || self.can_ask_human()
    }

    /// A pending sandbox network request: asked only where a human can answer;
    /// denied in unattended runs and for subagents.
    pub fn network_request(&self) -> NetworkApproval {
        if self.can_ask_human() {
            NetworkApproval::AskHuman
        } else {
            NetworkApproval::Deny
        }
    }

    /// Guidance for the agent's system prompt.
    pub fn guidance(&self) -> String {
        if self.can_ask_human() {
            // The newer run policy: act on a reasonable assumption that can be
            // undone, and ask only when the choice matters, not before every step.
            return "<clarification_system>A human is available. Act on reasonable assumptions \
                    that can be undone, and say which you made; ask with ask_clarification only \
                    when the choice matters: it cannot be undone, or the request allows answers \
                    that differ in what they would do.</clarification_system>"
                .into();
        }
        self.unattended_guidance()
    }

    /// Guidance for a run nobody watches, whatever made it so (its mode, or an
    /// origin with nobody in front of an approval).
    pub fn unattended_guidance(&self) -> String {
        format!(
            "<interaction_system mode=\"{}\">No human is watching this run: do not ask questions \
             and do not wait for a human response. {UNATTENDED}</interaction_system>",
            self.mode.as_str()
        )
    }

    /// The tool result an agent gets when its clarification question is
    /// suppressed because nobody can answer it.
    pub fn suppressed_clarification(&self) -> String {
        let article = if self.mode == InteractionMode::Autonomous
            || self.mode == InteractionMode::Interactive
        {
            "an"
        } else {
            "a"
        };
        format!(
            "Clarification is not available: this is {article} {} run and no human can answer. {UNATTENDED}",
            self.mode.as_str()
        )
    }

    /// The reason added to a decision when internal-only keys were dropped.
    pub fn dropped_keys_message(&self) -> Option<String> {
        (!self.dropped_keys.is_empty()).then(|| {
            format!(
                "context keys {} are honoured only from internal callers and were ignored",
                self.dropped_keys.join(", ")
            )
        })
    }
}

/// What an unattended agent should do instead of asking.
const UNATTENDED: &str = "Use the context you have, make minimal, reversible assumptions \
     and list the material ones in your answer. For high-risk or irreversible work without \
     sufficient authorisation, stop and return a structured BLOCKED result that names the \
     missing decision.";

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(f: impl FnOnce(&mut CallContext)) -> CallContext {
        let mut c = CallContext::default();
        f(&mut c);
        c
    }

    fn mode(c: &CallContext) -> InteractionMode {
        RunInteractionPolicy::resolve(c, Caller::Internal)
            .unwrap()
            .mode
    }

    #[test]
    fn without_hints_a_run_is_interactive() {
        assert_eq!(mode(&CallContext::default()), InteractionMode::Interactive);
    }

    #[test]
    fn an_explicit_mode_wins_over_legacy_hints() {
        let c = ctx(|c| {
            c.interaction_mode = Some("webhook".into());
            c.non_interactive = Some(true);
            c.disable_clarification = Some(true);
        });
        assert_eq!(mode(&c), InteractionMode::Webhook);
    }

    #[test]
    fn non_interactive_means_scheduled() {
        let c = ctx(|c| {
            c.non_interactive = Some(true);
            c.channel_name = Some("github".into());
        });
        assert_eq!(mode(&c), InteractionMode::Scheduled);
    }

    #[test]
    fn the_github_channel_means_webhook() {
        let c = ctx(|c| {
            c.channel_name = Some("github".into());
            c.disable_clarification = Some(true);
        });
        assert_eq!(mode(&c), InteractionMode::Webhook);
    }

    #[test]
    fn disabled_clarification_means_autonomous() {
        assert_eq!(
            mode(&ctx(|c| c.disable_clarification = Some(true))),
            InteractionMode::Autonomous
        );
    }

    #[test]
    fn another_channel_is_still_interactive() {
        assert_eq!(
            mode(&ctx(|c| c.channel_name = Some("slack".into()))),
            InteractionMode::Interactive
        );
    }

    #[test]
    fn an_unknown_explicit_mode_is_an_error_naming_the_modes() {
        let c = ctx(|c| c.interaction_mode = Some("Interactive".into()));
        let err = RunInteractionPolicy::resolve(&c, Caller::Internal)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'Interactive'")
                && err.contains("interactive, autonomous, webhook, scheduled"),
            "{err}"
        );
    }

    #[test]
    fn an_agent_caller_cannot_choose_the_mode_and_is_told() {
        let c = ctx(|c| {
            c.interaction_mode = Some("autonomous".into());
            c.channel_name = Some("github".into());
        });
        let policy = RunInteractionPolicy::resolve(&c, Caller::Agent).unwrap();
        assert_eq!(policy.mode, InteractionMode::Interactive);
        assert_eq!(
            policy.dropped_keys,
            vec!["interaction_mode", "channel_name"]
        );
        assert!(
            policy
                .dropped_keys_message()
                .unwrap()
                .contains("internal callers")
        );
    }

    #[test]
    fn an_agent_caller_with_an_invalid_mode_is_not_an_error_the_key_is_dropped() {
        let c = ctx(|c| c.interaction_mode = Some("bogus".into()));
        let policy = RunInteractionPolicy::resolve(&c, Caller::Agent).unwrap();
        assert_eq!(policy.dropped_keys, vec!["interaction_mode"]);
    }

    #[test]
    fn clarification_is_offered_only_where_a_human_can_answer() {
        let unattended = RunInteractionPolicy::resolve(
            &ctx(|c| c.interaction_mode = Some("scheduled".into())),
            Caller::Internal,
        )
        .unwrap();
        assert!(!unattended.offers_tool(CLARIFICATION_TOOL));
        assert!(unattended.offers_tool("bash"));
        let interactive =
            RunInteractionPolicy::resolve(&CallContext::default(), Caller::Internal).unwrap();
        assert!(interactive.offers_tool(CLARIFICATION_TOOL));
    }

    #[test]
    fn unattended_guidance_asks_for_assumptions_or_a_blocked_result() {
        let p = RunInteractionPolicy::resolve(
            &ctx(|c| c.interaction_mode = Some("autonomous".into())),
            Caller::Internal,
        )
        .unwrap();
        let text = p.guidance();
        assert!(
            text.contains("do not wait for a human") && text.contains("BLOCKED"),
            "{text}"
        );
        let suppressed = p.suppressed_clarification();
        assert!(suppressed.contains("BLOCKED") && !suppressed.contains("carry out"));
    }

    #[test]
    fn interactive_guidance_acts_on_reversible_assumptions_and_asks_only_when_it_matters() {
        let p = RunInteractionPolicy::resolve(&CallContext::default(), Caller::Internal).unwrap();
        let text = p.guidance();
        assert!(
            text.contains("can be undone")
                && text.contains("only")
                && !text.contains("before acting"),
            "{text}"
        );
    }

    #[test]
    fn network_requests_are_denied_in_unattended_runs() {
        let p = RunInteractionPolicy::resolve(
            &ctx(|c| c.non_interactive = Some(true)),
            Caller::Internal,
        )
        .unwrap();
        assert_eq!(p.network_request(), NetworkApproval::Deny);
    }

    #[test]
    fn a_harness_that_cannot_resume_has_no_human_to_ask() {
        let p = RunInteractionPolicy::resolve(&ctx(|c| c.can_resume = Some(false)), Caller::Agent)
            .unwrap();
        assert!(!p.can_ask_human());
        assert!(p.why_no_human().unwrap().contains("cannot pause"));
    }

    #[test]
    fn subagents_never_ask_even_in_an_interactive_run() {
        let p = RunInteractionPolicy::resolve(&ctx(|c| c.is_subagent = true), Caller::Internal)
            .unwrap();
        assert_eq!(p.mode, InteractionMode::Interactive);
        assert!(!p.can_ask_human());
        assert_eq!(p.network_request(), NetworkApproval::Deny);
    }
}
