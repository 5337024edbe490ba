"""A DeerFlow ``GuardrailProvider`` backed by the Warden daemon.

In DeerFlow's ``config.yaml``::

    guardrails:
      enabled: true
      fail_closed: true
      provider:
        use: warden.deerflow:WardenProvider
        config:
          url: http://127.0.0.1:8787
          token_env: WARDEN_TOKEN

``evaluate`` and ``aevaluate`` take a DeerFlow ``GuardrailRequest`` and return a
``GuardrailDecision``. When the daemon cannot be reached (or refuses the
request) they raise, so that DeerFlow's own ``fail_closed`` decides. Warden's
``ask`` has no DeerFlow equivalent: it is not an allow, and the decision's
metadata says ``"verdict": "ask"``.

When DeerFlow is installed its own classes are used; otherwise classes of the
same shape, so the provider can be used and tested without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .client import DEFAULT_TOKEN_ENV, DEFAULT_URL, Evaluation, WardenClient, tool_call

try:  # pragma: no cover - depends on whether DeerFlow is installed
    from deerflow.guardrails.provider import (  # type: ignore[import-not-found]
        GuardrailDecision,
        GuardrailReason,
        GuardrailRequest,
    )
except ImportError:

    @dataclass
    class GuardrailReason:  # type: ignore[no-redef]
        code: str
        message: str = ""

    @dataclass
    class GuardrailDecision:  # type: ignore[no-redef]
        allow: bool
        reasons: List[GuardrailReason] = field(default_factory=list)
        policy_id: Optional[str] = None
        metadata: Dict[str, Any] = field(default_factory=dict)

    @dataclass
    class GuardrailRequest:  # type: ignore[no-redef]
        tool_name: str
        tool_input: Dict[str, Any]
        agent_id: Optional[str] = None
        thread_id: Optional[str] = None
        is_subagent: bool = False
        timestamp: str = ""
        user_id: Optional[str] = None
        user_role: Optional[str] = None
        oauth_provider: Optional[str] = None
        oauth_id: Optional[str] = None
        run_id: Optional[str] = None
        tool_call_id: Optional[str] = None
        channel_user_id: Optional[str] = None
        is_internal: bool = False
        authz_attributes: Dict[str, Any] = field(default_factory=dict)


#: The request's attribution that Warden's context takes, by the same names.
_CONTEXT_FIELDS = (
    "agent_id",
    "thread_id",
    "run_id",
    "user_id",
    "user_role",
    "oauth_provider",
    "oauth_id",
)


def to_tool_call(request: Any) -> Dict[str, Any]:
    """A Warden request body from a DeerFlow ``GuardrailRequest`` (or any object
    with the same attributes)."""
    context: Dict[str, Any] = {name: getattr(request, name, None) for name in _CONTEXT_FIELDS}
    context["is_subagent"] = bool(getattr(request, "is_subagent", False))
    timestamp = getattr(request, "timestamp", None)
    if timestamp:
        context["timestamp"] = timestamp
    tool_input = getattr(request, "tool_input", None)
    return tool_call(
        str(getattr(request, "tool_name")),
        tool_input if tool_input is not None else {},
        tool_call_id=getattr(request, "tool_call_id", None),
        context=context,
    )


def to_decision(evaluation: Evaluation) -> "GuardrailDecision":
    """DeerFlow's decision from Warden's: ``allow`` only for an allow."""
    metadata = dict(evaluation.metadata)
    metadata["warden"] = {
        "verdict": evaluation.verdict,
        "decided_by": evaluation.decided_by,
        "generation": evaluation.generation,
        "interaction_mode": evaluation.interaction_mode,
        "decision_id": evaluation.decision_id,
    }
    return GuardrailDecision(
        allow=evaluation.verdict == "allow",
        reasons=[GuardrailReason(code=r.code, message=r.message) for r in evaluation.reasons],
        policy_id=evaluation.policy_id,
        metadata=metadata,
    )


class WardenProvider:
    """DeerFlow's ``GuardrailProvider`` protocol over the Warden daemon."""

    name = "warden"

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: Optional[str] = None,
        token_env: str = DEFAULT_TOKEN_ENV,
        timeout: float = 5.0,
        framework: Optional[str] = None,
        client: Optional[WardenClient] = None,
    ):
        self.framework = framework
        self.client = client or WardenClient(url, token, token_env=token_env, timeout=timeout)

    def evaluate(self, request: Any) -> "GuardrailDecision":
        return to_decision(self.client.evaluate_call(to_tool_call(request)))

    async def aevaluate(self, request: Any) -> "GuardrailDecision":
        return to_decision(await self.client.aevaluate_call(to_tool_call(request)))


__all__ = [
    "GuardrailDecision",
    "GuardrailReason",
    "GuardrailRequest",
    "WardenProvider",
    "to_decision",
    "to_tool_call",
]
