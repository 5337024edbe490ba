//! What a harness asks before (or during) a run: the run's resolved interaction
//! policy, in one answer (`GET`/`POST /v1/interaction`, `warden interaction`):
//! the mode, whether a human can be asked (the approval gate's reach, origin
//! included), what a tool under `hitl_approval` does, which of the harness's
//! tools to offer the agent, whether sandbox network requests may be put to a
//! human, and the guidance for the agent's prompt.

use crate::{ApprovalList, NonInteractive};
use warden_policy::interaction::{CLARIFICATION_TOOL, NetworkApproval, RunInteractionPolicy};
use warden_policy::origin::{Reach, RunOrigin};
use warden_types::Caller;
use warden_types::request::RequestError;

pub use warden_types::approval::{
    InteractionQuery, InteractionReport, ListedTools, NetworkRequests,
};

/// Resolves the policy as the pipeline and the approval gate would for a call
/// of this run, under the operator's approval `list`. An error: the harness's
/// context is malformed (an unknown mode or origin from an internal caller).
pub fn resolve(
    query: &InteractionQuery,
    caller: Caller,
    list: &ApprovalList,
) -> Result<InteractionReport, RequestError> {
    let context = &query.context;
    context.check_ids()?;
    let mut policy = RunInteractionPolicy::resolve(context, caller)?;
    let origin = RunOrigin::resolve(context, caller)?;
    if caller != Caller::Internal && context.run_origin.is_some() {
        policy
            .dropped_keys
            .push(warden_policy::origin::RUN_ORIGIN_KEY);
    }
    let reach = Reach::of(&policy, origin);
    let approval_listed_tools = match &reach {
        Reach::Pause => ListedTools::Pause,
        Reach::Unattended(_) if list.non_interactive() == NonInteractive::Allow => ListedTools::Run,
        Reach::Unattended(_) | Reach::Never(_) => ListedTools::Deny,
    };
    let why_no_human = match &reach {
        Reach::Pause => None,
        Reach::Unattended(why) | Reach::Never(why) => Some(why.clone()),
    };
    let offered = |tool: &str| policy.offers_tool(tool) && reach_offers(&reach, tool);
    let (offered_tools, withheld_tools) = match &query.tools {
        Some(tools) => {
            let (offered, withheld): (Vec<String>, Vec<String>) =
                tools.iter().cloned().partition(|t| offered(t));
            (Some(offered), withheld)
        }
        None => (
            None,
            (!offered(CLARIFICATION_TOOL))
                .then(|| CLARIFICATION_TOOL.to_string())
                .into_iter()
                .collect(),
        ),
    };
    let network_requests = match (&why_no_human, policy.network_request()) {
        (None, NetworkApproval::AskHuman) => NetworkRequests::AskHuman,
        _ => NetworkRequests::Deny,
    };
    Ok(InteractionReport {
        mode: policy.mode,
        can_ask_human: why_no_human.is_none(),
        guidance: if why_no_human.is_none() {
            policy.guidance()
        } else {
            policy.unattended_guidance()
        },
        why_no_human,
        approval_listed_tools,
        offered_tools,
        withheld_tools,
        network_requests,
        dropped_keys: policy.dropped_keys.iter().map(|k| k.to_string()).collect(),
    })
}

/// A clarification question needs someone in front of the run, whatever made
/// it unattended (the mode, or an origin that shows no approvals).
fn reach_offers(reach: &Reach, tool: &str) -> bool {
    tool != CLARIFICATION_TOOL || *reach == Reach::Pause
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HitlApproval;
    use warden_policy::interaction::InteractionMode;
    use warden_types::request::CallContext;

    fn report(context: CallContext, tools: Option<&[&str]>, caller: Caller) -> InteractionReport {
        let query = InteractionQuery {
            context,
            tools: tools.map(|t| t.iter().map(|s| s.to_string()).collect()),
        };
        resolve(&query, caller, &ApprovalList::new(&HitlApproval::default())).unwrap()
    }

    #[test]
    fn an_interactive_run_offers_every_tool_and_pauses_listed_ones() {
        let r = report(
            CallContext::default(),
            Some(&["bash", CLARIFICATION_TOOL]),
            Caller::Agent,
        );
        assert!(r.can_ask_human);
        assert_eq!(r.approval_listed_tools, ListedTools::Pause);
        assert_eq!(r.offered_tools.unwrap(), ["bash", CLARIFICATION_TOOL]);
        assert!(r.withheld_tools.is_empty());
        assert_eq!(r.network_requests, NetworkRequests::AskHuman);
    }

    #[test]
    fn a_scheduled_run_withholds_clarification_and_denies_listed_tools() {
        let context = CallContext {
            interaction_mode: Some("scheduled".into()),
            ..CallContext::default()
        };
        let r = report(
            context,
            Some(&["bash", CLARIFICATION_TOOL]),
            Caller::Internal,
        );
        assert_eq!(r.mode, InteractionMode::Scheduled);
        assert!(!r.can_ask_human);
        assert_eq!(r.approval_listed_tools, ListedTools::Deny);
        assert_eq!(r.offered_tools.unwrap(), ["bash"]);
        assert_eq!(r.withheld_tools, [CLARIFICATION_TOOL]);
        assert_eq!(r.network_requests, NetworkRequests::Deny);
        assert!(
            r.guidance.contains("do not wait for a human"),
            "{}",
            r.guidance
        );
    }

    #[test]
    fn an_im_run_is_unattended_though_interactive() {
        let context = CallContext {
            run_origin: Some("im".into()),
            ..CallContext::default()
        };
        let r = report(context, None, Caller::Internal);
        assert_eq!(r.mode, InteractionMode::Interactive);
        assert!(!r.can_ask_human);
        assert_eq!(r.withheld_tools, [CLARIFICATION_TOOL]);
        assert!(
            r.guidance.contains("do not wait for a human"),
            "{}",
            r.guidance
        );
    }

    #[test]
    fn an_agent_cannot_choose_the_mode_or_origin_and_is_told() {
        let context = CallContext {
            interaction_mode: Some("autonomous".into()),
            run_origin: Some("im".into()),
            ..CallContext::default()
        };
        let r = report(context, None, Caller::Agent);
        assert!(r.can_ask_human);
        assert_eq!(r.dropped_keys, ["interaction_mode", "run_origin"]);
    }
}
