//! Whether a run can pause for a human: the interaction policy (mode, subagent,
//! resume support) together with where the run came from. Chat channels, browser
//! extensions and MCP notifications have nobody in front of an approval card, so
//! they count as unattended even in an interactive mode.

use serde::{Deserialize, Serialize};

use crate::interaction::RunInteractionPolicy;
use warden_types::Caller;
use warden_types::request::{CallContext, RequestError};

/// The context key that names the run's origin; internal callers only.
pub const RUN_ORIGIN_KEY: &str = "run_origin";

/// Where a run was started (`context.run_origin`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOrigin {
    /// A web UI that can show an approval and resume the run (the default).
    Web,
    /// A program using an SDK that handles pauses.
    Sdk,
    /// An instant-messaging channel (Slack, Telegram, Feishu, ...).
    Im,
    /// A browser or editor extension.
    Extension,
    /// A run started by an MCP notification.
    McpNotification,
}

impl RunOrigin {
    /// Every origin, in the order listings and error messages name them.
    pub const ALL: [RunOrigin; 5] = [
        RunOrigin::Web,
        RunOrigin::Sdk,
        RunOrigin::Im,
        RunOrigin::Extension,
        RunOrigin::McpNotification,
    ];

    /// The origin as `context.run_origin` spells it (`web`, `sdk`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            RunOrigin::Web => "web",
            RunOrigin::Sdk => "sdk",
            RunOrigin::Im => "im",
            RunOrigin::Extension => "extension",
            RunOrigin::McpNotification => "mcp_notification",
        }
    }

    /// Whether a human can answer an approval in front of this kind of run.
    pub fn can_show_approvals(self) -> bool {
        matches!(self, RunOrigin::Web | RunOrigin::Sdk)
    }

    /// The origin named in the context. Honoured only from internal callers:
    /// an agent that claimed a chat origin could make a listed tool follow
    /// `non_interactive: allow`. From other callers it is ignored (`Ok(None)`).
    pub fn resolve(context: &CallContext, caller: Caller) -> Result<Option<Self>, RequestError> {
        let Some(given) = context.run_origin.as_deref() else {
            return Ok(None);
        };
        if caller != Caller::Internal {
            return Ok(None);
        }
        RunOrigin::ALL
            .into_iter()
            .find(|o| o.as_str() == given)
            .map(Some)
            .ok_or_else(|| RequestError::Field {
                field: format!("context.{RUN_ORIGIN_KEY}"),
                message: format!(
                    "invalid run_origin '{given}'; expected one of: {}",
                    RunOrigin::ALL.map(RunOrigin::as_str).join(", ")
                ),
            })
    }
}

/// What the approval gate may do in a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// A human can be asked: the call pauses for approval.
    Pause,
    /// Nobody is there to ask, by the run's nature: a listed tool follows
    /// `hitl_approval.non_interactive`. Holds why, for the reason message.
    Unattended(String),
    /// A subagent, or a harness that cannot resume: always denied.
    Never(String),
}

impl Reach {
    /// The reach as the API and the decision log record it.
    pub fn kind(&self) -> warden_types::HumanReach {
        match self {
            Reach::Pause => warden_types::HumanReach::Pause,
            Reach::Unattended(_) => warden_types::HumanReach::Unattended,
            Reach::Never(_) => warden_types::HumanReach::Never,
        }
    }

    /// What the gate may do in a run of this policy and origin: where nobody can be asked, never
    /// for a subagent or a run that cannot resume, else unattended; unattended too where the
    /// origin shows no approvals; otherwise pause.
    pub fn of(policy: &RunInteractionPolicy, origin: Option<RunOrigin>) -> Reach {
        if let Some(why) = policy.why_no_human() {
            return if policy.is_subagent || !policy.can_resume {
                Reach::Never(why)
            } else {
                Reach::Unattended(why)
            };
        }
        match origin {
            Some(origin) if !origin.can_show_approvals() => Reach::Unattended(format!(
                "nobody can answer an approval in a run started from {}",
                match origin {
                    RunOrigin::Im => "an IM channel",
                    RunOrigin::Extension => "an extension",
                    _ => "an MCP notification",
                }
            )),
            _ => Reach::Pause,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(f: impl FnOnce(&mut CallContext), caller: Caller) -> Reach {
        let mut context = CallContext::default();
        f(&mut context);
        let policy = RunInteractionPolicy::resolve(&context, caller).unwrap();
        Reach::of(&policy, RunOrigin::resolve(&context, caller).unwrap())
    }

    #[test]
    fn an_interactive_lead_run_can_pause() {
        assert_eq!(reach(|_| {}, Caller::Agent), Reach::Pause);
        assert_eq!(
            reach(|c| c.run_origin = Some("sdk".into()), Caller::Internal),
            Reach::Pause
        );
    }

    #[test]
    fn im_extension_and_mcp_notification_runs_are_unattended() {
        for origin in ["im", "extension", "mcp_notification"] {
            let r = reach(|c| c.run_origin = Some(origin.into()), Caller::Internal);
            assert!(matches!(r, Reach::Unattended(_)), "{origin}: {r:?}");
        }
    }

    #[test]
    fn scheduled_runs_are_unattended() {
        let r = reach(|c| c.non_interactive = Some(true), Caller::Internal);
        assert!(matches!(r, Reach::Unattended(why) if why.contains("scheduled")));
    }

    #[test]
    fn subagents_and_harnesses_without_resume_never_pause_even_when_unattended() {
        let r = reach(
            |c| {
                c.is_subagent = true;
                c.interaction_mode = Some("webhook".into());
            },
            Caller::Internal,
        );
        assert!(matches!(r, Reach::Never(_)), "{r:?}");
        let r = reach(
            |c| {
                c.can_resume = Some(false);
                c.run_origin = Some("im".into());
            },
            Caller::Internal,
        );
        assert!(matches!(r, Reach::Never(_)), "{r:?}");
    }

    #[test]
    fn an_agent_cannot_claim_an_origin() {
        assert_eq!(
            reach(|c| c.run_origin = Some("im".into()), Caller::Agent),
            Reach::Pause
        );
    }

    #[test]
    fn an_unknown_origin_from_an_internal_caller_is_refused_naming_the_choices() {
        let context = CallContext {
            run_origin: Some("pager".into()),
            ..CallContext::default()
        };
        let err = RunOrigin::resolve(&context, Caller::Internal)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("context.run_origin")
                && err.contains("web, sdk, im, extension, mcp_notification"),
            "{err}"
        );
    }
}
