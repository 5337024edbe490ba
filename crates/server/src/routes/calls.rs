//! What an agent's model wants to run: one tool call (`/v1/evaluate`) or a
//! model response through the approval gate (the tool-calls route). What the
//! model controls never makes an error here: a body refused for its size or
//! content is a deny decision, logged like any other.

use std::sync::Arc;

use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use warden::{Evaluation, Shadow};
use warden_approval::validate::check_id;
use warden_approval::{ApprovalError, GateOutcome, ModelResponse, RunRef};
use warden_log::DecisionLog;
use warden_types::Caller;
use warden_types::approval::{McpAskAnswer, McpAttestation};
use warden_types::call_listing::list_calls;
use warden_types::decision::Reason;
use warden_types::request::{RequestError, ToolCall};

use super::extract::{Authorized, CheckedBody, Traced};
use crate::auth::Principal;
use crate::body::{ApiError, Refusal};
use crate::refusal::{self, OVERLOADED, STORE_UNAVAILABLE};
use crate::state::DaemonState;
use crate::telemetry::{RequestTrace, timed};

/// The response header that carries the decision log's id for a decision.
pub const DECISION_ID_HEADER: &str = "x-warden-decision-id";

/// `POST /v1/evaluate`: one tool call, the decision (as `warden eval` prints it).
/// What the agent's model controls never makes an error here: a body too large,
/// not JSON, too deep, with a duplicate key, a bad tool name or id, or a thread
/// waiting for a human, is a deny decision, logged like any other.
pub(super) async fn evaluate(
    State(daemon): State<Arc<DaemonState>>,
    Traced(mut trace): Traced,
    Authorized(who): Authorized,
    CheckedBody(body): CheckedBody,
) -> Result<Response, ApiError> {
    let trace_ref = trace.as_ref();
    let bytes = match body {
        Ok(bytes) => bytes,
        Err(refusal) => {
            let call = what_was_sent(refusal.body.as_deref().unwrap_or_default());
            return Ok(refuse(&daemon, &who, &call, refusal, trace_ref).await);
        }
    };
    let call = match ToolCall::from_checked_json(&bytes) {
        Ok(call) => Arc::new(call),
        Err(err) => {
            return match Refusal::of(&err) {
                Some(refusal) => {
                    let sent = what_was_sent(&bytes);
                    Ok(refuse(&daemon, &who, &sent, refusal, trace_ref).await)
                }
                None => Err(request_error(err)),
            };
        }
    };
    let caller = super::extract::caller_of(&who);
    let judged = {
        let at_once = |daemon: &DaemonState| {
            let (judged, window) = timed(|| daemon.gate.evaluate_at_once(&who.name, &call, caller));
            judged.map(|judged| (judged.map_err(request_error), window))
        };
        let (call, principal) = (call.clone(), who.name.clone());
        daemon
            .judge(at_once, move |daemon| {
                timed(|| judge_call(daemon, &principal, &call, caller))
            })
            .await
    };
    let (evaluation, shadow) = match judged {
        Ok((judged, window)) => {
            if let Some(trace) = &mut trace {
                trace.judged(window);
            }
            judged?
        }
        Err(err) if err.is_overload() => {
            let generation = daemon.warden.snapshot().generation();
            let evaluation =
                refusal::evaluation(&call, caller, generation, OVERLOADED, &err.to_string())
                    .map_err(request_error)?;
            (evaluation, None)
        }
        Err(err) => return Err(ApiError::from(err)),
    };
    Ok(decided(&daemon, &who, &call, &evaluation, shadow, trace.as_ref()).await)
}

/// The error for what only the harness controls in a call (its context).
fn request_error(err: RequestError) -> ApiError {
    ApiError::bad_request(err.to_string())
}

/// Answers a decision: counted, logged (and synced, with `fsync: always`), its
/// log id in the header, and traced where telemetry is on. With a shadow
/// judgment pending, the answer goes at once and its line is held until the
/// shadow is judged or shed (see `warden::shadow` for the bound): the line
/// records both.
async fn decided(
    daemon: &Arc<DaemonState>,
    who: &Principal,
    call: &ToolCall,
    evaluation: &Evaluation,
    shadow: Option<Shadow>,
    trace: Option<&RequestTrace>,
) -> Response {
    daemon.metrics.observe(evaluation);
    if let Some(server) = &call.context.mcp_server {
        daemon
            .metrics
            .mcp_call(server, &call.tool_name, evaluation.verdict);
    }
    let id = match shadow {
        None => {
            let id = daemon.log_new_decision(call, evaluation, who);
            daemon.decisions.synced().await;
            id
        }
        Some(shadow) => {
            let id = DecisionLog::decision_id(evaluation);
            let held = (
                daemon.clone(),
                who.clone(),
                call.clone(),
                evaluation.clone(),
                id.clone(),
            );
            shadow.then(move |outcome| {
                let (daemon, who, call, evaluation, id) = held;
                daemon.log_decision(&id, &call, &evaluation, &who, Some(outcome.logged()));
            });
            id
        }
    };
    if let (Some(telemetry), Some(trace)) = (&daemon.telemetry, trace) {
        telemetry.trace(trace, call, evaluation, &id);
    }
    let mut response = axum::Json(evaluation).into_response();
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(DECISION_ID_HEADER, value);
    }
    response
}

/// The deny decision for a request refused before it could be judged.
async fn refuse(
    daemon: &Arc<DaemonState>,
    who: &Principal,
    call: &ToolCall,
    refusal: Refusal,
    trace: Option<&RequestTrace>,
) -> Response {
    let evaluation = daemon.warden.refusal(refusal.code, &refusal.message);
    let mut response = decided(daemon, who, call, &evaluation, None, trace).await;
    if refusal.body.is_none() {
        close_after(&mut response);
    }
    response
}

/// A body refused before it was read to its end (too large) may still be on
/// its way, so the connection cannot carry another request: say so.
fn close_after(response: &mut Response) {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
}

/// What a refused body said it was, for the decision log: its tool name and
/// ids when it is JSON and they are short strings, else nothing.
fn what_was_sent(bytes: &[u8]) -> ToolCall {
    let body: serde_json::Value = serde_json::from_slice(bytes).unwrap_or_default();
    let text = |v: &serde_json::Value| {
        v.as_str()
            .filter(|s| {
                s.len() <= warden_types::request::MAX_ID_BYTES && !s.chars().any(char::is_control)
            })
            .map(str::to_string)
    };
    let mut call = ToolCall::new(text(&body["tool_name"]).unwrap_or_default(), json!({}));
    call.tool_call_id = text(&body["tool_call_id"]);
    let context = &body["context"];
    call.context.thread_id = text(&context["thread_id"]);
    call.context.run_id = text(&context["run_id"]);
    call.context.agent_id = text(&context["agent_id"]);
    call
}

/// On a judging thread: the thread's pending approval, then the pipeline
/// ([`warden_approval::ApprovalGate::evaluate`]).
fn judge_call(
    daemon: &DaemonState,
    principal: &str,
    call: &ToolCall,
    caller: Caller,
) -> Result<(Evaluation, Option<Shadow>), ApiError> {
    daemon
        .gate
        .evaluate_shadowed(principal, call, caller)
        .map_err(request_error)
}

/// The run a tool-calls route names, under the caller's principal, its ids
/// checked before the body is read.
pub(super) struct Run(RunRef);

impl FromRequestParts<Arc<DaemonState>> for Run {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        daemon: &Arc<DaemonState>,
    ) -> Result<Self, Response> {
        let Authorized(who) = Authorized::from_request_parts(parts, daemon)
            .await
            .map_err(IntoResponse::into_response)?;
        let Path((thread_id, run_id)) = Path::<(String, String)>::from_request_parts(parts, daemon)
            .await
            .map_err(IntoResponse::into_response)?;
        let run = RunRef::new(thread_id, run_id).of(&*who.name);
        for (field, id) in [("thread_id", &run.thread_id), ("run_id", &run.run_id)] {
            check_id(field, id)
                .map_err(|err| ApiError::from(ApprovalError::from(err)).into_response())?;
        }
        Ok(Run(run))
    }
}

/// `POST /v1/threads/{thread_id}/runs/{run_id}/tool-calls`: a model response
/// through the approval gate: what runs, what is denied, what waits for a human.
pub(super) async fn tool_calls(
    State(daemon): State<Arc<DaemonState>>,
    Traced(mut trace): Traced,
    Authorized(who): Authorized,
    Run(run): Run,
    CheckedBody(body): CheckedBody,
) -> Result<Response, ApiError> {
    let caller = super::extract::caller_of(&who);
    let mut unread = false;
    let outcome = match body {
        // Every call it lists is denied, those it lists too deep or too
        // malformed to parse whole by id and name; when it cannot be read at
        // all, none is listed and none runs.
        Err(refusal) => {
            unread = refusal.body.is_none();
            let message = refusal.body.as_deref().and_then(|body| {
                serde_json::from_slice::<ModelResponse>(body)
                    .map(|response| response.message)
                    .ok()
                    .or_else(|| list_calls(body))
            });
            let reason = Reason::new(refusal.code, refusal.message);
            let outcome = daemon.gate.refuse(&run, message.as_ref(), reason);
            if outcome.calls.is_empty() {
                // Nothing to log per call: log the refusal itself.
                let mut call = ToolCall::new("", json!({}));
                call.context.thread_id = Some(run.thread_id.clone());
                call.context.run_id = Some(run.run_id.clone());
                let notice = &outcome.notices[0];
                let evaluation = daemon.warden.refusal(&notice.code, &notice.message);
                daemon.metrics.observe(&evaluation);
                daemon.log_new_decision(&call, &evaluation, &who);
            }
            outcome
        }
        Ok(bytes) => {
            let submitted = {
                let (run, bytes) = (run.clone(), bytes.clone());
                daemon
                    .offload(move |daemon| timed(|| submit(daemon, &run, &bytes, caller)))
                    .await
            };
            match submitted {
                Ok((outcome, window)) => {
                    if let Some(trace) = &mut trace {
                        trace.judged(window);
                    }
                    outcome?
                }
                Err(err) if err.is_overload() => {
                    let response = ModelResponse::from_json(&bytes)?;
                    let generation = daemon.warden.snapshot().generation();
                    refusal::gate_outcome(
                        &run,
                        &response,
                        caller,
                        generation,
                        OVERLOADED,
                        &err.to_string(),
                    )?
                }
                Err(err) => return Err(ApiError::from(err)),
            }
        }
    };
    daemon.record_gate(&outcome, &who).await;
    if let (Some(telemetry), Some(trace)) = (&daemon.telemetry, &trace) {
        telemetry.trace_gate(trace, &outcome);
    }
    let mut response = axum::Json(outcome).into_response();
    if unread {
        close_after(&mut response);
    }
    Ok(response)
}

/// On a judging thread: a model response through the gate. When the store
/// cannot be read or written, nothing of the response runs.
fn submit(
    daemon: &DaemonState,
    run: &RunRef,
    bytes: &[u8],
    caller: Caller,
) -> Result<GateOutcome, ApiError> {
    let response = ModelResponse::from_json(bytes)?;
    match daemon.gate.submit(run, &response, caller) {
        Err(ApprovalError::Store(err)) => {
            let generation = daemon.warden.snapshot().generation();
            let message = format!("the approval store failed: {err}");
            Ok(refusal::gate_outcome(
                run,
                &response,
                caller,
                generation,
                STORE_UNAVAILABLE,
                &message,
            )?)
        }
        other => Ok(other?),
    }
}

/// `POST /v1/mcp/asks`: an ask on one MCP call of the caller's principal
/// (`warden mcp`, after `/v1/evaluate` said ask): the human's answer to the
/// call's earlier ask, consumed by this request only; else its pending ask;
/// else a new ask, filed (and logged) like a pause on the call's own thread.
pub(super) async fn mcp_ask(
    State(daemon): State<Arc<DaemonState>>,
    Authorized(who): Authorized,
    CheckedBody(body): CheckedBody,
) -> Result<Response, ApiError> {
    let bytes = body.map_err(|refusal| ApiError::bad_request(refusal.message))?;
    let call = ToolCall::from_checked_json(&bytes).map_err(request_error)?;
    let caller = super::extract::caller_of(&who);
    let asked = {
        let principal = who.name.clone();
        daemon
            .offload(move |daemon| {
                daemon
                    .gate
                    .mcp_ask(&principal, &call, caller)
                    .map_err(ApiError::from)
            })
            .await
    };
    let mut asked = asked.map_err(ApiError::from)??;
    if let Some(outcome) = &asked.filed {
        daemon.record_gate(outcome, &who).await;
    }
    // Where a human answers it: the console's page for the approval.
    if let McpAskAnswer::Pending {
        approval_id,
        console_url,
        ..
    } = &mut asked.answer
    {
        *console_url = Some(format!(
            "{}/console/approvals/{approval_id}",
            daemon.public_url()
        ));
    }
    Ok(axum::Json(asked.answer).into_response())
}

/// `POST /v1/mcp/asks/attest`: an MCP client's own answer (an elicitation
/// `warden mcp` sent it) to the pending ask of one MCP call of the caller's
/// principal, recorded as client-attested and read by that call at once.
/// An approval the operator's `mcp.client_attested` does not allow is
/// refused (422) and the ask stays pending for a human.
pub(super) async fn mcp_attest(
    State(daemon): State<Arc<DaemonState>>,
    Authorized(who): Authorized,
    CheckedBody(body): CheckedBody,
) -> Result<Response, ApiError> {
    let bytes = body.map_err(|refusal| ApiError::bad_request(refusal.message))?;
    let attestation: McpAttestation = serde_json::from_slice(&bytes)
        .map_err(|err| ApiError::bad_request(format!("invalid attestation: {err}")))?;
    attestation.call.validate().map_err(request_error)?;
    let attested = {
        let principal = who.name.clone();
        daemon
            .offload(move |daemon| {
                daemon
                    .gate
                    .mcp_attest(&principal, &attestation)
                    .map_err(ApiError::from)
            })
            .await
    };
    let attested = attested.map_err(ApiError::from)??;
    Ok(axum::Json(attested.answer).into_response())
}
