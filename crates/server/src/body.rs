//! Request bodies and error answers: a body must keep arriving (408 when it
//! falls below the minimum rate), is read only up to the size limit, and its
//! JSON is checked (valid, nesting, duplicate keys) before it is parsed. On the
//! routes that judge what an agent's model wrote (`/v1/evaluate`, the
//! tool-calls route) a body refused for its size or content becomes a deny
//! decision ([`Refusal`]); elsewhere it is an error. Every error is JSON that
//! says what and why.

use std::error::Error as StdError;
use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body::{Frame, SizeHint};
use tokio::time::{Instant, Sleep};

pub use crate::limits::HttpLimits;

/// An error answer: `{"error": {"code": ..., "message": ...}}`.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status it is answered with.
    pub status: StatusCode,
    /// What went wrong, for programs (`unauthorized`, `body_too_large`, ...).
    pub code: &'static str,
    /// What went wrong and where, for people.
    pub message: String,
    /// The structured part, for programs (the approval routes' errors).
    pub details: serde_json::Value,
}

/// The error body (a wire type, shared with the clients).
pub use warden_types::error::{ErrorBody, ErrorDetail};

impl ApiError {
    /// An error with this status, code and message, and no details.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            details: serde_json::Value::Null,
        }
    }

    /// 400 `invalid_request`: the request cannot be used as sent.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }

    /// 401 `unauthorized`: no valid token (the answer names the scheme).
    pub fn unauthorized(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    /// 403 `forbidden`: a valid token whose role the route does not allow.
    pub fn forbidden(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// 413 `body_too_large`: the body is past the size limit.
    pub fn too_large(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", message)
    }

    /// 500 `internal`: the daemon failed, not the request.
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// 503 `overloaded`: the daemon refused the request for want of room; it
    /// may be retried (the answer says when, in `Retry-After`).
    pub fn overloaded(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "overloaded", message)
    }
}

impl From<crate::workers::PoolError> for ApiError {
    /// A job the judging pool would not take (503, retried later) or lost.
    fn from(err: crate::workers::PoolError) -> Self {
        use crate::workers::PoolError;
        match err {
            PoolError::Full { .. } | PoolError::PrincipalFull { .. } => {
                ApiError::overloaded(err.to_string())
            }
            PoolError::Panicked => ApiError::internal("the request failed: a worker panicked"),
        }
    }
}

impl From<warden_approval::ApprovalError> for ApiError {
    fn from(err: warden_approval::ApprovalError) -> Self {
        use warden_approval::{ApprovalError, StoreError};
        // Another process holds the store's write lock: nothing was changed,
        // and a retry may succeed.
        if let ApprovalError::Store(StoreError::Busy { .. }) = &err {
            return ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "store_busy",
                err.to_string(),
            );
        }
        ApiError {
            status: StatusCode::from_u16(err.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            code: err.code(),
            message: err.to_string(),
            details: err.details(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_string(),
                message: self.message,
                details: self.details,
            },
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"warden\""),
            );
        }
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        // Refused before its body was read (or while reading it): the rest of
        // the body may still be on its way, so the connection cannot carry
        // another request. Say so, rather than let the client find out on its
        // next one.
        if matches!(
            self.status,
            StatusCode::UNAUTHORIZED
                | StatusCode::FORBIDDEN
                | StatusCode::REQUEST_TIMEOUT
                | StatusCode::PAYLOAD_TOO_LARGE
                | StatusCode::UNSUPPORTED_MEDIA_TYPE
                | StatusCode::SERVICE_UNAVAILABLE
        ) {
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

/// Why a body from an authenticated caller cannot be judged: the deny
/// decision's reason code and message. A harness cannot tell which part of a
/// body its model wrote, so these are decisions on the routes that judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
    /// The body, when it was read (not when it was too large): enough to name
    /// the call in the log, or to list the calls of a model response.
    pub body: Option<Bytes>,
}

impl Refusal {
    pub fn of(err: &warden_types::request::RequestError) -> Option<Refusal> {
        err.refusal_code().map(|code| Refusal {
            code,
            message: err.to_string(),
            body: None,
        })
    }

    /// The error a route that does not judge answers instead.
    pub fn into_error(self) -> ApiError {
        match self.code {
            warden_types::codes::INPUT_TOO_LARGE => ApiError::too_large(self.message),
            _ => ApiError::bad_request(self.message),
        }
    }
}

/// Reads a JSON request body within the limits and checks its text (valid
/// JSON, nesting, no duplicate key). The outer error is the harness's (the
/// media type); the inner one a refusal of the content.
pub async fn read_checked(
    headers: &HeaderMap,
    body: Body,
    limits: &HttpLimits,
) -> Result<Result<Bytes, Refusal>, ApiError> {
    let bytes = match read_body(headers, body, limits).await? {
        Ok(bytes) => bytes,
        Err(refusal) => return Ok(Err(refusal)),
    };
    if let Err(problem) = warden_types::strict_json::check(&bytes, limits.max_json_depth) {
        let err = warden_types::request::RequestError::from(problem);
        let mut refusal = Refusal::of(&err).expect("a JSON problem is a refusal");
        refusal.body = Some(bytes);
        if let warden_types::request::RequestError::TooDeep { .. } = err {
            refusal.message = format!(
                "the request body nests JSON deeper than the limit of {} levels (server.limits.max_json_depth)",
                limits.max_json_depth
            );
        }
        return Ok(Err(refusal));
    }
    Ok(Ok(bytes))
}

/// Reads a JSON request body within the limits, refusing whatever
/// [`read_checked`] refuses as an error (for the routes that do not judge).
pub async fn read_json(
    headers: &HeaderMap,
    body: Body,
    limits: &HttpLimits,
) -> Result<Bytes, ApiError> {
    read_checked(headers, body, limits)
        .await?
        .map_err(Refusal::into_error)
}

/// Reads the body up to the size limit; past it, a refusal.
async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limits: &HttpLimits,
) -> Result<Result<Bytes, Refusal>, ApiError> {
    if let Some(kind) = headers.get(header::CONTENT_TYPE) {
        let kind = kind.to_str().unwrap_or("");
        let essence = kind.split(';').next().unwrap_or("").trim();
        if !(essence.eq_ignore_ascii_case("application/json") || essence.ends_with("+json")) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                format!("the body must be application/json, not '{kind}'"),
            ));
        }
    }
    let too_large = || Refusal {
        code: warden_types::codes::INPUT_TOO_LARGE,
        message: format!(
            "the request body exceeds the limit of {} bytes (server.limits.max_body_bytes)",
            limits.max_body_bytes
        ),
        body: None,
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes as u64) {
        return Ok(Err(too_large()));
    }
    match axum::body::to_bytes(body, limits.max_body_bytes).await {
        Ok(bytes) => Ok(Ok(bytes)),
        Err(err) => {
            let err = err.into_inner();
            if caused_by::<http_body_util::LengthLimitError>(err.as_ref()) {
                Ok(Err(too_large()))
            } else if caused_by::<BodyTooSlow>(err.as_ref()) {
                Err(ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "body_timeout",
                    format!(
                        "the request body arrived too slowly: it is given {} ms, plus one second for every {} bytes (server.limits.body_read_timeout_ms, min_body_bytes_per_s)",
                        limits.body_read_timeout_ms, limits.min_body_bytes_per_s
                    ),
                ))
            } else {
                Err(ApiError::bad_request(format!(
                    "the request body could not be read: {err}"
                )))
            }
        }
    }
}

/// Whether `E` is `err` or one of its causes.
fn caused_by<E: StdError + 'static>(err: &(dyn StdError + 'static)) -> bool {
    let mut next = Some(err);
    while let Some(err) = next {
        if err.is::<E>() {
            return true;
        }
        next = err.source();
    }
    false
}

/// A body that fell below the minimum rate.
#[derive(Debug, thiserror::Error)]
#[error("the request body arrived below the minimum rate")]
pub struct BodyTooSlow;

/// A request body that must keep arriving: it is given a grace period from
/// the first time it is read, and one more second for every `rate` bytes that
/// arrive; a client that sends slower (one byte a second, or nothing) gets an
/// error instead of holding its connection, its turn and its buffer forever.
pub struct MinRateBody<B> {
    inner: B,
    grace: Duration,
    /// Bytes a second.
    rate: u64,
    started: Option<Instant>,
    received: u64,
    timer: Option<Pin<Box<Sleep>>>,
}

impl<B> MinRateBody<B> {
    pub fn new(inner: B, limits: &HttpLimits) -> Self {
        MinRateBody {
            inner,
            grace: limits.body_read_timeout(),
            rate: limits.min_body_bytes_per_s.max(1),
            started: None,
            received: 0,
            timer: None,
        }
    }

    /// When the body must have arrived, given what has arrived so far.
    fn deadline(&self, started: Instant) -> Instant {
        let earned = Duration::from_secs_f64(self.received as f64 / self.rate as f64);
        started + self.grace + earned
    }
}

impl<B> http_body::Body for MinRateBody<B>
where
    B: http_body::Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    type Data = Bytes;
    type Error = Box<dyn StdError + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        let started = *this.started.get_or_insert_with(Instant::now);
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.received += data.len() as u64;
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(err))) => Poll::Ready(Some(Err(err.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                let deadline = this.deadline(started);
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if timer.deadline() != deadline {
                    timer.as_mut().reset(deadline);
                }
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTooSlow)))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_json_depth: usize) -> HttpLimits {
        HttpLimits {
            max_json_depth,
            ..HttpLimits::default()
        }
    }

    async fn read(json: &str, depth: usize) -> Result<Bytes, Refusal> {
        read_checked(
            &HeaderMap::new(),
            Body::from(json.to_string()),
            &limits(depth),
        )
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn a_body_that_stops_arriving_fails_after_its_grace_and_what_it_earned() {
        use http_body_util::BodyExt as _;
        let limits = HttpLimits {
            body_read_timeout_ms: 100,
            min_body_bytes_per_s: 1000,
            ..HttpLimits::default()
        };
        let body = MinRateBody::new(Frames(vec![Bytes::from(vec![b'x'; 200])]), &limits);
        let started = Instant::now();
        let err = body.collect().await.unwrap_err();
        assert!(err.is::<BodyTooSlow>(), "{err}");
        // 100 ms of grace, 200 more for the 200 bytes that arrived.
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(300), "{took:?}");
        assert!(took < Duration::from_secs(3), "{took:?}");
    }

    /// A body that gives its frames, then never ends.
    struct Frames(Vec<Bytes>);

    impl http_body::Body for Frames {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            match self.get_mut().0.pop() {
                Some(data) => Poll::Ready(Some(Ok(Frame::data(data)))),
                None => Poll::Pending,
            }
        }
    }

    #[tokio::test]
    async fn nesting_within_the_limit_passes() {
        assert!(read(r#"{"a":[{"b":1}]}"#, 3).await.is_ok());
    }

    #[tokio::test]
    async fn nesting_past_the_limit_is_refused_naming_the_limit() {
        let refusal = read(r#"{"a":[{"b":1}]}"#, 2).await.unwrap_err();
        assert_eq!(refusal.code, "warden.input_too_deep");
        assert!(
            refusal.message.contains("max_json_depth"),
            "{}",
            refusal.message
        );
    }

    #[tokio::test]
    async fn brackets_inside_strings_do_not_count() {
        assert!(read(r#"{"a":"[[[[{{{{\"[["}"#, 1).await.is_ok());
    }

    #[tokio::test]
    async fn a_refusal_is_an_error_on_a_route_that_does_not_judge() {
        let err = read_json(
            &HeaderMap::new(),
            Body::from(r#"{"a": 1, "a": 2}"#),
            &HttpLimits::default(),
        )
        .await
        .unwrap_err();
        assert_eq!(
            (err.status, err.code),
            (StatusCode::BAD_REQUEST, "invalid_request")
        );
    }
}
