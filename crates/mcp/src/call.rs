//! What Warden reads of a `tools/call`: the tool's name, its arguments, and
//! the revision the client speaks. Everything else rides along untouched.

use serde_json::Value;

use crate::answer::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};
use crate::elicit::Modes;

/// The judged part of a `tools/call`'s params.
pub(crate) struct CallParams {
    pub(crate) name: String,
    /// An object (`{}` when the call names none).
    pub(crate) arguments: Value,
    /// The client names `2026-07-28` in the request's `_meta`.
    pub(crate) modern: bool,
    /// `_meta.traceparent`, when it is a well-formed W3C trace context; any
    /// other value is not carried (a trace id is no reason to refuse a call).
    pub(crate) traceparent: Option<String>,
    /// The `clientInfo` a `2026-07-28` client sends in each request's `_meta`.
    pub(crate) client_info: Option<Value>,
    /// How a `2026-07-28` client can be asked, declared on this request
    /// (`_meta["io.modelcontextprotocol/clientCapabilities"].elicitation`).
    pub(crate) elicitation: Modes,
    /// A `2026-07-28` retry's `requestState` (a string, if present).
    pub(crate) request_state: Option<String>,
    /// A `2026-07-28` retry's `inputResponses` (an object, if present).
    pub(crate) input_responses: Option<serde_json::Map<String, Value>>,
}

impl CallParams {
    /// Reads `params` as the spec's `CallToolRequestParams`: an object with a
    /// string `name`, `arguments` an object if present, `_meta` an object if
    /// present. Anything else is the client's error, never forwarded.
    pub(crate) fn read(params: Option<&Value>) -> Result<CallParams, String> {
        let params = match params {
            Some(Value::Object(params)) => params,
            Some(_) => return Err("params must be an object".into()),
            None => return Err("params are missing".into()),
        };
        let name = match params.get("name") {
            Some(Value::String(name)) => name.clone(),
            Some(_) => return Err("name must be a string".into()),
            None => return Err("name is missing".into()),
        };
        let arguments = match params.get("arguments") {
            Some(Value::Object(arguments)) => Value::Object(arguments.clone()),
            None => Value::Object(Default::default()),
            Some(_) => return Err("arguments must be an object".into()),
        };
        let (modern, traceparent, client_info, elicitation) = match params.get("_meta") {
            Some(Value::Object(meta)) => (
                meta.contains_key(META_PROTOCOL_VERSION),
                meta.get("traceparent")
                    .and_then(Value::as_str)
                    .filter(|t| is_traceparent(t))
                    .map(str::to_string),
                meta.get(META_CLIENT_INFO).cloned(),
                Modes::of(meta.get(META_CLIENT_CAPABILITIES)),
            ),
            None => (false, None, None, Modes::default()),
            Some(_) => return Err("_meta must be an object".into()),
        };
        let request_state = match params.get("requestState") {
            Some(Value::String(state)) => Some(state.clone()),
            None => None,
            Some(_) => return Err("requestState must be a string".into()),
        };
        let input_responses = match params.get("inputResponses") {
            Some(Value::Object(responses)) => Some(responses.clone()),
            None => None,
            Some(_) => return Err("inputResponses must be an object".into()),
        };
        Ok(CallParams {
            name,
            arguments,
            modern,
            traceparent,
            client_info,
            elicitation,
            request_state,
            input_responses,
        })
    }
}

/// A W3C `traceparent`: `vv-<32 hex trace id>-<16 hex parent id>-<2 hex
/// flags>`, lower-case hex, version not `ff`, ids not all zeros; a version
/// after `00` may append `-` fields, version `00` may not.
pub(crate) fn is_traceparent(text: &str) -> bool {
    let hex = |part: &str, len: usize| {
        part.len() == len && part.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    let zeros = |part: &str| part.bytes().all(|b| b == b'0');
    let parts: Vec<&str> = text.split('-').collect();
    let [version, trace, parent, flags, rest @ ..] = parts.as_slice() else {
        return false;
    };
    hex(version, 2)
        && *version != "ff"
        && (rest.is_empty() || *version != "00")
        && hex(trace, 32)
        && hex(parent, 16)
        && hex(flags, 2)
        && !zeros(trace)
        && !zeros(parent)
}

#[cfg(test)]
mod tests {
    use super::is_traceparent;

    #[test]
    fn a_w3c_traceparent_is_read_and_anything_else_is_not() {
        assert!(is_traceparent(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        ));
        // A later version may append fields.
        assert!(is_traceparent(
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"
        ));
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n",
        ] {
            assert!(!is_traceparent(bad), "{bad:?}");
        }
    }
}
