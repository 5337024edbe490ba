"""What Warden answers, typed: the JSON of the daemon's routes, which
:class:`warden.WardenClient` and :class:`warden.Warden` both return.

They are ``TypedDict`` s: at run time plain dicts, indexed as before
(``client.health()["generation"]``); a type checker knows their keys. They
follow the daemon's OpenAPI document (``docs/openapi.json``, made from the Rust
wire types), by the same names; a test holds each to its schema. A key in the
second class of a pair (``total=False``) may be absent from an answer.
"""

from __future__ import annotations

from typing import Any, List, Literal, Optional, TypedDict, Union

#: An opinion on a tool call; the strictest wins (``allow < ask < deny``).
Verdict = Literal["allow", "ask", "deny"]
#: How a run meets humans.
InteractionMode = Literal["interactive", "scheduled", "webhook", "autonomous"]
#: What a provider's failure becomes (the operator's ``on_error``).
OnError = Literal["deny", "ask", "allow"]
#: The run that sent a model response: it goes on, or waits for a human.
RunState = Literal["running", "waiting_for_input"]
#: What becomes of one call of a model response.
CallStatus = Literal["run", "denied", "pending"]
#: A human's decision on one paused call.
DecisionKind = Literal["approve", "reject", "edit"]
#: Where an approval is in its life.
ApprovalStatus = Literal["pending", "resumed", "cleared", "expired"]
#: What an approval answers: a paused run, or one MCP call's ask.
ApprovalKind = Literal["pause", "mcp_call"]
#: What a tool under ``hitl_approval`` does in a run.
ListedTools = Literal["pause", "run", "deny"]
#: What becomes of a sandbox network request that needs a human.
NetworkRequests = Literal["ask_human", "deny"]
#: The risk classifier's opinion of a call.
Risk = Literal["low", "high"]


class ReasonDict(TypedDict):
    """Why a stage reached its verdict (schema ``Reason``; the
    :class:`~warden.client.Reason` of an evaluation holds the same)."""

    code: str
    message: str


# -- an evaluation's stages ---------------------------------------------------


class _ClassifierReport(TypedDict):
    name: str
    cached: bool


class ClassifierReport(_ClassifierReport, total=False):
    """Triage's risk classifier in a stage report."""

    risk: Optional[Risk]
    error: Optional[str]


class _StageReport(TypedDict):
    stage: str
    verdict: Verdict
    codes: List[str]
    duration_us: int


class StageReport(_StageReport, total=False):
    """One stage's contribution to an evaluation (``Evaluation.stages``)."""

    digest: Optional[str]
    fuel_used: Optional[int]
    error_detail: Optional[str]
    classifier: Optional[ClassifierReport]


# -- operating: GET /healthz, GET /v1/admin/providers, POST /v1/admin/reload --


class _Health(TypedDict):
    status: str
    generation: int
    #: How many providers the live set has.
    providers: int


class Health(_Health, total=False):
    """``GET /healthz``: up, with a provider set; the configuration's digest
    and the node's name (``server.node_name``; in-process, none)."""

    config_sha256: Optional[str]
    node_name: Optional[str]


class Limits(TypedDict):
    """A provider's sandbox limits, as configured (``limits:``). The
    ``configure_*`` limits bound loading the config into a new instance (a
    daemon older than them leaves them out)."""

    timeout_ms: int
    fuel: int
    configure_timeout_ms: int
    configure_fuel: int
    memory_mb: int
    max_input_bytes: int
    max_output_bytes: int
    pool_size: int


class PoolUsage(TypedDict):
    """A provider's warm instances right now."""

    capacity: int
    live: int
    idle: int


class ProviderStatus(TypedDict):
    """A provider of the live set."""

    #: The name the configuration gives it.
    name: str
    #: What the component says it is.
    provider: str
    version: str
    digest: str
    #: Where the component was loaded from (``builtin:<name>`` or a path).
    source: str
    limits: Limits
    on_error: OnError
    loaded_since: str
    pool: PoolUsage


class _ProviderList(TypedDict):
    generation: int
    loaded_at: str
    #: ``guardrails.enabled``.
    enabled: bool
    providers: List[ProviderStatus]


class ProviderList(_ProviderList, total=False):
    """``GET /v1/admin/providers``: the live provider set; the configuration's
    digest and the node's name (``server.node_name``; in-process, none)."""

    config_sha256: Optional[str]
    node_name: Optional[str]


class ProviderDigest(TypedDict):
    """A provider of a set, by name and component digest."""

    name: str
    digest: str


class ReloadReport(TypedDict):
    """``POST /v1/admin/reload``: the answer to a reload that took effect."""

    #: The generation now serving, and the one it replaced.
    generation: int
    previous_generation: int
    providers: List[ProviderDigest]
    previous_providers: List[ProviderDigest]
    #: The SHA-256 of the configuration that was applied.
    config_sha256: str
    duration_ms: float
    #: Changes that need a restart to take effect (they were not applied).
    warnings: List[str]


# -- the run: GET/POST /v1/interaction ------------------------------------------


class TokenInfo(TypedDict):
    """Who asked: the token's name and role (in-process: the principal, ``internal``)."""

    token: str
    role: str


class _InteractionReport(TypedDict):
    mode: InteractionMode
    can_ask_human: bool
    approval_listed_tools: ListedTools
    withheld_tools: List[str]
    network_requests: NetworkRequests
    guidance: str
    caller: TokenInfo


class InteractionReport(_InteractionReport, total=False):
    """``GET``/``POST /v1/interaction``: the run's interaction policy and who asked."""

    why_no_human: Optional[str]
    offered_tools: Optional[List[str]]
    dropped_keys: List[str]


# -- model responses through the approval gate -----------------------------------


class _ModelToolCall(TypedDict):
    name: str


class ModelToolCall(_ModelToolCall, total=False):
    """One tool call the model asked for."""

    id: Optional[str]
    args: Any
    type: Optional[str]


class _AiMessage(TypedDict):
    tool_calls: List[ModelToolCall]


class AiMessage(_AiMessage, total=False):
    """The tool-call part of one AI message, as the gate rewrote it."""

    raw_tool_calls: Optional[List[Any]]
    content: Any


class ApprovalRequest(TypedDict):
    """One call waiting for a human."""

    #: The id a human's decision names.
    request_id: str
    tool_call_id: Optional[str]
    tool_name: str
    args: Any
    reasons: List[ReasonDict]


class _CallOutcome(TypedDict):
    index: int
    id: Optional[str]
    name: str
    status: CallStatus
    removed: bool
    args: Any
    reasons: List[ReasonDict]


class CallOutcome(_CallOutcome, total=False):
    """The verdict on one call of a model response."""

    note: Optional[str]
    request_id: Optional[str]
    decision: Optional[DecisionKind]
    decided_by: Optional[str]


class _GateOutcome(TypedDict):
    thread_id: str
    run_id: str
    run_state: RunState
    approval_id: Optional[str]
    requests: List[ApprovalRequest]
    calls: List[CallOutcome]
    message: AiMessage
    interaction_mode: InteractionMode
    generation: int


class GateOutcome(_GateOutcome, total=False):
    """``POST /v1/threads/{thread}/runs/{run}/tool-calls``: what runs, what is
    denied, and what waits for a human."""

    notices: List[ReasonDict]


class ResolvedByResume(TypedDict):
    by: Literal["resume"]
    run_id: str


class _ResolvedByClear(TypedDict):
    by: Literal["clear"]
    actor: str


class ResolvedByClear(_ResolvedByClear, total=False):
    reason: Optional[str]


class ResolvedByExpiry(TypedDict):
    by: Literal["expiry"]
    #: The configured wait, as written (``30m``).
    after: str


#: How a pending approval was resolved.
ResolvedBy = Union[ResolvedByResume, ResolvedByClear, ResolvedByExpiry]


class _Resolution(TypedDict):
    approval_id: str
    thread_id: str
    run_id: str
    resolved_by: ResolvedBy
    #: The stored answer to an earlier, identical resume: its calls must not run again.
    replayed: bool
    consumption_id: str
    resolved_at: str
    run_state: RunState
    calls: List[CallOutcome]
    message: AiMessage


class Resolution(_Resolution, total=False):
    """The answer to a resume (``POST .../approvals/{id}/resume``): what every
    call of the paused message does now."""

    reviewer: Optional[str]
    relayed_by: Optional[str]
    #: ``client_attested`` when an MCP client's own answer (elicitation)
    #: resolved the approval; absent for a human's answer.
    answered_by: str


class _ApprovalView(TypedDict):
    approval_id: str
    principal: str
    thread_id: str
    run_id: str
    status: ApprovalStatus
    created_at: str
    requests: List[ApprovalRequest]
    kind: ApprovalKind


class ApprovalView(_ApprovalView, total=False):
    """One approval as ``GET /v1/threads/{thread}/approvals`` lists it."""

    consumed_at: Optional[str]

    expires_at: Optional[str]
    run_state: Optional[RunState]
    resolution: Optional[Resolution]
    broken: List[str]


# -- standing grants ----------------------------------------------------------------


class CallTarget(TypedDict):
    """A grant for exactly one call: the tool and its canonical arguments' SHA-256."""

    kind: Literal["call"]
    tool: str
    args_sha256: str


class RuleTarget(TypedDict):
    """A grant for the calls a permission rule matches."""

    kind: Literal["rule"]
    rule: str


#: What a grant allows.
GrantTarget = Union[CallTarget, RuleTarget]


class _Grant(TypedDict):
    grant_id: str
    principal: str
    thread_id: Optional[str]
    target: GrantTarget
    approval_id: str
    granted_by: str
    created_at: str
    expires_at: str
    expires_at_ms: int


class Grant(_Grant, total=False):
    """A standing grant (``GET /v1/grants``, ``POST /v1/grants/{id}/revoke``)."""

    revoked_at: Optional[str]
    revoked_by: Optional[str]


__all__ = [
    "AiMessage",
    "ApprovalKind",
    "ApprovalRequest",
    "ApprovalStatus",
    "ApprovalView",
    "CallOutcome",
    "CallStatus",
    "CallTarget",
    "ClassifierReport",
    "DecisionKind",
    "GateOutcome",
    "Grant",
    "GrantTarget",
    "Health",
    "InteractionMode",
    "InteractionReport",
    "Limits",
    "ListedTools",
    "ModelToolCall",
    "NetworkRequests",
    "OnError",
    "PoolUsage",
    "ProviderDigest",
    "ProviderList",
    "ProviderStatus",
    "ReasonDict",
    "ReloadReport",
    "Resolution",
    "ResolvedBy",
    "ResolvedByClear",
    "ResolvedByExpiry",
    "ResolvedByResume",
    "Risk",
    "RuleTarget",
    "RunState",
    "StageReport",
    "TokenInfo",
    "Verdict",
]
