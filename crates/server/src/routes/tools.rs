//! Which tools an agent may be offered: for a gateway that lists a server's
//! tools to its client (`warden mcp stdio --daemon`), the tools the native
//! permission rules deny by name alone. Authorized as evaluate is.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use warden_types::approval::parse_body;
use warden_types::tools::{MAX_OFFER_TOOLS, OfferAnswer, OfferQuery};

use super::extract::JsonBody;
use crate::body::ApiError;
use crate::state::DaemonState;

/// `POST /v1/tools/offered`: the tools of the question split into those that
/// may be listed and those a rule denies by name, in the order given, under
/// the live policy. Providers are not consulted: the answer depends on the
/// names alone, and every call is judged in full anyway.
pub(super) async fn offered(
    State(daemon): State<Arc<DaemonState>>,
    JsonBody(bytes): JsonBody,
) -> Result<Response, ApiError> {
    let query: OfferQuery =
        parse_body(&bytes, bytes.len()).map_err(|err| ApiError::bad_request(err.to_string()))?;
    if query.tools.len() > MAX_OFFER_TOOLS {
        return Err(ApiError::bad_request(format!(
            "tools: {} names; at most {MAX_OFFER_TOOLS}",
            query.tools.len()
        )));
    }
    let snapshot = daemon.warden.snapshot();
    let permissions = snapshot.permissions();
    let (denied_by_name, offered) = query
        .tools
        .into_iter()
        .partition(|tool| permissions.denies_by_name(tool));
    Ok(axum::Json(OfferAnswer {
        offered,
        denied_by_name,
    })
    .into_response())
}
