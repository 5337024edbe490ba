//! Answers for calls the daemon could not judge: the judging pool was full, or
//! (on the tool-calls route) the approval store failed; on `POST /v1/evaluate`
//! the gate answers for the store itself (`ApprovalGate::evaluate`). Each is a
//! deny in the shape of the route's answer, led by
//! `oap.evaluator_error` as every provider failure is, with a `warden.*` code
//! that says why: never an allow, and never an error a harness could read as
//! "go ahead".

use warden::Evaluation;
use warden_approval::journal::denied;
use warden_approval::unjudged;
use warden_approval::{ApprovalError, GateOutcome, ModelResponse, RunRef, RunState};
use warden_policy::interaction::RunInteractionPolicy;
use warden_types::Caller;
use warden_types::request::{RequestError, ToolCall};

/// The codes of the refusals: every judging thread is busy and the queue is
/// full; the approval store could not be read or written in time.
pub use warden_types::codes::{OVERLOADED, STORE_UNAVAILABLE};
/// The stage the refusal names in `decided_by`.
pub const STAGE: &str = "daemon";

/// The deny `POST /v1/evaluate` answers for a call it could not judge.
pub fn evaluation(
    call: &ToolCall,
    caller: Caller,
    generation: u64,
    code: &'static str,
    message: &str,
) -> Result<Evaluation, RequestError> {
    unjudged::evaluation(call, caller, generation, STAGE, code, message)
}

/// The answer the tool-calls route gives for a model response it could not
/// judge: every call denied, the run going on without them.
pub fn gate_outcome(
    run: &RunRef,
    response: &ModelResponse,
    caller: Caller,
    generation: u64,
    code: &'static str,
    message: &str,
) -> Result<GateOutcome, ApprovalError> {
    let mode = RunInteractionPolicy::resolve(&response.context, caller)?.mode;
    let reasons = unjudged::reasons(code, message);
    Ok(GateOutcome {
        thread_id: run.thread_id.clone(),
        run_id: run.run_id.clone(),
        run_state: RunState::Running,
        approval_id: None,
        requests: Vec::new(),
        calls: response
            .message
            .tool_calls
            .iter()
            .enumerate()
            .map(|(index, call)| denied(index, call, reasons.clone(), Some(STAGE)))
            .collect(),
        message: response.message.clone(),
        interaction_mode: mode,
        generation,
        notices: Vec::new(),
    })
}
