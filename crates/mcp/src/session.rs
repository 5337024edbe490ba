//! One client's session through the proxy: each message in, at most one out.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use warden_types::decision::{Reason, Verdict};

use crate::answer::{
    ASK_UNAVAILABLE, CLIENT_ANSWER_REFUSED, Denial, ErrorCode, JUDGE_UNAVAILABLE,
    REQUEST_STATE_REFUSED, error, tool_name,
};
use crate::call::CallParams;
use crate::elicit::{self, Answer, Asked, Held, Modes};
use crate::judge::{Judge, Judgement, McpCall};
use crate::sealed::{self, Sealer};

/// Where a message goes once the session has read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// Send this line to the client.
    Client(String),
    /// Send this line to the server.
    Server(String),
    /// Send nothing; the reason is for the operator's log.
    Drop(&'static str),
}

/// The proxy's state for one client and one server. Shared by the two
/// directions (`&self` everywhere); the judge runs outside the lock.
pub struct Session {
    server: String,
    /// Whether the shell tells the client when the tool list may have
    /// changed (the policy can change while the session runs).
    announces_list_changes: bool,
    /// How long a call is held while the client answers Warden's
    /// elicitation on it.
    elicitation_timeout: Duration,
    /// Whether a `2025-11-25` client may be sent Warden's elicitation in the
    /// middle of a call (the shell can carry it).
    mid_call: bool,
    /// Seals the `requestState` of a `2026-07-28` ask; none: such a client
    /// is not asked.
    sealer: Option<Sealer>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Client `tools/list` requests in flight, by their id's JSON text: their
    /// answers are filtered.
    listing: HashSet<String>,
    /// Requests the server sent the client, by the id Warden gave them: the
    /// server's own id, restored on the client's answer.
    relayed: HashMap<String, Value>,
    /// Warden's next id for a request to the client.
    next_id: u64,
    /// Tools the server lists with an `outputSchema`: their denials keep the
    /// decision out of `structuredContent`, which clients check against it.
    with_output_schema: HashSet<String>,
    /// The client's `clientInfo` (a claim, for the log).
    client_info: Option<Value>,
    /// The client's `initialize` in flight, by its id's JSON text.
    initializing: Option<String>,
    /// A `2026-07-28` client's open `subscriptions/listen` streams that asked
    /// for `toolsListChanged`, by their id's JSON text (the id itself is the
    /// value): Warden says on each when a hot swap may change the tools.
    listening: HashMap<String, Value>,
    /// The server's `initialize` answer told the client that the tool list
    /// may change: the session may say when it does.
    announced: bool,
    /// How the client can be asked mid-call, from its `initialize`.
    elicitation: Modes,
    /// Calls held while the client answers Warden's elicitation, by the id
    /// Warden gave the elicitation.
    held: HashMap<String, Held>,
}

/// The deepest nesting the duplicate-key check reads: past serde_json's own
/// limit (128), so that it never refuses a message the session could read.
const MAX_DEPTH: usize = 256;

/// The prefix of the ids Warden gives the server's requests to the client
/// (and its own).
const RELAYED_ID_PREFIX: &str = "warden-";

/// How long a `2026-07-28` client's sealed `requestState` is taken back.
const STATE_TTL: Duration = Duration::from_secs(15 * 60);

/// Seconds since the epoch (0 for a clock before it: every state expired).
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// How long a call is held for the client's answer to an elicitation, by
/// default: under the 60 s most clients give a call.
pub const ELICITATION_TIMEOUT: Duration = Duration::from_secs(45);

impl Session {
    /// A session in front of the server Warden calls `server` (the middle part
    /// of `mcp__<server>__<tool>`).
    pub fn new(server: impl Into<String>) -> Session {
        Session {
            server: server.into(),
            announces_list_changes: false,
            elicitation_timeout: ELICITATION_TIMEOUT,
            mid_call: true,
            sealer: None,
            state: Mutex::new(State::default()),
        }
    }

    /// The same session, asking a `2026-07-28` client by
    /// `InputRequiredResult` with `requestState` sealed under `key` (secret
    /// to this process: a fresh random key per process is right).
    pub fn with_state_key(mut self, key: [u8; 32]) -> Session {
        self.sealer = Some(Sealer::new(key));
        self
    }

    /// The same session, never sending the client a request of Warden's in
    /// the middle of a call (a `2025-11-25` elicitation), for a shell that
    /// cannot carry one: such a client gets the denial naming the approval.
    /// A `2026-07-28` client is still asked by its answer.
    pub fn never_asking_mid_call(mut self) -> Session {
        self.mid_call = false;
        self
    }

    /// The same session, holding a call at most `timeout` for the client's
    /// answer to an elicitation (then the call is denied, naming its
    /// approval). A shell that asks must call [`Session::expired`] regularly.
    pub fn with_elicitation_timeout(mut self, timeout: Duration) -> Session {
        self.elicitation_timeout = timeout;
        self
    }

    /// The same session, telling the client that the tool list may change
    /// (`capabilities.tools.listChanged` in the server's `initialize`
    /// answer), for a shell that sends [`Session::list_changed`] when the
    /// policy changes.
    pub fn announcing_list_changes(mut self) -> Session {
        self.announces_list_changes = true;
        self
    }

    /// `notifications/tools/list_changed`, for a client that was told the tool
    /// list may change (a `2025-11-25` handshake through this session);
    /// `None` for any other.
    #[deprecated(
        since = "0.1.0",
        note = "use `Session::list_changes`, which also tells a `2026-07-28` client's listen streams"
    )]
    pub fn list_changed(&self) -> Option<String> {
        self.state().announced.then(|| {
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                .to_string()
        })
    }

    /// Every line that tells the client its tool list may have changed (a
    /// hot swap): `notifications/tools/list_changed` once for a
    /// `2025-11-25` handshake through this session that was told the list may
    /// change, and once on each open `2026-07-28` `subscriptions/listen`
    /// stream that asked for `toolsListChanged`, carrying its
    /// `subscriptionId`. None for a client that was told nothing.
    pub fn list_changes(&self) -> Vec<String> {
        let state = self.state();
        let mut lines = Vec::new();
        if state.announced {
            lines.push(
                serde_json::json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                    .to_string(),
            );
        }
        for id in state.listening.values() {
            lines.push(
                serde_json::json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                       "params": {"_meta": {SUBSCRIPTION_ID: id}}})
                .to_string(),
            );
        }
        lines
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent across a panic in another thread: every
        // update is one insert or remove.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The client's `clientInfo`, once it sent `initialize`.
    pub fn client_info(&self) -> Option<Value> {
        self.state().client_info.clone()
    }

    /// A line from the client. What Warden cannot read is answered here with
    /// the JSON-RPC error the protocol names and never forwarded: a server
    /// whose parser is more lenient could otherwise run a call nobody judged.
    pub fn from_client(&self, line: &str, judge: &dyn Judge) -> Route {
        let message = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(message)) => message,
            Ok(_) => {
                return Route::Client(error(
                    &Value::Null,
                    ErrorCode::InvalidRequest,
                    "a message must be a JSON object (MCP has no batches)",
                ));
            }
            Err(err) => {
                return Route::Client(error(
                    &Value::Null,
                    ErrorCode::Parse,
                    &format!("the message is not JSON: {err}"),
                ));
            }
        };
        let id = message.get("id").cloned();
        let method = match message.get("method") {
            Some(Value::String(method)) => method.clone(),
            Some(_) => {
                return Route::Client(error(
                    id.as_ref().unwrap_or(&Value::Null),
                    ErrorCode::InvalidRequest,
                    "a message's method must be a string",
                ));
            }
            None => return self.client_response(message, id, judge),
        };
        if id.as_ref().is_some_and(|id| !valid_id(id)) {
            return Route::Client(error(
                &Value::Null,
                ErrorCode::InvalidRequest,
                "a request's id must be a string or a number",
            ));
        }
        // What Warden does not rewrite goes as the client wrote it, byte for
        // byte: a number past 64 bits, the key order, every field.
        let as_sent = || Route::Server(line.to_string());
        match (method.as_str(), id) {
            ("tools/call", Some(id)) => self.judge_call(line, &message, &id, judge),
            ("tools/call", None) => Route::Drop("a tools/call without an id is never forwarded"),
            ("tools/list", Some(id)) => {
                self.state().listing.insert(id.to_string());
                as_sent()
            }
            ("initialize", Some(id)) => {
                let claim = message
                    .get("params")
                    .and_then(|p| p.get("clientInfo"))
                    .cloned();
                tracing::info!(client_info = ?claim, "the client introduced itself (a claim)");
                let mut state = self.state();
                state.client_info = claim;
                state.initializing = Some(id.to_string());
                state.elicitation = Modes::declared(message.get("params"));
                as_sent()
            }
            ("subscriptions/listen", Some(id)) => {
                let tools = message
                    .get("params")
                    .and_then(|p| p.get("notifications"))
                    .and_then(|n| n.get("toolsListChanged"));
                if self.announces_list_changes && tools == Some(&Value::Bool(true)) {
                    self.state().listening.insert(id.to_string(), id);
                }
                as_sent()
            }
            ("notifications/cancelled", None) if self.release_cancelled(&message) => {
                Route::Drop("the client cancelled a call held for its answer")
            }
            ("notifications/cancelled", None) => {
                // A listen stream the client closes (stdio) is no longer told.
                if let Some(request) = message.get("params").and_then(|p| p.get("requestId")) {
                    self.state().listening.remove(&request.to_string());
                }
                as_sent()
            }
            _ => as_sent(),
        }
    }

    /// The client's answer to a request the server sent it: back to the
    /// server under the server's own id. Or its answer to Warden's own
    /// elicitation: the held call runs or is denied.
    fn client_response(
        &self,
        mut message: Map<String, Value>,
        id: Option<Value>,
        judge: &dyn Judge,
    ) -> Route {
        let held = id
            .as_ref()
            .and_then(Value::as_str)
            .and_then(|id| self.state().held.remove(id));
        if let Some(held) = held {
            return self.answered(held, Answer::read(&message), judge);
        }
        let original = id
            .as_ref()
            .and_then(Value::as_str)
            .and_then(|id| self.state().relayed.remove(id));
        match original {
            Some(original) => {
                message.insert("id".into(), original);
                forward(Route::Server, message)
            }
            None => Route::Drop("a response to no request the server sent"),
        }
    }

    /// Judges the `tools/call` `line` (read as `message`); an allowed call goes
    /// to the server as the client wrote it.
    fn judge_call(
        &self,
        line: &str,
        message: &Map<String, Value>,
        id: &Value,
        judge: &dyn Judge,
    ) -> Route {
        // Parsers disagree on which of two equal keys counts: a call that
        // names one twice is never forwarded, so that what the server runs is
        // what Warden judged.
        if let Err(problem) = warden_types::strict_json::check(line.as_bytes(), MAX_DEPTH) {
            return Route::Client(error(
                id,
                ErrorCode::InvalidRequest,
                &format!("invalid tools/call: {problem}"),
            ));
        }
        // The client names a held call by its id, in its cancel: a second
        // call under the same id would leave the cancel naming either.
        if self.state().held.values().any(|held| held.client_id == *id) {
            return Route::Client(error(
                id,
                ErrorCode::InvalidRequest,
                "invalid tools/call: its id is that of a call still held for the client's answer",
            ));
        }
        let call = match CallParams::read(message.get("params")) {
            Ok(call) => call,
            Err(why) => {
                return Route::Client(error(
                    id,
                    ErrorCode::InvalidParams,
                    &format!("invalid tools/call params: {why}"),
                ));
            }
        };
        // A 2026-07-28 client says what it is on each request; a 2025-11-25
        // one in its `initialize`.
        let client_info = call.client_info.clone().or_else(|| self.client_info());
        let mcp_call = McpCall {
            tool_name: tool_name(&self.server, &call.name),
            arguments: call.arguments.clone(),
            client_info: client_info.as_ref(),
            server: &self.server,
            traceparent: call.traceparent.clone(),
        };
        let mut approval_id = None;
        let structured = !self.state().with_output_schema.contains(&call.name);
        let (reasons, decision_id) = match judge.judge(&mcp_call) {
            Ok(judgement) => match judgement.verdict {
                // The line that was judged, as the client wrote it (less
                // Warden's own state, on a retry a human approved).
                Verdict::Allow if self.carries_wardens_state(&call) => {
                    return Route::Server(
                        Value::Object(without_wardens_state(message)).to_string(),
                    );
                }
                Verdict::Allow => return Route::Server(line.to_string()),
                Verdict::Deny => {
                    if let Some(route) = self.input_required(
                        &judgement, &call, message, id, &mcp_call, structured, judge,
                    ) {
                        return route;
                    }
                    if let Some(asked) = self.asking(&judgement, call.modern) {
                        let held = Held {
                            asked,
                            client_id: id.clone(),
                            line: line.to_string(),
                            tool: call.name,
                            arguments: mcp_call.arguments.clone(),
                            client_info: client_info.clone(),
                            traceparent: mcp_call.traceparent.clone(),
                            approval_id: judgement.approval_id.expect("asking checked it"),
                            reasons: judgement.reasons,
                            decision_id: judgement.decision_id,
                            structured,
                            modern: false,
                            deadline: Instant::now() + self.elicitation_timeout,
                        };
                        return Route::Client(self.hold(held));
                    }
                    approval_id = judgement.approval_id;
                    (judgement.reasons, judgement.decision_id)
                }
                Verdict::Ask => {
                    let mut reasons = vec![Reason::new(
                        ASK_UNAVAILABLE,
                        "the call needs a human's approval, which this MCP proxy cannot ask for yet",
                    )];
                    reasons.extend(judgement.reasons);
                    (reasons, judgement.decision_id)
                }
            },
            Err(err) => (
                vec![Reason::new(
                    JUDGE_UNAVAILABLE,
                    format!("Warden could not judge the call: {err}"),
                )],
                None,
            ),
        };
        Route::Client(
            Denial {
                reasons: &reasons,
                decision_id: decision_id.as_deref(),
                approval_id: approval_id.as_deref(),
                structured,
                modern: call.modern,
            }
            .response(id),
        )
    }

    /// A line from the server. What Warden cannot read goes to the client as
    /// it came: the client would have seen it without Warden.
    pub fn from_server(&self, line: &str, judge: &dyn Judge) -> Route {
        let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(line) else {
            return Route::Client(line.to_string());
        };
        let Some(id) = message.get("id").cloned() else {
            return self.server_notification(message, line);
        };
        if message.contains_key("method") {
            // A request to the client: under an id of Warden's.
            let mut state = self.state();
            state.next_id += 1;
            let ours = format!("{RELAYED_ID_PREFIX}{}", state.next_id);
            state.relayed.insert(ours.clone(), id);
            drop(state);
            message.insert("id".into(), Value::String(ours));
            return forward(Route::Client, message);
        }
        if self.announces_list_changes && self.initialized(&id) {
            return self.announce(message, line);
        }
        // The answer to a listen request ends its stream.
        self.state().listening.remove(&id.to_string());
        if !self.state().listing.remove(&id.to_string()) {
            return Route::Client(line.to_string());
        }
        let Some(Value::Array(tools)) = message
            .get_mut("result")
            .and_then(|result| result.get_mut("tools"))
        else {
            return Route::Client(line.to_string());
        };
        // A tool without a name cannot be judged: not offered.
        tools.retain(|tool| tool.get("name").and_then(Value::as_str).is_some());
        let judged: Vec<String> = tools
            .iter()
            .filter_map(|tool| tool.get("name").and_then(Value::as_str))
            .map(|name| tool_name(&self.server, name))
            .collect();
        let offered = judge.offered_all(&judged);
        let with_output_schema: Vec<String> = tools
            .iter()
            .filter(|tool| tool.get("outputSchema").is_some())
            .filter_map(|tool| tool.get("name").and_then(Value::as_str))
            .map(str::to_string)
            .collect();
        let mut offered = offered.into_iter();
        // A judge that answers fewer tools than it was asked offers none of the rest.
        tools.retain(|_| offered.next().unwrap_or(false));
        self.state().with_output_schema.extend(with_output_schema);
        forward(Route::Client, message)
    }
}

/// Asking the client mid-call (crate::elicit).
impl Session {
    /// How the client is asked by elicitation about this denial, if it is:
    /// it waits on a pending approval, and the client declared elicitation
    /// in its `2025-11-25` handshake (a `2026-07-28` client cannot be sent a
    /// request mid-call). A form where the client's own answer may settle
    /// the approval; else the console's page, where a human answers it.
    fn asking(&self, judgement: &Judgement, modern: bool) -> Option<Asked> {
        if judgement.approval_id.is_none() || modern || !self.mid_call {
            return None;
        }
        let modes = self.state().elicitation;
        if judgement.attestable && modes.form {
            return Some(Asked::Form);
        }
        match &judgement.console_url {
            Some(url) if modes.url => Some(Asked::Url(url.clone())),
            _ => None,
        }
    }

    /// A `2026-07-28` client, which cannot be sent a request mid-call, is
    /// asked by an `InputRequiredResult` with a sealed `requestState` naming
    /// the pending approval and bound to the call, chosen as for a
    /// `2025-11-25` client from the modes this request declares:
    /// - a form, where the client's answer may settle the approval: its retry
    ///   with that state and its answer is recorded as client-attested, and
    ///   the call, if then allowed, forwarded without Warden's two fields;
    /// - else the console's page (URL mode), where a human answers: a retry
    ///   once the human approved is allowed by the judge (the approval is a
    ///   one-use grant for the call) and forwarded without those fields; a
    ///   retry before that is denied naming the approval.
    ///
    /// `None`: not asked this way (the caller denies as before).
    #[allow(clippy::too_many_arguments)]
    fn input_required(
        &self,
        judgement: &Judgement,
        call: &CallParams,
        message: &Map<String, Value>,
        id: &Value,
        mcp_call: &McpCall<'_>,
        structured: bool,
        judge: &dyn Judge,
    ) -> Option<Route> {
        let sealer = self.sealer.as_ref()?;
        let approval_id = judgement.approval_id.as_deref()?;
        if !call.modern {
            return None;
        }
        let asked = match &judgement.console_url {
            _ if judgement.attestable && call.elicitation.form => Asked::Form,
            Some(url) if call.elicitation.url => Asked::Url(url.clone()),
            _ => return None,
        };
        // What is forwarded if the client approves: the call without
        // Warden's own state and answer (the server knows neither).
        let forwarded = without_wardens_state(message);
        let held = Held {
            asked,
            client_id: id.clone(),
            line: Value::Object(forwarded).to_string(),
            tool: call.name.clone(),
            arguments: mcp_call.arguments.clone(),
            client_info: mcp_call.client_info.cloned(),
            traceparent: mcp_call.traceparent.clone(),
            approval_id: approval_id.to_string(),
            reasons: judgement.reasons.clone(),
            decision_id: judgement.decision_id.clone(),
            structured,
            modern: true,
            deadline: Instant::now(),
        };
        let now = unix_now();
        let ours = call
            .request_state
            .as_deref()
            .filter(|state| state.starts_with(sealed::PREFIX));
        if let Some(state) = ours {
            match sealer.open(state, &mcp_call.tool_name, &mcp_call.arguments, now) {
                Ok(sealed) if sealed == approval_id => {
                    let answer = call
                        .input_responses
                        .as_ref()
                        .map_or(Answer::None, elicit::input_answer);
                    return Some(self.answered(held, answer, judge));
                }
                // Sealed for an earlier ask of this call, answered since:
                // this is a new one.
                Ok(_) => {}
                Err(refused) => {
                    let mut reasons = vec![Reason::new(REQUEST_STATE_REFUSED, refused.describe())];
                    reasons.extend(held.reasons.iter().cloned());
                    return Some(Route::Client(
                        Denial {
                            reasons: &reasons,
                            decision_id: held.decision_id.as_deref(),
                            approval_id: Some(approval_id),
                            structured,
                            modern: true,
                        }
                        .response(id),
                    ));
                }
            }
        }
        let state = sealer.seal(
            approval_id,
            &mcp_call.tool_name,
            &mcp_call.arguments,
            now + STATE_TTL.as_secs(),
        );
        Some(Route::Client(elicit::input_required(
            id,
            &mcp_call.tool_name,
            &held,
            &state,
        )))
    }

    /// Whether a `2026-07-28` call carries a `requestState` of Warden's (a
    /// retry after Warden's `InputRequiredResult`), which the server must
    /// never see: the server's own states are forwarded as they are.
    fn carries_wardens_state(&self, call: &CallParams) -> bool {
        self.sealer.is_some()
            && call
                .request_state
                .as_deref()
                .is_some_and(|state| state.starts_with(sealed::PREFIX))
    }

    /// Holds the call and words Warden's question about it to the client.
    fn hold(&self, held: Held) -> String {
        let tool_name = tool_name(&self.server, &held.tool);
        let mut state = self.state();
        state.next_id += 1;
        let ours = format!("{RELAYED_ID_PREFIX}{}", state.next_id);
        let request = elicit::request(&ours, &tool_name, &held);
        state.held.insert(ours, held);
        request
    }

    /// The client's answer to the question on a held call: recorded as
    /// client-attested; the call runs if the judge then allows it. No answer
    /// (a cancel, an error) records nothing: the call is denied as the ask
    /// was, and the approval waits for a human.
    fn answered(&self, held: Held, answer: Answer, judge: &dyn Judge) -> Route {
        if let Asked::Url(_) = held.asked {
            // A human answers in the console; the client calls again.
            return Route::Client(unanswered(&held));
        }
        let approve = match answer {
            Answer::Approve => true,
            Answer::Decline => false,
            Answer::None => return Route::Client(unanswered(&held)),
        };
        let mcp_call = McpCall {
            tool_name: tool_name(&self.server, &held.tool),
            arguments: held.arguments.clone(),
            client_info: held.client_info.as_ref(),
            server: &self.server,
            traceparent: held.traceparent.clone(),
        };
        let (reasons, approval_id) = match judge.attest(&mcp_call, &held.approval_id, approve) {
            Ok(Judgement {
                verdict: Verdict::Allow,
                ..
            }) => return Route::Server(held.line),
            Ok(judgement) => (judgement.reasons, judgement.approval_id),
            Err(err) => {
                let mut reasons = vec![Reason::new(
                    CLIENT_ANSWER_REFUSED,
                    format!("the client's answer was not recorded: {err}"),
                )];
                reasons.extend(held.reasons.iter().cloned());
                (reasons, Some(held.approval_id.clone()))
            }
        };
        Route::Client(
            Denial {
                reasons: &reasons,
                decision_id: held.decision_id.as_deref(),
                approval_id: approval_id.as_deref(),
                structured: held.structured,
                modern: held.modern,
            }
            .response(&held.client_id),
        )
    }

    /// Releases the held call a client's `notifications/cancelled` names:
    /// the client gave up on it, so it is never forwarded (its approval stays
    /// for a human; the identical retry reads the answer).
    fn release_cancelled(&self, message: &Map<String, Value>) -> bool {
        let Some(request_id) = message.get("params").and_then(|p| p.get("requestId")) else {
            return false;
        };
        let mut state = self.state();
        let ours = state
            .held
            .iter()
            .find(|(_, held)| held.client_id == *request_id)
            .map(|(ours, _)| ours.clone());
        ours.is_some_and(|ours| state.held.remove(&ours).is_some())
    }

    /// The lines for the client about every held call whose time ran out by
    /// `now`: Warden's question withdrawn (`notifications/cancelled`), and
    /// the call denied as the ask was, naming its approval. A late answer is
    /// then dropped, never forwarded.
    pub fn expired(&self, now: Instant) -> Vec<String> {
        let mut state = self.state();
        let due: Vec<String> = state
            .held
            .iter()
            .filter(|(_, held)| held.deadline <= now)
            .map(|(ours, _)| ours.clone())
            .collect();
        let mut lines = Vec::new();
        for ours in due {
            let Some(held) = state.held.remove(&ours) else {
                continue;
            };
            lines.push(elicit::cancelled(
                &ours,
                "Warden stopped waiting for an answer: the call is denied, its approval waits for a human",
            ));
            lines.push(unanswered(&held));
        }
        lines
    }

    /// How many calls are held for the client's answer.
    pub fn held(&self) -> usize {
        self.state().held.len()
    }
}

/// The call without `requestState` and `inputResponses`: on a retry after
/// Warden's `InputRequiredResult`, both are Warden's (the server asked for
/// nothing), and the server knows neither.
fn without_wardens_state(message: &Map<String, Value>) -> Map<String, Value> {
    let mut forwarded = message.clone();
    if let Some(Value::Object(params)) = forwarded.get_mut("params") {
        params.remove("requestState");
        params.remove("inputResponses");
    }
    forwarded
}

/// The denial of a held call the client did not answer: the ask's own,
/// naming the approval a human can still answer.
fn unanswered(held: &Held) -> String {
    Denial {
        reasons: &held.reasons,
        decision_id: held.decision_id.as_deref(),
        approval_id: Some(&held.approval_id),
        structured: held.structured,
        modern: held.modern,
    }
    .response(&held.client_id)
}

impl Session {
    /// Whether `id` answers the client's `initialize` (then no longer in flight).
    fn initialized(&self, id: &Value) -> bool {
        let mut state = self.state();
        let answers = state.initializing.as_deref() == Some(id.to_string().as_str());
        if answers {
            state.initializing = None;
        }
        answers
    }

    /// The server's `initialize` answer, telling the client its tool list
    /// may change, when the server offers tools at all; else as it came.
    fn announce(&self, mut message: Map<String, Value>, line: &str) -> Route {
        let Some(Value::Object(tools)) = message
            .get_mut("result")
            .and_then(|result| result.get_mut("capabilities"))
            .and_then(|capabilities| capabilities.get_mut("tools"))
        else {
            return Route::Client(line.to_string());
        };
        tools.insert("listChanged".into(), Value::Bool(true));
        self.state().announced = true;
        forward(Route::Client, message)
    }
}

/// The `_meta` key naming the `subscriptions/listen` request a notification
/// rides on (`2026-07-28`).
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

impl Session {
    /// A notification from the server: as it came, except the
    /// acknowledgment of a listen stream that asked for `toolsListChanged`,
    /// which says Warden honors it (Warden tells of the changes its policy
    /// makes, whatever the server does).
    fn server_notification(&self, mut message: Map<String, Value>, line: &str) -> Route {
        if message.get("method").and_then(Value::as_str)
            != Some("notifications/subscriptions/acknowledged")
        {
            return Route::Client(line.to_string());
        }
        let Some(Value::Object(params)) = message.get_mut("params") else {
            return Route::Client(line.to_string());
        };
        let listening = params
            .get("_meta")
            .and_then(|meta| meta.get(SUBSCRIPTION_ID))
            .is_some_and(|id| self.state().listening.contains_key(&id.to_string()));
        let honored = params
            .get("notifications")
            .and_then(|n| n.get("toolsListChanged"));
        if !listening || honored == Some(&Value::Bool(true)) {
            return Route::Client(line.to_string());
        }
        match params
            .entry("notifications")
            .or_insert_with(|| Value::Object(Map::new()))
        {
            Value::Object(notifications) => {
                notifications.insert("toolsListChanged".into(), Value::Bool(true));
            }
            _ => return Route::Client(line.to_string()),
        }
        forward(Route::Client, message)
    }
}

fn valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_))
}

fn forward(to: fn(String) -> Route, message: Map<String, Value>) -> Route {
    to(Value::Object(message).to_string())
}
