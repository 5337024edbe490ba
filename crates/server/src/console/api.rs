//! The console's JSON API (`/console/api/…`), for the signed-in person only:
//! the pauses waiting, one pause, a trial judgement of an edit, the answer, the
//! journal, and the event stream. Answers go through the same gate as the
//! `/v1` resume route, as the signed-in token's name.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::session;
use super::signin::{changing, signed_in};
use super::view::{Detail, Listed, ResolutionView};
use crate::auth::Principal;
use crate::body::{ApiError, read_json};
use crate::events::Signal;
use crate::state::DaemonState;
use warden_approval::validate::check_id;
use warden_approval::{
    ApprovalError, ApprovalEvent, ApprovalStatus, Authority, JournalFilter, ListFilter,
    ResumeRequest, Reviewer,
};
use warden_types::decision::{Reason, Verdict};

/// How often the event stream sends a comment, so that proxies and the
/// browser keep an idle stream open.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Journal entries per page of the history.
const HISTORY_PAGE: usize = 100;

/// `GET /console/api/session`: who is signed in, and the CSRF token.
pub async fn session(
    State(daemon): State<Arc<DaemonState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (session, _) = signed_in(&daemon, &headers)?;
    let left = session
        .expires()
        .saturating_duration_since(std::time::Instant::now());
    Ok(axum::Json(serde_json::json!({
        "name": &*session.name,
        "role": session.role.as_str(),
        "csrf": session.csrf,
        "expires_in_s": left.as_secs(),
    }))
    .into_response())
}

#[derive(Serialize)]
struct ApprovalList {
    approvals: Vec<Listed>,
}

/// `GET /console/api/approvals`: every pause waiting, across principals and
/// threads, newest first.
pub async fn approvals(
    State(daemon): State<Arc<DaemonState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    signed_in(&daemon, &headers)?;
    let filter = ListFilter {
        principal: None,
        thread_id: None,
        include_resolved: false,
    };
    let views = daemon
        .offload(move |daemon| daemon.gate.approvals(&filter))
        .await
        .map_err(ApiError::from)??;
    let approvals = views.iter().rev().map(Listed::of).collect();
    Ok(axum::Json(ApprovalList { approvals }).into_response())
}

/// The stored pause `approval_id`; 404 when there is none.
async fn record(
    daemon: &Arc<DaemonState>,
    approval_id: &str,
) -> Result<warden_approval::ApprovalRecord, ApiError> {
    check_id("approval_id", approval_id).map_err(ApprovalError::from)?;
    let id = approval_id.to_string();
    let found = daemon
        .offload(move |daemon| daemon.gate.store().get(&id))
        .await
        .map_err(ApiError::from)?
        .map_err(ApprovalError::from)?;
    found.ok_or_else(|| {
        ApiError::new(
            axum::http::StatusCode::NOT_FOUND,
            "approval_not_found",
            format!("there is no approval {approval_id}"),
        )
    })
}

/// `GET /console/api/approvals/{approval_id}`: one pause, its arguments
/// summarised and redacted.
pub async fn approval(
    State(daemon): State<Arc<DaemonState>>,
    Path(approval_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    signed_in(&daemon, &headers)?;
    let record = record(&daemon, &approval_id).await?;
    let redactor = daemon.warden.snapshot().redactor().clone();
    Ok(axum::Json(Detail::of(&record, &redactor)).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditTrial {
    request_id: String,
    args: Value,
}

#[derive(Serialize)]
struct TrialAnswer {
    request_id: String,
    verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    decided_by: Option<String>,
    reasons: Vec<Reason>,
}

/// `POST /console/api/approvals/{approval_id}/check` with
/// `{"request_id", "args"}`: how the policy live now judges the call with
/// these arguments, as a resume will judge the edit (the paused run's context
/// and caller, the host's time). Changes nothing: a denied edit can be
/// corrected before the answer is sent, which the resume would not allow.
pub async fn check_edit(
    State(daemon): State<Arc<DaemonState>>,
    Path(approval_id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    changing(&daemon, &headers)?;
    let bytes = read_json(&headers, body, &daemon.limits()).await?;
    let trial: EditTrial = serde_json::from_slice(&bytes).map_err(|err| {
        ApiError::bad_request(format!(
            "the body must be {{\"request_id\", \"args\"}}: {err}"
        ))
    })?;
    if !trial.args.is_object() {
        return Err(ApiError::bad_request("args must be a JSON object"));
    }
    let record = record(&daemon, &approval_id).await?;
    let call = record
        .requests
        .iter()
        .find(|r| r.request_id == trial.request_id)
        .and_then(|r| r.tool_call_id.as_deref())
        .and_then(|id| record.message.position(id))
        .map(|i| record.message.tool_calls[i].clone());
    let Some(call) = call else {
        return Err(ApiError::bad_request(format!(
            "approval {approval_id} has no request '{}'",
            warden_policy::redact::excerpt(&trial.request_id, 80)
        )));
    };
    let judged = daemon
        .offload(move |daemon| daemon.gate.judge_edit(&record, &call, trial.args))
        .await
        .map_err(ApiError::from)?;
    let answer = TrialAnswer {
        request_id: trial.request_id,
        verdict: warden_log::status_verdict(judged.status),
        decided_by: judged.decided_by,
        reasons: judged.reasons,
    };
    Ok(axum::Json(answer).into_response())
}

/// `POST /console/api/approvals/{approval_id}/resume`: the answer, as the
/// `/v1` resume route takes it (`decisions` or `reject_all`), in the
/// signed-in token's name. Edits are judged again; a denied edit comes back
/// as a denied call.
pub async fn resume(
    State(daemon): State<Arc<DaemonState>>,
    Path(approval_id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let (_, who) = changing(&daemon, &headers)?;
    let bytes = read_json(&headers, body, &daemon.limits()).await?;
    let request = ResumeRequest::from_json(&bytes)?;
    if request.reviewer.is_some() {
        return Err(ApiError::bad_request(
            "the console answers in the signed-in name: leave `reviewer` out",
        ));
    }
    answer(&daemon, &who, &approval_id, request).await
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RejectAllRequest {
    #[serde(default)]
    message: Option<String>,
}

/// `POST /console/api/approvals/{approval_id}/reject-all` with an optional
/// `{"message"}`: every pending call rejected.
pub async fn reject_all(
    State(daemon): State<Arc<DaemonState>>,
    Path(approval_id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let (_, who) = changing(&daemon, &headers)?;
    let bytes = read_json(&headers, body, &daemon.limits()).await?;
    let request: RejectAllRequest = if bytes.is_empty() {
        RejectAllRequest::default()
    } else {
        serde_json::from_slice(&bytes).map_err(|err| {
            ApiError::bad_request(format!("the body must be {{\"message\"}}: {err}"))
        })?
    };
    let message = request.message.filter(|m| !m.trim().is_empty());
    answer(
        &daemon,
        &who,
        &approval_id,
        ResumeRequest::reject_all(message),
    )
    .await
}

async fn answer(
    daemon: &Arc<DaemonState>,
    who: &Principal,
    approval_id: &str,
    request: ResumeRequest,
) -> Result<Response, ApiError> {
    let record = record(daemon, approval_id).await?;
    if record.status != ApprovalStatus::Pending {
        return Err(warden_approval::journal::resolved_error(&record).into());
    }
    let reviewer = Reviewer::authorize(&who.name, who.role.as_str(), &Authority::Approver, None)?;
    let (thread, id) = (record.thread_id.clone(), approval_id.to_string());
    let resolution = daemon
        .offload(move |daemon| daemon.gate.resume(&reviewer, &thread, Some(&id), &request))
        .await
        .map_err(ApiError::from)??;
    if !resolution.replayed {
        daemon.record_resolution(&resolution, who).await;
    }
    tracing::info!(token = %who.name, approval_id, "answered from the console");
    Ok(axum::Json(ResolutionView::of(&resolution)).into_response())
}

#[derive(Serialize)]
struct History {
    events: Vec<ApprovalEvent>,
    /// Pass as `before` for the next (older) page; absent at the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    older: Option<u64>,
}

/// `GET /console/api/history[?before=SEQ]`: the approval journal, newest
/// first, a page at a time (arguments only as digests, as journalled).
pub async fn history(
    State(daemon): State<Arc<DaemonState>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    signed_in(&daemon, &headers)?;
    let mut before = None;
    for pair in query
        .as_deref()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
    {
        match pair.split_once('=') {
            Some(("before", n)) => {
                before = Some(n.parse::<u64>().map_err(|_| {
                    ApiError::bad_request("before must be a journal sequence number")
                })?)
            }
            _ => {
                return Err(ApiError::bad_request(
                    "unknown query parameter (known: before=SEQ)",
                ));
            }
        }
    }
    let filter = JournalFilter {
        before_seq: before,
        limit: Some(HISTORY_PAGE),
        ..JournalFilter::default()
    };
    let mut events = daemon
        .offload(move |daemon| daemon.gate.journal(&filter))
        .await
        .map_err(ApiError::from)??;
    events.reverse();
    let older = (events.len() == HISTORY_PAGE)
        .then(|| events.last().map(|e| e.seq))
        .flatten();
    Ok(axum::Json(History { events, older }).into_response())
}

/// `GET /console/api/events`: a `text/event-stream` of `paused` and
/// `resolved` events (and `resync` when this reader fell behind and should
/// read the list again), a keep-alive comment every 15 s; it ends when the
/// session does or the daemon stops. At most a quarter of the connections
/// the daemon holds may be event streams (503 past it).
pub async fn events(
    State(daemon): State<Arc<DaemonState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (session, _) = signed_in(&daemon, &headers)?;
    let id = session::cookie(&headers, session::SESSION_COOKIE)
        .unwrap_or_default()
        .to_string();
    let cap = (daemon.connections.cap() / 4).max(1);
    let turn = daemon.events.open_stream(cap).ok_or_else(|| {
        ApiError::overloaded(format!(
            "{cap} console event streams are open (a quarter of server.limits.max_connections); \
             close one, e.g. another tab"
        ))
    })?;
    let subscription = daemon.events.subscribe();
    let ends = tokio::time::Instant::from_std(session.expires());
    let state = (subscription, daemon.clone(), id, ends, turn);
    let stream = futures_util::stream::unfold(
        state,
        |(mut sub, daemon, id, ends, turn)| async move {
            {
                if *sub.closing.borrow() {
                    return None;
                }
                let event = tokio::select! {
                    received = sub.events.recv() => match received {
                        Ok(Signal::Pause(event)) => Event::default()
                            .event(event.kind.as_str())
                            .id(event.approval_id.clone())
                            .json_data(&*event)
                            .ok()?,
                        Ok(Signal::Resync) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                            Event::default().event("resync").data("{}")
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
                    },
                    _ = sub.closing.changed() => return None,
                    _ = tokio::time::sleep_until(ends) => return None,
                };
                // A session signed out (or whose token went) hears nothing more.
                daemon.sessions.get(&id)?;
                Some((Ok::<_, Infallible>(event), (sub, daemon, id, ends, turn)))
            }
        },
    );
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"))
        .into_response())
}
