"""Every reason code Warden emits, by the names of ``warden_types::codes``
(crates/types/src/codes.rs), the one place they are defined.

Generated from that file by ``scripts/python-codes``: do not edit; a test fails
when this file is not what the script writes.

Codes are stable: a harness may branch on them. ``warden.*`` codes are the
host's and its SDKs', ``oap.*`` the Open Agent Passport's shared vocabulary,
``perm.*`` the permission engine's and ``triage.*`` risk triage's.
"""

#: The prefix of every host detail code; providers may not use it.
HOST_PREFIX = "warden."

# The OAP vocabulary.

#: The call is allowed.
ALLOWED = "oap.allowed"
#: The call is denied (the default reason of a deny or ask that gave none).
DENIED = "oap.denied"
#: A provider failed to give an opinion; the second reason says how.
EVALUATOR_ERROR = "oap.evaluator_error"
#: The tool name is empty, too long, or holds whitespace or control characters.
INVALID_TOOL_NAME = "oap.invalid_tool_name"

# The request, as it arrives (intake).

#: The body is not JSON.
INVALID_JSON = "warden.invalid_json"
#: The body, an argument or a provider's input is over its limit.
INPUT_TOO_LARGE = "warden.input_too_large"
#: The body nests deeper than the host reads.
INPUT_TOO_DEEP = "warden.input_too_deep"
#: A JSON object names the same key twice.
DUPLICATE_KEY = "warden.duplicate_key"
#: `tool_input` is not a JSON object.
INVALID_TOOL_INPUT = "warden.invalid_tool_input"
#: An id (thread, run, agent, tool call) is empty, too long or holds control
#: characters.
INVALID_ID = "warden.invalid_id"
#: The caller sent context keys it may not set (interaction keys,
#: attribution fields): they were ignored.
CONTEXT_KEYS_DROPPED = "warden.context_keys_dropped"

# The pipeline.

#: A call would ask a human, but nobody can be asked in this run: denied.
ASK_UNAVAILABLE = "warden.ask_unavailable"
#: The model asked the user a question in a run nobody answers: denied.
CLARIFICATION_UNAVAILABLE = "warden.clarification_unavailable"

# A provider's failures: the second reason after `oap.evaluator_error`.

#: The provider ran past its time limit.
TIMEOUT = "warden.timeout"
#: The provider ran out of fuel.
FUEL_EXHAUSTED = "warden.fuel_exhausted"
#: The provider asked for more memory than its limit.
MEMORY_LIMIT = "warden.memory_limit"
#: The provider overflowed its stack.
STACK_OVERFLOW = "warden.stack_overflow"
#: The provider trapped.
TRAP = "warden.trap"
#: The provider's answer broke the contract.
INVALID_DECISION = "warden.invalid_decision"
#: Every instance of the provider was busy.
POOL_EXHAUSTED = "warden.pool_exhausted"
#: The provider refused its configuration.
CONFIGURE_FAILED = "warden.configure_failed"

# The permission engine.

#: The policy id of the permission engine's decisions.
PERMISSIONS_POLICY = "warden.permissions"
#: The call touches a sensitive path.
SENSITIVE_PATH = "perm.sensitive_path"
#: `read_only` mode and the tool is not a registered read-only tool.
READ_ONLY_MODE = "perm.read_only_mode"
#: An explicit rule denied the call.
RULE_DENY = "perm.rule_deny"
#: An explicit rule asks for approval.
RULE_ASK = "perm.rule_ask"
#: An explicit rule allowed the call.
RULE_ALLOW = "perm.rule_allow"
#: The shell command cannot be analysed.
OPAQUE_COMMAND = "perm.opaque_command"
#: The arguments hide characters (bidirectional controls, invisible ones).
SUSPICIOUS_CHARACTERS = "perm.suspicious_characters"
#: No rule decided: the mode's default.
MODE_DEFAULT = "perm.mode_default"

# Risk triage.

#: The policy id of triage's decisions.
TRIAGE_POLICY = "warden.triage"
#: The command destroys data or the system.
DESTRUCTIVE = "triage.destructive"
#: The command sends data out.
EXFILTRATION = "triage.exfiltration"
#: The command downloads code and runs it.
DOWNLOAD_EXEC = "triage.download_exec"
#: The command raises its privileges or edits account files.
PRIVILEGE_ESCALATION = "triage.privilege_escalation"
#: The command hides the code it runs.
OBFUSCATION = "triage.obfuscation"
#: The command serves a shell over a socket.
SOCKET_SHELL = "triage.socket_shell"
#: The command prints a credential a tool keeps (`gh auth token`).
CREDENTIAL_ACCESS = "triage.credential_access"
#: The risk classifier rated the call high.
CLASSIFIER_HIGH = "triage.classifier_high_risk"
#: The risk classifier failed.
CLASSIFIER_ERROR = "triage.classifier_error"

# Human approval.

#: A listed tool waits for a human.
APPROVAL_REQUIRED = "warden.approval_required"
#: A listed tool in a run where nobody can approve it: denied.
APPROVAL_UNAVAILABLE = "warden.approval_unavailable"
#: A listed tool ran unapproved in an unattended run (`non_interactive: allow`).
APPROVAL_WAIVED = "warden.approval_waived"
#: A human approved the call.
APPROVAL_GRANTED = "warden.approval_granted"
#: A human approved the call with new arguments.
APPROVAL_EDITED = "warden.approval_edited"
#: A human (or an operator's clear) rejected the call.
APPROVAL_REJECTED = "warden.approval_rejected"
#: A call allowed by a standing grant instead of waiting for a human.
APPROVAL_GRANT = "warden.approval_grant"
#: The model's call was malformed in a way the harness's context reveals
#: (a malformed timestamp, an unknown interaction mode).
INVALID_CALL = "warden.invalid_call"
#: The raw payload or the content blocks hold a call the call list does not
#: (another id, name or arguments): every call of the message is denied.
SURFACE_MISMATCH = "warden.surface_mismatch"
#: A model response asks for more calls than the gate takes: none runs.
TOO_MANY_CALLS = "warden.too_many_calls"
#: A call in the message that has no id the harness could answer.
UNADDRESSABLE_CALL = "warden.unaddressable_call"
#: `/v1/evaluate` on a thread that waits for a human: denied until the
#: approval is answered.
APPROVAL_PENDING = "warden.approval_pending"
#: The principal has as many approvals pending as its quota allows.
APPROVAL_QUOTA_EXCEEDED = "warden.approval_quota_exceeded"
#: Nobody answered within `hitl_approval.expire_after`: rejected.
APPROVAL_EXPIRED = "warden.approval_expired"
#: A call of a paused message that nobody was asked about, which would now
#: need a human (judged again at resume): denied.
APPROVAL_NOT_ASKED = "warden.approval_not_asked"

# The daemon.

#: The judging pool is full: denied at once rather than queued.
OVERLOADED = "warden.overloaded"
#: The approval store is locked past its busy timeout.
STORE_UNAVAILABLE = "warden.store_unavailable"

# What a client or a harness adapter answers itself: a deny for a call that
# never reached a judgement, or whose answer could not be used.

#: The call holds a value JSON cannot carry (`NaN`, a lone surrogate): denied
#: before it is sent.
UNENCODABLE_INPUT = "warden.unencodable_input"
#: The daemon refused the harness's token (401).
UNAUTHORIZED = "warden.unauthorized"
#: The harness's token may not ask this (403).
FORBIDDEN = "warden.forbidden"
#: The daemon refused the request otherwise (400, 409, 413, 422, ...).
REFUSED = "warden.refused"
#: The request was sent, but no answer came (a reset, a timeout, a closed
#: connection, a body that is not Warden's).
NO_ANSWER = "warden.no_answer"
#: The adapter failed itself (an exception of its own): the call is denied.
ADAPTER_FAILED = "warden.adapter_failed"
#: A relayed approval was answered before: its calls are not run again.
ALREADY_ANSWERED = "warden.already_answered"
#: The human's answer could not be used (not one decision per request, or no
#: reviewer named).
INVALID_ANSWER = "warden.invalid_answer"
#: A tool call Warden did not judge, refused before it runs.
NOT_JUDGED = "warden.not_judged"
