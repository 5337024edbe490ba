//! What the approval list makes of a call every stage allowed, wherever the call
//! is judged: in a model response (the approval gate) or alone (`POST
//! /v1/evaluate`, `warden eval`, the Claude Code hook). A listed tool is never
//! simply allowed: it waits for a human where one can be asked, follows
//! `hitl_approval.non_interactive` in an unattended run, and is denied for a
//! subagent or a harness that cannot resume.

use warden_policy::origin::Reach;
use warden_types::codes;
use warden_types::{Reason, ToolCall};

use crate::hitl::NonInteractive;
use crate::registry::Snapshot;

/// What happens to an allowed call that the approval list names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listed {
    /// A human must approve it (`warden.approval_required`).
    Pause(Reason),
    /// Nobody can be asked and `non_interactive: allow`: it runs, with this
    /// notice (`warden.approval_waived`).
    Waived(Reason),
    /// Nobody can be asked: denied (`warden.approval_unavailable`).
    Unavailable(Reason),
}

/// The approval list's answer for an allowed call, or `None` when the call is
/// not listed.
pub fn listed(snapshot: &Snapshot, call: &ToolCall, reach: &Reach) -> Option<Listed> {
    let entry = snapshot
        .approval_list
        .requires_approval(call, &snapshot.permissions)?;
    let listed_because = format!(
        "tool '{}' is listed under hitl_approval ('{entry}')",
        call.tool_name
    );
    Some(match reach {
        Reach::Pause => Listed::Pause(Reason::new(
            codes::APPROVAL_REQUIRED,
            format!("{listed_because}: a human must approve the call"),
        )),
        Reach::Unattended(why)
            if snapshot.approval_list.non_interactive() == NonInteractive::Allow =>
        {
            Listed::Waived(Reason::new(
                codes::APPROVAL_WAIVED,
                format!("{listed_because}, but {why}; hitl_approval.non_interactive is allow"),
            ))
        }
        Reach::Unattended(why) | Reach::Never(why) => Listed::Unavailable(Reason::new(
            codes::APPROVAL_UNAVAILABLE,
            format!("{listed_because} and needs a human's approval, but {why}: denied"),
        )),
    })
}
