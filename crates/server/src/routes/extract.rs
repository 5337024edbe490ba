//! What a handler asks of its request, as axum extractors, so that a handler
//! states only what it does: who called ([`Authorized`], put there by
//! [`authorize`], which the router runs for every route that needs a token),
//! what that caller may do with approvals ([`Answerer`], [`Visible`]), and
//! its body, read within the limits and checked ([`JsonBody`], and
//! [`CheckedBody`] on the routes that judge); and the hand-off of a job to the
//! judging pool ([`on_pool`]); where telemetry is on, the request's trace
//! context ([`Traced`]).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use warden_approval::{ApprovalError, Authority, Reviewer};
use warden_types::Caller;

use crate::auth::Authenticated;
use crate::auth::{Access, Principal, Role};
use crate::body::{ApiError, Refusal, read_checked, read_json};
use crate::state::DaemonState;
use crate::telemetry::RequestTrace;

/// The route's authorization, in front of its handler: the caller's token
/// must be valid and its role one `access` allows (401/403 otherwise). It
/// takes admission's answer for the token when admission looked it up in the
/// token set still in force ([`DaemonState::authorize_admitted`]), so a token
/// is hashed and looked up once per request.
pub(super) async fn authorize(
    State((daemon, access)): State<(Arc<DaemonState>, Access)>,
    mut request: Request,
    next: Next,
) -> Response {
    let admitted = request.extensions_mut().remove::<Authenticated>();
    match daemon.authorize_admitted(request.headers(), admitted, access) {
        Ok(who) => {
            request.extensions_mut().insert(Authorized(who));
            next.run(request).await
        }
        Err(err) => err.into_response(),
    }
}

/// The request's start and its harness's trace context, where telemetry is
/// on; where it is off, nothing is read (`None`).
pub(super) struct Traced(pub(super) Option<RequestTrace>);

impl FromRequestParts<Arc<DaemonState>> for Traced {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        daemon: &Arc<DaemonState>,
    ) -> Result<Self, Self::Rejection> {
        Ok(Traced(
            daemon
                .telemetry
                .as_ref()
                .map(|_| RequestTrace::start(&parts.headers)),
        ))
    }
}

/// The caller [`authorize`] let through.
#[derive(Clone)]
pub(super) struct Authorized(pub(super) Principal);

/// What the pipeline believes of a caller: only a token makes a caller
/// internal, or believed on an attribution field (`asserts:`), never the
/// request body.
pub(crate) fn caller_of(who: &Principal) -> Caller {
    Caller::of_credential(who.role == Role::Internal, who.asserts)
}

impl<S: Send + Sync> FromRequestParts<S> for Authorized {
    type Rejection = ApiError;

    /// A handler of a route the table leaves open has no caller: it is
    /// refused, never served as someone.
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<Authorized>()
            .cloned()
            .ok_or_else(|| {
                ApiError::internal("this route takes no token, so it cannot name its caller")
            })
    }
}

/// A caller that may answer approvals, with the authority it answers under;
/// 403 `approver_required` for a token that may not answer at all, before
/// its body is read.
pub(super) struct Answerer {
    pub(super) token: Principal,
    authority: Authority,
}

impl Answerer {
    /// The reviewer an answer is recorded under; `claimed` is the body's
    /// `reviewer` (required from a relay, its own name from an approver).
    pub(super) fn reviewer(&self, claimed: Option<&str>) -> Result<Reviewer, ApprovalError> {
        Reviewer::authorize(
            &self.token.name,
            self.token.role.as_str(),
            &self.authority,
            claimed,
        )
    }
}

impl FromRequestParts<Arc<DaemonState>> for Answerer {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        daemon: &Arc<DaemonState>,
    ) -> Result<Self, ApiError> {
        let Authorized(who) = Authorized::from_request_parts(parts, daemon).await?;
        match daemon.authority(&who) {
            Authority::Denied => Err(approver_required(&who)),
            authority => Ok(Answerer {
                token: who,
                authority,
            }),
        }
    }
}

/// Whose approvals and grants a caller sees: an agent or internal token its
/// own principal's (`Some`); an approver (or a permitted admin) everyone's
/// (`None`); any other token gets 403 `approver_required`.
pub(super) struct Visible(pub(super) Option<String>);

impl FromRequestParts<Arc<DaemonState>> for Visible {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        daemon: &Arc<DaemonState>,
    ) -> Result<Self, ApiError> {
        let Authorized(who) = Authorized::from_request_parts(parts, daemon).await?;
        match (who.role, daemon.authority(&who)) {
            (Role::Agent | Role::Internal, _) => Ok(Visible(Some(who.name.to_string()))),
            (_, Authority::Approver) => Ok(Visible(None)),
            _ => Err(approver_required(&who)),
        }
    }
}

fn approver_required(who: &Principal) -> ApiError {
    ApprovalError::ApproverRequired {
        token: who.name.to_string(),
        role: who.role.to_string(),
    }
    .into()
}

/// A JSON body read within the limits and checked (media type, size,
/// nesting, duplicate keys), not yet parsed: parsing runs on the judging pool.
/// A body refused for its size or content is an error (413, 400).
pub(super) struct JsonBody(pub(super) Bytes);

impl FromRequest<Arc<DaemonState>> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, daemon: &Arc<DaemonState>) -> Result<Self, ApiError> {
        let (parts, body) = request.into_parts();
        read_json(&parts.headers, body, &daemon.limits())
            .await
            .map(JsonBody)
    }
}

/// On the routes that judge what an agent's model wrote: a body read and
/// checked as for [`JsonBody`], where a body refused for its size or content
/// is a [`Refusal`] to decide on, not an error. Only what the harness alone
/// controls (the media type, a body that stops arriving) is an error.
pub(super) struct CheckedBody(pub(super) Result<Bytes, Refusal>);

impl FromRequest<Arc<DaemonState>> for CheckedBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, daemon: &Arc<DaemonState>) -> Result<Self, ApiError> {
        let (parts, body) = request.into_parts();
        read_checked(&parts.headers, body, &daemon.limits())
            .await
            .map(CheckedBody)
    }
}

/// Runs a job on the judging pool: a job the pool would not take is 503
/// `overloaded`, and the job's own error keeps its answer.
pub(super) async fn on_pool<T, E>(
    daemon: &Arc<DaemonState>,
    job: impl FnOnce(&DaemonState) -> Result<T, E> + Send + 'static,
) -> Result<T, ApiError>
where
    T: Send + 'static,
    E: Into<ApiError> + Send + 'static,
{
    daemon.offload(job).await?.map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[tokio::test]
    async fn a_request_the_routes_authorization_did_not_pass_has_no_caller() {
        let (mut parts, ()) = axum::http::Request::builder()
            .header("authorization", "Bearer some-token-0123456789abcdef")
            .body(())
            .unwrap()
            .into_parts();
        let refused = Authorized::from_request_parts(&mut parts, &())
            .await
            .err()
            .expect("no caller without the route's authorization");
        assert_eq!(refused.status, StatusCode::INTERNAL_SERVER_ERROR);
    }
}
