//! `warden mcp http`: Warden in front of an MCP server that speaks Streamable
//! HTTP. Clients speak MCP's Streamable HTTP to this process; every message
//! goes through a [`Session`] (crates/mcp), as `warden mcp stdio`'s do, and
//! what the session forwards goes to the upstream server.
//!
//! - The proxy is the resource the client authenticates to: a bearer token of
//!   the configuration's `server.tokens`, checked as the daemon checks its
//!   own. The client's `Authorization` never goes upstream; the operator's
//!   credential (`--upstream-auth-env`) does.
//! - Sessions: the upstream's `Mcp-Session-Id` never reaches the client. The
//!   proxy gives the client an id of its own, bound to the token's holder and
//!   to the [`Session`] that judges the session's messages; another holder's
//!   request, or an id the proxy never gave, is answered 404.
//! - A denial or an upstream that fails is answered in a 200 (a tool result
//!   or a JSON-RPC error); the transport's own statuses (401, 400, 404, 406,
//!   415) stay the transport's.
//! - What the upstream answers is relayed as it comes, JSON or an SSE stream;
//!   every message in it passes through the session (a `tools/list` answer is
//!   filtered, a request to the client gets an id of Warden's).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use axum::serve::ListenerExt;
use bytes::Bytes;
use clap::{ArgGroup, Args};
use futures_util::{Stream, StreamExt};
use http_body_util::{BodyExt, Full};
use hyper::Uri;
use hyper::body::Incoming;
use serde_json::Value;
use sse_stream::{Sse, SseStream};
use tokio::sync::broadcast;
use warden_mcp::{Judge, Route, Session, transport_error};
use warden_server::{Access, Principal, Tokens};

use crate::commands::input::load_command_config;
use crate::commands::mcp_daemon::{POLICY_POLL, state_key};
use crate::commands::mcp_upstream::{self, Upstream};

/// The largest message a client may POST, as `warden mcp stdio` reads.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// The largest JSON answer read from the upstream (an SSE stream is relayed
/// one event at a time).
const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

/// The most sessions kept at once; past it, the one used least recently is
/// forgotten (its client gets a 404 and starts a new session, as MCP says).
const MAX_SESSIONS: usize = 10_000;

/// How long answers in flight get to finish once the proxy is stopped.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// How many of the proxy's own messages wait for a session's GET stream.
const NOTICES: usize = 16;

/// How long the upstream gets to connect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The session header: the proxy's id toward the client, the upstream's
/// toward the upstream.
const SESSION_ID: &str = "mcp-session-id";

/// The headers of a client's request that go upstream (besides the session,
/// which is mapped, and `Content-Type`/`Accept`). `Authorization` and
/// cookies never do: the upstream gets the operator's credential.
const FORWARDED: [&str; 5] = [
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
    "accept",
];

/// JSON-RPC code of a header that contradicts the body (`2026-07-28`).
const HEADER_MISMATCH: i32 = -32020;

/// JSON-RPC "internal error": the upstream could not answer.
const UPSTREAM_FAILED: i32 = -32603;

// `warden mcp http`'s arguments; its description is in mcp.rs.
#[derive(Args)]
#[command(group(ArgGroup::new("policy").required(true).args(["daemon", "config"])))]
pub(crate) struct HttpArgs {
    /// The MCP server's Streamable HTTP endpoint (`http://127.0.0.1:9000/mcp`).
    #[arg(long)]
    upstream: String,
    /// Where clients connect (`127.0.0.1:8788`; port 0 picks one). The
    /// endpoint's path is the upstream's.
    #[arg(long)]
    listen: SocketAddr,
    /// Judge through the daemon at this URL: one decision log for every
    /// proxy; the token's principal is the caller.
    #[arg(long, requires = "token_env")]
    daemon: Option<String>,
    /// The environment variable that holds the daemon's token.
    #[arg(long, requires = "daemon", value_name = "VAR")]
    token_env: Option<String>,
    /// Judge in this process with this configuration; its `server.tokens`
    /// are the clients' tokens unless `--client-tokens` names another file.
    #[arg(long)]
    config: Option<PathBuf>,
    /// With `--config`: write the decision log the configuration's
    /// `decision_log:` section describes, in its data directory. One process
    /// per log file: give each proxy its own `decision_log.path`.
    #[arg(long, requires = "config")]
    decision_log: bool,
    /// A configuration whose `server.tokens` clients present (agent and
    /// internal roles; the daemon's file works). Required with `--daemon`.
    #[arg(long, value_name = "FILE")]
    client_tokens: Option<PathBuf>,
    /// The server's name in `mcp__<server>__<tool>`. Use the name the client
    /// gives the server.
    #[arg(long)]
    server_name: String,
    /// The environment variable holding the bearer token the proxy presents
    /// upstream (the client's token never goes there).
    #[arg(long, value_name = "VAR")]
    upstream_auth_env: Option<String>,
}

impl HttpArgs {
    /// The server's name in `mcp__<server>__<tool>`.
    pub(crate) fn server_name(&self) -> &str {
        &self.server_name
    }

    /// `--decision-log`.
    pub(crate) fn decision_log(&self) -> bool {
        self.decision_log
    }

    /// What judges: `--daemon`, `--token-env` and `--config`.
    pub(crate) fn policy(&self) -> (Option<&str>, Option<&str>, Option<&std::path::Path>) {
        (
            self.daemon.as_deref(),
            self.token_env.as_deref(),
            self.config.as_deref(),
        )
    }
}

/// Serves until interrupted, judging with `judge` (the policy that
/// [`HttpArgs::policy`] names; the server's name already checked).
pub(crate) fn run(args: HttpArgs, judge: Arc<dyn Judge + Send + Sync>) -> anyhow::Result<ExitCode> {
    let upstream = url::Url::parse(&args.upstream)
        .with_context(|| format!("--upstream '{}'", args.upstream))?;
    if upstream.scheme() != "http" {
        bail!(
            "--upstream '{upstream}': an http:// URL is required (Warden speaks plain HTTP to \
             its upstream; reach an https:// server through a TLS-terminating proxy on the \
             same host)"
        );
    }
    let path = upstream.path().to_string();
    let upstream: Uri = upstream
        .as_str()
        .parse()
        .with_context(|| format!("--upstream '{upstream}'"))?;
    let tokens_file = match (&args.client_tokens, &args.config) {
        (Some(file), _) | (None, Some(file)) => file,
        (None, None) => bail!(
            "--client-tokens FILE: the clients' tokens (server.tokens) are required with --daemon"
        ),
    };
    let tokens = client_tokens(tokens_file)?;
    let upstream_auth = match &args.upstream_auth_env {
        Some(var) => {
            let token = std::env::var(var)
                .with_context(|| format!("--upstream-auth-env {var}: the variable is not set"))?;
            let mut value =
                HeaderValue::from_str(&format!("Bearer {token}")).with_context(|| {
                    format!("--upstream-auth-env {var}: the token is not a valid header value")
                })?;
            value.set_sensitive(true);
            Some(value)
        }
        None => None,
    };
    let client = mcp_upstream::client(CONNECT_TIMEOUT);
    // The daemon's policy can be swapped under a running session, and only
    // its asks can be answered: a 2026-07-28 client is then asked with state
    // sealed under a key of this process's own.
    let announce = args.daemon.is_some();
    let state_key = if announce { Some(state_key()?) } else { None };
    let proxy = Arc::new(Proxy {
        upstream,
        client,
        upstream_auth,
        tokens,
        server: args.server_name,
        judge,
        announce,
        state_key,
        sessions: Mutex::new(HashMap::new()),
        listeners: Arc::new(Mutex::new(HashMap::new())),
        next_listener: AtomicU64::new(0),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(serve(proxy, args.listen, path))?;
    Ok(ExitCode::SUCCESS)
}

/// The clients' tokens: `server.tokens` of the configuration `file`, resolved
/// as the daemon resolves them (lengths, duplicates, `token_env`).
fn client_tokens(file: &std::path::Path) -> anyhow::Result<Tokens> {
    let config = load_command_config(Some(file), "mcp")?;
    let tokens = Tokens::resolve(&config.server.tokens, |var| std::env::var(var).ok())
        .with_context(|| format!("the clients' tokens in {}", file.display()))?;
    if tokens.is_empty() {
        bail!(
            "{}: server.tokens lists no token: no client could connect",
            file.display()
        );
    }
    Ok(tokens)
}

async fn serve(proxy: Arc<Proxy>, listen: SocketAddr, path: String) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("--listen {listen}"))?;
    let address = listener.local_addr()?;
    // The first line on stdout says where clients connect (port 0 picks one).
    println!("warden: mcp http listening on http://{address}{path}");
    // Without TCP_NODELAY, an SSE answer's second small write waits for the
    // client's delayed ACK: about 40 ms per call.
    let listener = listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    if proxy.announce {
        tokio::spawn(watch_policy(proxy.clone()));
    }
    let judge = proxy.judge.clone();
    let app = axum::Router::new()
        .route(&path, axum::routing::any(handle))
        .with_state(proxy);
    // Stopped, the proxy lets answers in flight finish, for a bounded time:
    // a client's GET stream never ends by itself.
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let served = axum::serve(listener, app).with_graceful_shutdown(async move {
        stopped().await;
        let _ = stop.send(true);
    });
    let grace = async move {
        let mut stopping = stopping;
        let _ = stopping.wait_for(|stopping| *stopping).await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    let served = tokio::select! {
        served = std::future::IntoFuture::into_future(served) => served.context("serving MCP over HTTP"),
        () = grace => Ok(()),
    };
    judge.flush();
    served
}

/// Resolves on Ctrl-C or SIGTERM (a service manager's stop).
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut terminate) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// The proxy's state, shared by every request.
struct Proxy {
    upstream: Uri,
    client: Upstream,
    /// `Authorization` toward the upstream: the operator's, never a client's.
    upstream_auth: Option<HeaderValue>,
    /// The tokens clients present.
    tokens: Tokens,
    server: String,
    judge: Arc<dyn Judge + Send + Sync>,
    /// Whether sessions are told that the tool list may change (the policy
    /// is the daemon's, which a hot swap changes).
    announce: bool,
    /// Seals a `2026-07-28` ask's `requestState` (with `--daemon`).
    state_key: Option<[u8; 32]>,
    /// Sessions, by the id the proxy gave the client.
    sessions: Mutex<HashMap<String, Bound>>,
    /// Open `2026-07-28` `subscriptions/listen` streams (a POST's answer), by
    /// a number of the proxy's own: their session and where the proxy's own
    /// messages for the stream go.
    listeners: Listeners,
    next_listener: AtomicU64,
}

/// Open listen streams: each one's session, and where the proxy's own
/// messages for it go.
type Listeners = Arc<Mutex<HashMap<u64, (Arc<Session>, broadcast::Sender<String>)>>>;

/// A listen stream's place in [`Proxy::listeners`], given up when the
/// stream ends.
struct Listening {
    listeners: Listeners,
    key: u64,
}

impl Drop for Listening {
    fn drop(&mut self) {
        lock(&self.listeners).remove(&self.key);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Each update is one insert or remove: consistent across a panic.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// One client's session: the upstream's id for it, who opened it, and the
/// session core judging its messages.
#[derive(Clone)]
struct Bound {
    upstream_id: HeaderValue,
    holder: Arc<str>,
    session: Arc<Session>,
    /// Messages of the proxy's own for the client's GET stream.
    notices: broadcast::Sender<String>,
    last_used: Instant,
}

/// Which session a request belongs to.
struct Current {
    /// The proxy's id, when the request named one.
    id: Option<String>,
    /// The upstream's id for it.
    upstream_id: Option<HeaderValue>,
    session: Arc<Session>,
    /// Where the proxy's own messages for the session go.
    notices: Option<broadcast::Sender<String>>,
}

async fn handle(State(proxy): State<Arc<Proxy>>, request: Request) -> Response {
    let principal = match proxy.authenticate(request.headers()) {
        Ok(principal) => principal,
        Err(refusal) => return refusal,
    };
    let current = match proxy.session(request.headers(), &principal) {
        Some(current) => current,
        None => {
            return status_with_error(
                StatusCode::NOT_FOUND,
                "the session is unknown or over: start a new one (initialize)",
            );
        }
    };
    let method = request.method().clone();
    match method {
        Method::POST => proxy.post(request, current, &principal).await,
        Method::GET => proxy.stream(request, current).await,
        Method::DELETE => proxy.delete(request, current).await,
        _ => {
            let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            response
        }
    }
}

impl Proxy {
    /// The holder of the request's bearer token: 401 with
    /// `WWW-Authenticate` when there is none or it is not a client's token,
    /// 403 for a token of a role that makes no calls (an approver's).
    #[allow(clippy::result_large_err)]
    fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, Response> {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(warden_server::auth::bearer);
        let Some(token) = presented else {
            return Err(unauthorized(
                r#"Bearer realm="warden-mcp""#,
                "missing `Authorization: Bearer <token>`",
            ));
        };
        let Some(principal) = self.tokens.authenticate(token) else {
            return Err(unauthorized(
                r#"Bearer realm="warden-mcp", error="invalid_token""#,
                "the bearer token is not valid",
            ));
        };
        if !Access::Agent.allows(principal.role, false) {
            return Err(status_with_error(
                StatusCode::FORBIDDEN,
                &format!(
                    "the token of '{}' has the {} role: MCP clients need the agent or internal role",
                    principal.name, principal.role
                ),
            ));
        }
        Ok(principal)
    }

    /// The request's session: the one its `Mcp-Session-Id` names, if the
    /// proxy gave that id to this token's holder (`None`: 404); a fresh one
    /// when it names none (an `initialize`, or a `2026-07-28` client, which
    /// has no sessions).
    fn session(&self, headers: &HeaderMap, principal: &Principal) -> Option<Current> {
        let Some(id) = headers.get(SESSION_ID) else {
            // A request of Warden's in the middle of a call would need the
            // call's answer to be an SSE stream the proxy writes to.
            let mut session = Session::new(self.server.clone()).never_asking_mid_call();
            if self.announce {
                session = session.announcing_list_changes();
            }
            if let Some(key) = self.state_key {
                session = session.with_state_key(key);
            }
            return Some(Current {
                id: None,
                upstream_id: None,
                session: Arc::new(session),
                notices: None,
            });
        };
        let id = id.to_str().ok()?.to_string();
        let mut sessions = self.sessions();
        let bound = sessions.get_mut(&id)?;
        // Another holder's session is as unknown to this one as a made-up id.
        if bound.holder != principal.name {
            return None;
        }
        bound.last_used = Instant::now();
        Some(Current {
            upstream_id: Some(bound.upstream_id.clone()),
            session: bound.session.clone(),
            notices: Some(bound.notices.clone()),
            id: Some(id),
        })
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Bound>> {
        lock(&self.sessions)
    }

    /// Keeps a new session under an id of the proxy's own, forgetting the
    /// least recently used one past [`MAX_SESSIONS`].
    fn bind(&self, upstream_id: HeaderValue, holder: Arc<str>, session: Arc<Session>) -> String {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let mut sessions = self.sessions();
        if sessions.len() >= MAX_SESSIONS
            && let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, bound)| bound.last_used)
                .map(|(id, _)| id.clone())
        {
            tracing::warn!(
                "{MAX_SESSIONS} MCP sessions are open: the least recently used is forgotten"
            );
            sessions.remove(&oldest);
        }
        sessions.insert(
            id.clone(),
            Bound {
                upstream_id,
                holder,
                session,
                notices: broadcast::channel(NOTICES).0,
                last_used: Instant::now(),
            },
        );
        id
    }

    /// A client's message: judged by the session, then answered here or
    /// forwarded, and the upstream's answer relayed.
    async fn post(&self, request: Request, current: Current, principal: &Principal) -> Response {
        let headers = request.headers().clone();
        if let Some(refusal) = check_media_types(&headers) {
            return refusal;
        }
        let body = match axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES).await {
            Ok(body) => body,
            Err(_) => {
                return status_with_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!("the message is longer than {MAX_BODY_BYTES} bytes"),
                );
            }
        };
        let line = String::from_utf8_lossy(&body).into_owned();
        let message: Option<Value> = serde_json::from_str(&line).ok();
        if let Some(refusal) = check_headers(&headers, message.as_ref()) {
            return refusal;
        }
        let id = message.as_ref().and_then(|m| m.get("id")).cloned();
        let is_request =
            message.as_ref().is_some_and(|m| m.get("method").is_some()) && id.is_some();
        let method = message
            .as_ref()
            .and_then(|m| m.get("method"))
            .and_then(Value::as_str);
        let initialize = method == Some("initialize");
        // A 2026-07-28 listen stream (no session) hears the proxy's own
        // messages on the POST's answer.
        let listens = method == Some("subscriptions/listen") && current.id.is_none();
        let session = current.session.clone();
        let judge = self.judge.clone();
        let route =
            match tokio::task::spawn_blocking(move || session.from_client(&line, judge.as_ref()))
                .await
            {
                Ok(route) => route,
                Err(_) => {
                    return upstream_failed(id.as_ref(), "Warden failed while reading the message");
                }
            };
        let forwarded = match route {
            Route::Client(answer) => return warden_answer(answer),
            Route::Drop(why) => {
                tracing::warn!("a client message was dropped: {why}");
                return empty(StatusCode::ACCEPTED);
            }
            Route::Server(line) => line,
        };
        let mut upstream = self.upstream_request(
            Method::POST,
            &headers,
            current.upstream_id.as_ref(),
            forwarded.into(),
        );
        upstream.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let answer = match self.client.request(upstream).await {
            Ok(answer) => answer,
            Err(err) => return self.failed(is_request, id.as_ref(), &unreachable(err)),
        };
        let mut minted = None;
        if initialize
            && answer.status().is_success()
            && let Some(upstream_id) = answer.headers().get(SESSION_ID)
        {
            minted = Some(self.bind(
                upstream_id.clone(),
                principal.name.clone(),
                current.session.clone(),
            ));
        }
        let session_id = minted.or(current.id.clone());
        let mut response = self
            .relay(answer, &current, session_id, is_request, id.as_ref())
            .await;
        if listens && is_relayed_stream(&response) {
            let (notices, heard) = broadcast::channel(NOTICES);
            let key = self.next_listener.fetch_add(1, Ordering::Relaxed);
            lock(&self.listeners).insert(key, (current.session.clone(), notices));
            let listening = Listening {
                listeners: self.listeners.clone(),
                key,
            };
            put_notices(&mut response, heard, listening);
        }
        response
    }

    /// The client's GET stream (server-to-client messages), relayed.
    async fn stream(&self, request: Request, current: Current) -> Response {
        let upstream = self.upstream_request(
            Method::GET,
            request.headers(),
            current.upstream_id.as_ref(),
            Bytes::new(),
        );
        match self.client.request(upstream).await {
            Ok(answer) => {
                let session_id = current.id.clone();
                let notices = current.notices.as_ref().map(broadcast::Sender::subscribe);
                let mut response = self.relay(answer, &current, session_id, false, None).await;
                if let Some(notices) = notices
                    && is_relayed_stream(&response)
                {
                    put_notices(&mut response, notices, ());
                }
                response
            }
            Err(err) => status_with_error(StatusCode::BAD_GATEWAY, &unreachable(err)),
        }
    }

    /// The client ends its session: the upstream's ends too, and the proxy
    /// forgets it once the upstream agreed.
    async fn delete(&self, request: Request, current: Current) -> Response {
        let Some(id) = current.id else {
            return status_with_error(StatusCode::BAD_REQUEST, "DELETE needs an Mcp-Session-Id");
        };
        let upstream = self.upstream_request(
            Method::DELETE,
            request.headers(),
            current.upstream_id.as_ref(),
            Bytes::new(),
        );
        match self.client.request(upstream).await {
            Ok(answer) => {
                let status = answer.status();
                if status.is_success() || status == StatusCode::NOT_FOUND {
                    self.sessions().remove(&id);
                }
                empty(status)
            }
            Err(err) => status_with_error(StatusCode::BAD_GATEWAY, &unreachable(err)),
        }
    }

    /// A request to the upstream with the client's MCP headers, the
    /// upstream's session id and the operator's credential; nothing else of
    /// the client's.
    fn upstream_request(
        &self,
        method: Method,
        headers: &HeaderMap,
        upstream_id: Option<&HeaderValue>,
        body: Bytes,
    ) -> hyper::Request<Full<Bytes>> {
        let mut upstream = hyper::Request::new(Full::new(body));
        *upstream.method_mut() = method;
        *upstream.uri_mut() = self.upstream.clone();
        let sent = upstream.headers_mut();
        for (name, value) in headers {
            if FORWARDED.contains(&name.as_str()) || name.as_str().starts_with("mcp-param-") {
                sent.append(name, value.clone());
            }
        }
        if let Some(id) = upstream_id {
            sent.insert(HeaderName::from_static(SESSION_ID), id.clone());
        }
        if let Some(auth) = &self.upstream_auth {
            sent.insert(header::AUTHORIZATION, auth.clone());
        }
        upstream
    }

    /// The upstream failed: a request gets a JSON-RPC error in a 200 (the
    /// client's session goes on); a notification or a response, 502.
    fn failed(&self, is_request: bool, id: Option<&Value>, why: &str) -> Response {
        tracing::warn!("{why}");
        if is_request {
            upstream_failed(id, why)
        } else {
            status_with_error(StatusCode::BAD_GATEWAY, why)
        }
    }

    /// The upstream's answer, relayed: its statuses as they are, except those
    /// that say the upstream failed (a 5xx, or a refusal of the operator's
    /// credential, which no client can act on); every message through the
    /// session.
    async fn relay(
        &self,
        answer: hyper::Response<Incoming>,
        current: &Current,
        session_id: Option<String>,
        is_request: bool,
        id: Option<&Value>,
    ) -> Response {
        let status = answer.status();
        if status.is_server_error()
            || status == StatusCode::UNAUTHORIZED
            || status == StatusCode::FORBIDDEN
        {
            return self.failed(
                is_request,
                id,
                &format!("the upstream MCP server answered HTTP {status}"),
            );
        }
        if status == StatusCode::NOT_FOUND
            && let Some(ours) = &current.id
        {
            // The upstream ended the session: so does the proxy.
            self.sessions().remove(ours);
        }
        let content_type = answer.headers().get(header::CONTENT_TYPE).cloned();
        let media = content_type
            .as_ref()
            .and_then(|v| v.to_str().ok())
            .map(essence)
            .unwrap_or_default();
        let mut response = if status.is_success() && media == "text/event-stream" {
            let events = relay_events(
                body_chunks(answer),
                current.session.clone(),
                self.judge.clone(),
            );
            let mut response = Response::new(Body::from_stream(events));
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            response
        } else if status.is_success() && media == "application/json" {
            let body = match read_bounded(answer).await {
                Ok(body) => body,
                Err(why) => return self.failed(is_request, id, &why),
            };
            let line = String::from_utf8_lossy(&body).into_owned();
            let (session, judge) = (current.session.clone(), self.judge.clone());
            match tokio::task::spawn_blocking(move || session.from_server(&line, judge.as_ref()))
                .await
            {
                Ok(Route::Client(line)) => Response::new(Body::from(line)),
                Ok(_) | Err(_) => {
                    return self.failed(
                        is_request,
                        id,
                        "the upstream's answer could not be relayed",
                    );
                }
            }
        } else {
            // Transport statuses and bodies (400, 404, 405, 406, 415, 202)
            // are the client's to read as they are.
            match read_bounded(answer).await {
                Ok(body) => Response::new(Body::from(body)),
                Err(why) => return self.failed(is_request, id, &why),
            }
        };
        *response.status_mut() = status;
        if let Some(content_type) = content_type {
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, content_type);
        }
        if let Some(id) = session_id.and_then(|id| HeaderValue::from_str(&id).ok()) {
            response
                .headers_mut()
                .insert(HeaderName::from_static(SESSION_ID), id);
        }
        response
    }
}

/// Every [`POLICY_POLL`], the daemon's policy generation; when it moves (a
/// hot swap), each session told that its tool list may change hears
/// `notifications/tools/list_changed` on its GET stream, and each open
/// `2026-07-28` listen stream that asked for it on that stream. A generation
/// that cannot be read is skipped, not a change.
async fn watch_policy(proxy: Arc<Proxy>) {
    let generation = |proxy: &Arc<Proxy>| {
        let judge = proxy.judge.clone();
        tokio::task::spawn_blocking(move || judge.generation())
    };
    let mut seen = generation(&proxy).await.ok().flatten();
    loop {
        tokio::time::sleep(POLICY_POLL).await;
        let Some(now) = generation(&proxy).await.ok().flatten() else {
            continue;
        };
        if seen.is_some_and(|seen| seen != now) {
            let mut told: Vec<(Arc<Session>, broadcast::Sender<String>)> = proxy
                .sessions()
                .values()
                .map(|bound| (bound.session.clone(), bound.notices.clone()))
                .collect();
            told.extend(lock(&proxy.listeners).values().cloned());
            let mut lines = 0;
            for (session, notices) in told {
                for line in session.list_changes() {
                    lines += usize::from(notices.send(line).is_ok());
                }
            }
            tracing::info!(
                generation = now,
                notifications = lines,
                "the policy changed: the clients list the tools again"
            );
        }
        seen = Some(now);
    }
}

/// Puts the proxy's own messages from `notices` in between the events of
/// the relayed stream `response`; `held` lives as long as the stream.
fn put_notices(
    response: &mut Response,
    notices: broadcast::Receiver<String>,
    held: impl Send + 'static,
) {
    let relayed = std::mem::take(response.body_mut()).into_data_stream();
    let stream = with_notices(relayed, notices).map(move |item| {
        let _ = &held;
        item
    });
    *response.body_mut() = Body::from_stream(stream);
}

/// A relayed SSE stream with the proxy's own messages put in between its
/// events; it ends when the upstream's does.
fn with_notices(
    relayed: impl Stream<Item = Result<Bytes, axum::Error>> + Send + 'static,
    notices: broadcast::Receiver<String>,
) -> impl Stream<Item = Result<Bytes, axum::Error>> + Send + 'static {
    let notices = futures_util::stream::unfold(notices, |mut notices| async move {
        loop {
            match notices.recv().await {
                Ok(line) => {
                    let event = Sse::default().event("message").data(line);
                    return Some((Some(Ok(encode_event(&event))), notices));
                }
                // Missed notices all said the same: the next one says it too.
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    let relayed = relayed
        .map(Some)
        .chain(futures_util::stream::once(async { None }));
    futures_util::stream::select(relayed, notices)
        .take_while(|item| std::future::ready(item.is_some()))
        .filter_map(std::future::ready)
}

/// Whether `response` relays the upstream's SSE stream (a success).
fn is_relayed_stream(response: &Response) -> bool {
    response.status().is_success()
        && response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| essence(v) == "text/event-stream")
}

/// The upstream's body, a chunk at a time.
fn body_chunks(
    answer: hyper::Response<Incoming>,
) -> impl Stream<Item = Result<Bytes, hyper::Error>> + Send + 'static {
    futures_util::stream::unfold(Some(answer.into_body()), |body| async move {
        let mut body = body?;
        match next_chunk(&mut body).await {
            Ok(Some(chunk)) => Some((Ok(chunk), Some(body))),
            Ok(None) => None,
            // The stream ends after its error.
            Err(err) => Some((Err(err), None)),
        }
    })
}

/// The body's next chunk of data; trailers are skipped.
async fn next_chunk(body: &mut Incoming) -> Result<Option<Bytes>, hyper::Error> {
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            return Ok(Some(data));
        }
    }
    Ok(None)
}

/// An SSE stream from the upstream, each event's message passed through the
/// session; an event the session drops keeps its id (resumption counts it)
/// and loses its data.
fn relay_events(
    chunks: impl Stream<Item = Result<Bytes, hyper::Error>> + Send + 'static,
    session: Arc<Session>,
    judge: Arc<dyn Judge + Send + Sync>,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    SseStream::from_bytes_stream(chunks).then(move |event| {
        let (session, judge) = (session.clone(), judge.clone());
        async move {
            let mut event = event.map_err(|e| std::io::Error::other(e.to_string()))?;
            if let Some(data) = event.data.take() {
                let route =
                    tokio::task::spawn_blocking(move || session.from_server(&data, judge.as_ref()))
                        .await
                        .map_err(std::io::Error::other)?;
                match route {
                    Route::Client(line) => event.data = Some(line),
                    _ => tracing::warn!("an upstream event's message was dropped"),
                }
            }
            Ok(encode_event(&event))
        }
    })
}

/// One SSE event on the wire; a message with line breaks goes on several
/// `data:` lines, which the reader joins again.
fn encode_event(event: &Sse) -> Bytes {
    let mut out = String::new();
    if let Some(name) = &event.event {
        out.push_str(&format!("event: {name}\n"));
    }
    if let Some(id) = &event.id {
        out.push_str(&format!("id: {id}\n"));
    }
    if let Some(retry) = event.retry {
        out.push_str(&format!("retry: {retry}\n"));
    }
    if let Some(data) = &event.data {
        for line in data.split('\n') {
            out.push_str(&format!("data: {line}\n"));
        }
    }
    out.push('\n');
    Bytes::from(out)
}

/// The upstream's whole body, up to [`MAX_ANSWER_BYTES`].
async fn read_bounded(answer: hyper::Response<Incoming>) -> Result<Vec<u8>, String> {
    let mut answer = answer.into_body();
    let mut body = Vec::new();
    while let Some(chunk) = next_chunk(&mut answer)
        .await
        .map_err(|e| format!("reading the upstream's answer: {e}"))?
    {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(format!(
                "the upstream's answer is longer than {MAX_ANSWER_BYTES} bytes"
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A media type without its parameters, lower-cased: `text/event-stream`
/// of `Text/Event-Stream; charset=utf-8`.
fn essence(value: &str) -> String {
    value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// A POST must send JSON (else 415) and take both JSON and SSE back (else
/// 406), as the transport says.
fn check_media_types(headers: &HeaderMap) -> Option<Response> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(essence);
    if content_type.as_deref() != Some("application/json") {
        return Some(status_with_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a message is sent as Content-Type: application/json",
        ));
    }
    let accept = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(essence)
        .collect::<Vec<_>>();
    let takes = |media: &str, family: &str| {
        accept
            .iter()
            .any(|a| a == media || a == family || a == "*/*")
    };
    if !(takes("application/json", "application/*") && takes("text/event-stream", "text/*")) {
        return Some(status_with_error(
            StatusCode::NOT_ACCEPTABLE,
            "the client must accept application/json and text/event-stream",
        ));
    }
    None
}

/// `Mcp-Method` and `Mcp-Name` (`2026-07-28`) must say what the body says:
/// Warden judges the body, and what runs after it may route on the headers.
fn check_headers(headers: &HeaderMap, message: Option<&Value>) -> Option<Response> {
    let message = message?;
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let method = message.get("method").and_then(Value::as_str);
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let mismatch = |what: &str| {
        Some(rpc_status(
            StatusCode::BAD_REQUEST,
            transport_error(
                &id,
                HEADER_MISMATCH,
                &format!("{what} does not match the body"),
            ),
        ))
    };
    if let Some(named) = header("mcp-method")
        && Some(named) != method
    {
        return mismatch("Mcp-Method");
    }
    let name = message
        .get("params")
        .and_then(|p| p.get("name").or_else(|| p.get("uri")))
        .and_then(Value::as_str);
    if let Some(named) = header("mcp-name")
        && Some(named) != name
    {
        return mismatch("Mcp-Name");
    }
    None
}

/// What Warden answers itself (a denial, a JSON-RPC error): a 200, except a
/// message so broken its id could not be read (400, as the transport says
/// for input the server cannot accept).
/// Why the upstream was not reached, with the causes the client's error
/// wraps (its own text says only "client error (Connect)").
fn unreachable(err: hyper_util::client::legacy::Error) -> String {
    format!(
        "the upstream MCP server could not be reached: {:#}",
        anyhow::Error::new(err)
    )
}

fn warden_answer(answer: String) -> Response {
    let unreadable = serde_json::from_str::<Value>(&answer)
        .ok()
        .is_some_and(|a| a.get("error").is_some() && a.get("id") == Some(&Value::Null));
    let status = if unreadable {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    rpc_status(status, answer)
}

/// A request the upstream could not answer: a JSON-RPC error in a 200.
fn upstream_failed(id: Option<&Value>, why: &str) -> Response {
    rpc_status(
        StatusCode::OK,
        transport_error(id.unwrap_or(&Value::Null), UPSTREAM_FAILED, why),
    )
}

fn rpc_status(status: StatusCode, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A transport status with a JSON-RPC error (id `null`) saying why.
fn status_with_error(status: StatusCode, why: &str) -> Response {
    rpc_status(status, transport_error(&Value::Null, -32600, why))
}

fn unauthorized(challenge: &'static str, why: &str) -> Response {
    let mut response = status_with_error(StatusCode::UNAUTHORIZED, why);
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    response
}

fn empty(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}
