//! Request bodies and error answers: a body is read only up to the size limit
//! (413 past it) and its JSON nesting is checked before it is parsed (400 past
//! the depth limit); every refusal is a JSON error that says what and why.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

/// The `server.limits:` block.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct HttpLimits {
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// The deepest JSON nesting accepted in a request body.
    pub max_json_depth: usize,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_body_bytes: crate::request::MAX_REQUEST_BYTES,
            max_json_depth: crate::request::MAX_INPUT_DEPTH,
        }
    }
}

impl HttpLimits {
    /// Ranges that keep the daemon both useful and safe.
    pub fn check(&self) -> Result<(), String> {
        if !(1024..=16 << 20).contains(&self.max_body_bytes) {
            return Err(format!(
                "server.limits.max_body_bytes: {} is out of range 1024..={}",
                self.max_body_bytes,
                16 << 20
            ));
        }
        if !(2..=256).contains(&self.max_json_depth) {
            return Err(format!(
                "server.limits.max_json_depth: {} is out of range 2..=256",
                self.max_json_depth
            ));
        }
        Ok(())
    }
}

/// An error answer: `{"error": {"code": ..., "message": ...}}`.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// The structured part, for programs (the approval routes' errors).
    pub details: serde_json::Value,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct ErrorDetail {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub details: serde_json::Value,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            details: serde_json::Value::Null,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    pub fn too_large(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl From<crate::approval::ApprovalError> for ApiError {
    fn from(err: crate::approval::ApprovalError) -> Self {
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
        response
    }
}

/// Reads a JSON request body within the limits.
pub async fn read_json(
    headers: &HeaderMap,
    body: Body,
    limits: &HttpLimits,
) -> Result<Bytes, ApiError> {
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
    let too_large = || {
        ApiError::too_large(format!(
            "the request body exceeds the limit of {} bytes (server.limits.max_body_bytes)",
            limits.max_body_bytes
        ))
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes as u64) {
        return Err(too_large());
    }
    let bytes = axum::body::to_bytes(body, limits.max_body_bytes)
        .await
        .map_err(|_| too_large())?;
    check_depth(&bytes, limits.max_json_depth)?;
    Ok(bytes)
}

/// Refuses JSON nested deeper than `max` (arrays and objects), without parsing it.
pub fn check_depth(json: &[u8], max: usize) -> Result<(), ApiError> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in json {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Err(ApiError::bad_request(format!(
                        "the request body nests JSON deeper than the limit of {max} levels (server.limits.max_json_depth)"
                    )));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_within_the_limit_passes() {
        assert!(check_depth(br#"{"a":[{"b":1}]}"#, 3).is_ok());
    }

    #[test]
    fn nesting_past_the_limit_is_refused_naming_the_limit() {
        let err = check_depth(br#"{"a":[{"b":1}]}"#, 2).unwrap_err();
        assert_eq!(err.status, StatusCode::BAD_REQUEST);
        assert!(err.message.contains("max_json_depth"), "{}", err.message);
    }

    #[test]
    fn brackets_inside_strings_do_not_count() {
        assert!(check_depth(br#"{"a":"[[[[{{{{\"[["}"#, 1).is_ok());
    }
}
