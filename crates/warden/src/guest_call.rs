//! The call as a guardrail provider receives it (the contract's `tool-call`),
//! built from the request and what the trust rules admitted. Below the
//! pipeline and the vectors, which both hand calls to providers.

use warden_policy::interaction::InteractionMode;
use warden_policy::trust::Admitted;
use warden_runtime::provider::{GuestCall, GuestInteractionMode};
use warden_types::request::ToolCall;

/// The call as a provider sees it: the context as `admitted` (`trust::admit`)
/// believes it, attributed to `passport` when one is set.
pub(crate) fn provider_call(
    call: &ToolCall,
    admitted: &Admitted,
    passport: Option<&str>,
    mode: InteractionMode,
) -> GuestCall {
    let ctx = &call.context;
    GuestCall {
        tool_name: call.tool_name.clone(),
        tool_input: call.tool_input.to_string(),
        agent_id: passport
            .map(str::to_string)
            .or_else(|| ctx.agent_id.clone()),
        thread_id: ctx.thread_id.clone(),
        run_id: ctx.run_id.clone(),
        tool_call_id: call.tool_call_id.clone(),
        user_id: admitted.user_id.map(str::to_string),
        user_role: admitted.user_role.map(str::to_string),
        oauth_provider: admitted.oauth_provider.map(str::to_string),
        oauth_id: admitted.oauth_id.map(str::to_string),
        is_subagent: ctx.is_subagent,
        timestamp: admitted.judged_at.clone(),
        interaction_mode: match mode {
            InteractionMode::Interactive => GuestInteractionMode::Interactive,
            InteractionMode::Scheduled => GuestInteractionMode::Scheduled,
            InteractionMode::Webhook => GuestInteractionMode::Webhook,
            InteractionMode::Autonomous => GuestInteractionMode::Autonomous,
        },
    }
}
