//! Every reason code Warden itself emits, in one place: the host, the native
//! core, the approval gate and the daemon take their codes from here, and so can
//! a provider (this crate builds for `wasm32-wasip2`) or a harness matching on
//! them. The Python package's `warden.codes` is generated from this file
//! (`scripts/python-codes`; a test fails when it is stale). A provider's own
//! codes are its business; these are the host's and its SDKs'.
//!
//! Codes are stable: a harness may branch on them. `warden.*` codes are the
//! host's, `oap.*` the Open Agent Passport's shared vocabulary, `perm.*` the
//! permission engine's and `triage.*` risk triage's.

/// The prefix of every host detail code; providers may not use it.
pub const HOST_PREFIX: &str = "warden.";

// The OAP vocabulary.

/// The call is allowed.
pub const ALLOWED: &str = "oap.allowed";
/// The call is denied (the default reason of a deny or ask that gave none).
pub const DENIED: &str = "oap.denied";
/// A provider failed to give an opinion; the second reason says how.
pub const EVALUATOR_ERROR: &str = "oap.evaluator_error";
/// The tool name is empty, too long, or holds whitespace or control characters.
pub const INVALID_TOOL_NAME: &str = "oap.invalid_tool_name";

// The request, as it arrives (intake).

/// The body is not JSON.
pub const INVALID_JSON: &str = "warden.invalid_json";
/// The body, an argument or a provider's input is over its limit.
pub const INPUT_TOO_LARGE: &str = "warden.input_too_large";
/// The body nests deeper than the host reads.
pub const INPUT_TOO_DEEP: &str = "warden.input_too_deep";
/// A JSON object names the same key twice.
pub const DUPLICATE_KEY: &str = "warden.duplicate_key";
/// `tool_input` is not a JSON object.
pub const INVALID_TOOL_INPUT: &str = "warden.invalid_tool_input";
/// An id (thread, run, agent, tool call) is empty, too long or holds control
/// characters.
pub const INVALID_ID: &str = "warden.invalid_id";
/// The caller sent context keys it may not set (interaction keys,
/// attribution fields): they were ignored.
pub const CONTEXT_KEYS_DROPPED: &str = "warden.context_keys_dropped";

// The pipeline.

/// A call would ask a human, but nobody can be asked in this run: denied.
pub const ASK_UNAVAILABLE: &str = "warden.ask_unavailable";
/// The model asked the user a question in a run nobody answers: denied.
pub const CLARIFICATION_UNAVAILABLE: &str = "warden.clarification_unavailable";

// A provider's failures: the second reason after `oap.evaluator_error`.

/// The provider ran past its time limit.
pub const TIMEOUT: &str = "warden.timeout";
/// The provider ran out of fuel.
pub const FUEL_EXHAUSTED: &str = "warden.fuel_exhausted";
/// The provider asked for more memory than its limit.
pub const MEMORY_LIMIT: &str = "warden.memory_limit";
/// The provider overflowed its stack.
pub const STACK_OVERFLOW: &str = "warden.stack_overflow";
/// The provider trapped.
pub const TRAP: &str = "warden.trap";
/// The provider's answer broke the contract.
pub const INVALID_DECISION: &str = "warden.invalid_decision";
/// Every instance of the provider was busy.
pub const POOL_EXHAUSTED: &str = "warden.pool_exhausted";
/// The provider refused its configuration.
pub const CONFIGURE_FAILED: &str = "warden.configure_failed";

// The permission engine.

/// The policy id of the permission engine's decisions.
pub const PERMISSIONS_POLICY: &str = "warden.permissions";
/// The call touches a sensitive path.
pub const SENSITIVE_PATH: &str = "perm.sensitive_path";
/// `read_only` mode and the tool is not a registered read-only tool.
pub const READ_ONLY_MODE: &str = "perm.read_only_mode";
/// An explicit rule denied the call.
pub const RULE_DENY: &str = "perm.rule_deny";
/// An explicit rule asks for approval.
pub const RULE_ASK: &str = "perm.rule_ask";
/// An explicit rule allowed the call.
pub const RULE_ALLOW: &str = "perm.rule_allow";
/// The shell command cannot be analysed.
pub const OPAQUE_COMMAND: &str = "perm.opaque_command";
/// The arguments hide characters (bidirectional controls, invisible ones).
pub const SUSPICIOUS_CHARACTERS: &str = "perm.suspicious_characters";
/// No rule decided: the mode's default.
pub const MODE_DEFAULT: &str = "perm.mode_default";

// Risk triage.

/// The policy id of triage's decisions.
pub const TRIAGE_POLICY: &str = "warden.triage";
/// The command destroys data or the system.
pub const DESTRUCTIVE: &str = "triage.destructive";
/// The command sends data out.
pub const EXFILTRATION: &str = "triage.exfiltration";
/// The command downloads code and runs it.
pub const DOWNLOAD_EXEC: &str = "triage.download_exec";
/// The command raises its privileges or edits account files.
pub const PRIVILEGE_ESCALATION: &str = "triage.privilege_escalation";
/// The command hides the code it runs.
pub const OBFUSCATION: &str = "triage.obfuscation";
/// The command serves a shell over a socket.
pub const SOCKET_SHELL: &str = "triage.socket_shell";
/// The command prints a credential a tool keeps (`gh auth token`).
pub const CREDENTIAL_ACCESS: &str = "triage.credential_access";
/// The risk classifier rated the call high.
pub const CLASSIFIER_HIGH: &str = "triage.classifier_high_risk";
/// The risk classifier failed.
pub const CLASSIFIER_ERROR: &str = "triage.classifier_error";

// Human approval.

/// A listed tool waits for a human.
pub const APPROVAL_REQUIRED: &str = "warden.approval_required";
/// A listed tool in a run where nobody can approve it: denied.
pub const APPROVAL_UNAVAILABLE: &str = "warden.approval_unavailable";
/// A listed tool ran unapproved in an unattended run (`non_interactive: allow`).
pub const APPROVAL_WAIVED: &str = "warden.approval_waived";
/// A human approved the call.
pub const APPROVAL_GRANTED: &str = "warden.approval_granted";
/// A human approved the call with new arguments.
pub const APPROVAL_EDITED: &str = "warden.approval_edited";
/// A human (or an operator's clear) rejected the call.
pub const APPROVAL_REJECTED: &str = "warden.approval_rejected";
/// A call allowed by a standing grant instead of waiting for a human.
pub const APPROVAL_GRANT: &str = "warden.approval_grant";
/// The model's call was malformed in a way the harness's context reveals
/// (a malformed timestamp, an unknown interaction mode).
pub const INVALID_CALL: &str = "warden.invalid_call";
/// The raw payload or the content blocks hold a call the call list does not
/// (another id, name or arguments): every call of the message is denied.
pub const SURFACE_MISMATCH: &str = "warden.surface_mismatch";
/// A model response asks for more calls than the gate takes: none runs.
pub const TOO_MANY_CALLS: &str = "warden.too_many_calls";
/// A call in the message that has no id the harness could answer.
pub const UNADDRESSABLE_CALL: &str = "warden.unaddressable_call";
/// `/v1/evaluate` on a thread that waits for a human: denied until the
/// approval is answered.
pub const APPROVAL_PENDING: &str = "warden.approval_pending";
/// The principal has as many approvals pending as its quota allows.
pub const APPROVAL_QUOTA_EXCEEDED: &str = "warden.approval_quota_exceeded";
/// Nobody answered within `hitl_approval.expire_after`: rejected.
pub const APPROVAL_EXPIRED: &str = "warden.approval_expired";
/// A call of a paused message that nobody was asked about, which would now
/// need a human (judged again at resume): denied.
pub const APPROVAL_NOT_ASKED: &str = "warden.approval_not_asked";

// The daemon.

/// The judging pool is full: denied at once rather than queued.
pub const OVERLOADED: &str = "warden.overloaded";
/// The approval store is locked past its busy timeout.
pub const STORE_UNAVAILABLE: &str = "warden.store_unavailable";

// What a client or a harness adapter answers itself: a deny for a call that
// never reached a judgement, or whose answer could not be used.

/// The call holds a value JSON cannot carry (`NaN`, a lone surrogate): denied
/// before it is sent.
pub const UNENCODABLE_INPUT: &str = "warden.unencodable_input";
/// The daemon refused the harness's token (401).
pub const UNAUTHORIZED: &str = "warden.unauthorized";
/// The harness's token may not ask this (403).
pub const FORBIDDEN: &str = "warden.forbidden";
/// The daemon refused the request otherwise (400, 409, 413, 422, ...).
pub const REFUSED: &str = "warden.refused";
/// The request was sent, but no answer came (a reset, a timeout, a closed
/// connection, a body that is not Warden's).
pub const NO_ANSWER: &str = "warden.no_answer";
/// The adapter failed itself (an exception of its own): the call is denied.
pub const ADAPTER_FAILED: &str = "warden.adapter_failed";
/// A relayed approval was answered before: its calls are not run again.
pub const ALREADY_ANSWERED: &str = "warden.already_answered";
/// The human's answer could not be used (not one decision per request, or no
/// reviewer named).
pub const INVALID_ANSWER: &str = "warden.invalid_answer";
/// A tool call Warden did not judge, refused before it runs.
pub const NOT_JUDGED: &str = "warden.not_judged";
