"""A human's answer, relayed: calls that wait for a human are paused through
Warden's tool-calls route, shown as LangChain's human-in-the-loop interrupt
(action requests and review configs, so that existing approval UIs drive it),
and the human's decisions (approve / edit / reject) are relayed to Warden's
resume route naming the human, so that Warden's compare-and-swap, journal,
approver record and re-judging apply. What comes back says, call by call, what
runs (with which arguments) and what does not.

A resume outcome Warden has given before (``replayed: true``, the same interrupt
resumed twice) is never executed again: every call of it is answered as not run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from . import codes
from .answers import ReasonDict
from .api import WardenAPI
from .client import Reason, WardenError, WardenHTTPError, WardenUnavailable, refusal_deny

# The reason codes of calls the relay answers itself, importable from here as before.
from .codes import ADAPTER_FAILED as ADAPTER_FAILED
from .codes import ALREADY_ANSWERED as ALREADY_ANSWERED
from .codes import APPROVAL_PENDING as APPROVAL_PENDING
from .codes import INVALID_ANSWER as INVALID_ANSWER
from .codes import NO_ANSWER
from .graph import resuming

#: The decisions a human may give on a call Warden paused.
ALLOWED_DECISIONS = ["approve", "edit", "reject"]
#: The codes that mean no human could be asked: the agent must not work around them.
NO_HUMAN_CODES = (codes.ASK_UNAVAILABLE, codes.APPROVAL_UNAVAILABLE, codes.CLARIFICATION_UNAVAILABLE)
NO_WORKAROUND = (
    "Do not retry it or try to reach the same result another way; stop and report that this step is blocked and why."
)


@dataclass
class CallResult:
    """What becomes of one call of the message."""

    id: Optional[str]
    name: str
    #: ``run``, ``denied`` (``pending`` never leaves this module).
    status: str
    args: Dict[str, Any]
    reasons: List[ReasonDict] = field(default_factory=list)
    #: What the model is told when the call does not run.
    note: Optional[str] = None
    #: The human's decision, when one was given.
    decision: Optional[str] = None

    @property
    def runs(self) -> bool:
        return self.status == "run"


@dataclass
class Result:
    """The calls of one message, after Warden (and a human, if one was asked)."""

    calls: List[CallResult]
    #: The message's surfaces as Warden rewrote them (edits applied, removed calls gone).
    message: Dict[str, Any] = field(default_factory=dict)
    approval_id: Optional[str] = None
    #: What Warden noted about the message as a whole (a call it dropped, and why).
    notices: List[ReasonDict] = field(default_factory=list)


def run_id_for(*parts: Any) -> str:
    """A run id that is the same each time the same graph step runs again (as
    it does on resume), so that Warden recognises its pause. Never raises: for
    parts JSON cannot carry (a cycle, nesting past the recursion limit) the id
    is made from the failure, and the call is refused when it is sent."""
    try:
        text = json.dumps(parts, sort_keys=True, default=str)
    except Exception as err:  # any value the model wrote
        text = f"unencodable: {type(err).__name__}"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"run-{digest[:32]}"


def adapter_failure(who: str, err: BaseException) -> ReasonDict:
    """The reason of every call an adapter denies because it failed itself."""
    return _reason(ADAPTER_FAILED, f"{who} failed ({_error_text(err)}); the call is denied")


def _error_text(err: BaseException) -> str:
    """The exception's type and text; its type alone where the text cannot be
    had (a ``__str__`` that raises, no memory left for it)."""
    try:
        return f"{type(err).__name__}: {err}"
    except Exception:  # any exception's own __str__
        return type(err).__name__


def unreachable_after(what: str, err: BaseException) -> ReasonDict:
    """The reason of a call denied because Warden could not be reached after
    ``what`` (Warden asked, a human answered): past that point an unreachable
    daemon is no longer the harness's ``fail_closed`` to decide."""
    return _reason(NO_ANSWER, f"Warden could not be reached after {what} ({_error_text(err)}); the call is denied")


def denial_text(name: str, reasons: Sequence[ReasonDict]) -> str:
    """What the model is told about a call Warden denied."""
    first: ReasonDict = reasons[0] if reasons else {"code": codes.DENIED, "message": "blocked by guardrail policy"}
    text = f"Warden denied tool '{name}' ({first.get('code')}): {first.get('message', '')}."
    if any(r.get("code") in NO_HUMAN_CODES for r in reasons):
        text += " " + NO_WORKAROUND
    return text


def hitl_request(outcome: Mapping[str, Any]) -> Dict[str, Any]:
    """LangChain's ``HITLRequest`` for the calls that wait, plus Warden's ids
    (under ``warden``, for a UI that talks to Warden too)."""
    requests = outcome["requests"]
    return {
        "action_requests": [
            {"name": r["tool_name"], "args": r.get("args") or {}, "description": _describe(r)} for r in requests
        ],
        "review_configs": [
            {"action_name": r["tool_name"], "allowed_decisions": list(ALLOWED_DECISIONS)} for r in requests
        ],
        "warden": {
            "thread_id": outcome.get("thread_id"),
            "approval_id": outcome.get("approval_id"),
            "request_ids": [r["request_id"] for r in requests],
        },
    }


def _describe(request: Mapping[str, Any]) -> str:
    why = "; ".join(r.get("message", "") for r in request.get("reasons") or []) or "Warden asks for approval"
    args = json.dumps(request.get("args") or {}, ensure_ascii=False, sort_keys=True)
    return f"{why}\n\nTool: {request['tool_name']}\nArgs: {args}"


class AnswerError(ValueError):
    """A resume value that is not an answer to the pending requests."""


def to_resume(answer: Any, requests: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """Warden's resume body for a human's answer, one decision per pending
    request, in order: LangChain's ``HITLResponse`` (``{"decisions": [...]}``,
    approve / edit / reject), or agent-chat-ui's list of ``HumanResponse``
    (``[{"type": "accept" | "edit" | "response" | "ignore", "args": ...}]``)."""
    if isinstance(answer, list):
        decisions = [_from_human_response(r) for r in answer]
    elif isinstance(answer, Mapping) and isinstance(answer.get("decisions"), list):
        decisions = answer["decisions"]
    else:
        raise AnswerError(
            'the resume value must be {"decisions": [...]} (or a list of agent-chat-ui responses), '
            "one decision per action request"
        )
    if len(decisions) != len(requests):
        raise AnswerError(f"{len(decisions)} decisions for {len(requests)} action requests")
    out = []
    for decision, request in zip(decisions, requests):
        kind = decision.get("type") if isinstance(decision, Mapping) else None
        entry: Dict[str, Any] = {"request_id": request["request_id"]}
        if kind == "approve":
            entry["decision"] = "approve"
        elif kind == "reject":
            entry["decision"] = "reject"
            if decision.get("message"):
                entry["message"] = str(decision["message"])
        elif kind == "edit":
            action = decision.get("edited_action")
            if not isinstance(action, Mapping) or not isinstance(action.get("args"), Mapping):
                raise AnswerError('an edit needs "edited_action": {"name", "args"}')
            if action.get("name", request["tool_name"]) != request["tool_name"]:
                raise AnswerError(
                    f"an edit may change the arguments of '{request['tool_name']}', not the tool "
                    f"('{action.get('name')}'): reject the call instead"
                )
            entry["decision"] = "edit"
            entry["args"] = dict(action["args"])
        else:
            raise AnswerError(f"unknown decision {decision!r}; expected approve, edit or reject")
        out.append(entry)
    return {"decisions": out}


def _from_human_response(response: Any) -> Any:
    """LangChain's decision for one of agent-chat-ui's ``HumanResponse`` s:
    ``accept`` approves, ``edit`` (``args: {"action", "args"}``) edits, and
    ``response`` (the human's words instead of a run) and ``ignore`` reject."""
    if not isinstance(response, Mapping):
        return response  # refused as an unknown decision
    kind, args = response.get("type"), response.get("args")
    if kind == "accept":
        return {"type": "approve"}
    if kind == "edit":
        action = args if isinstance(args, Mapping) else {}
        edited = {"args": action.get("args")}
        if "action" in action:
            edited["name"] = action["action"]
        return {"type": "edit", "edited_action": edited}
    if kind == "response":
        return {"type": "reject", "message": args if isinstance(args, str) else None}
    if kind == "ignore":
        return {"type": "reject", "message": "the human dismissed the call"}
    return response


class Relay:
    """Pauses calls through Warden and relays a human's answer.

    ``interrupt`` is LangGraph's ``interrupt`` (raises to pause; returns the
    resume value when the graph resumes). ``reviewer`` names the human who
    answers (:func:`warden.graph.reviewer_of`: the run's authenticated user or
    the operator's setting); a name in the resume value, which the client
    writes, is not believed."""

    def __init__(self, client: WardenAPI, interrupt: Callable[[Any], Any]):
        self.client = client
        self.interrupt = interrupt

    def judge(
        self,
        thread_id: str,
        run_id: str,
        message: Mapping[str, Any],
        context: Mapping[str, Any],
        reviewer: Optional[str] = None,
    ) -> Result:
        """Judges a message's calls through the approval gate; where calls wait
        for a human, pauses (raises LangGraph's interrupt) and, once resumed,
        relays the answer. Never raises anything but the interrupt and
        :class:`WardenUnavailable`: every failure denies every call."""
        calls: List[Mapping[str, Any]] = list(message.get("tool_calls") or [])
        body = {"message": message, "context": {k: v for k, v in context.items() if v is not None}}
        outcome: Mapping[str, Any]
        try:
            outcome = self.client.submit_tool_calls(thread_id, run_id, body)
        except WardenUnavailable as err:
            if not resuming():
                raise  # Warden has answered nothing: the harness's fail_closed decides
            # A human's answer is in hand: it is not lost to a daemon gone since.
            return all_denied(calls, unreachable_after("a human answered", err), message)
        except WardenHTTPError as err:
            details = err.details if isinstance(err.details, dict) else {}
            if err.code == "approval_pending" and details.get("run_id") == run_id:
                # Our own pause, submitted again with other bytes: answer it.
                outcome = {
                    "thread_id": thread_id,
                    "approval_id": details.get("approval_id"),
                    "run_state": "waiting_for_input",
                    "requests": [dict(r, args=_args_of(calls, r)) for r in details.get("requests") or []],
                    "calls": [],
                    "message": dict(message),
                }
            else:
                return all_denied(calls, refusal_deny(err).reasons[0], message)
        except WardenError as err:
            return all_denied(calls, refusal_deny(err).reasons[0], message)
        if outcome.get("run_state") != "waiting_for_input":
            return _result(outcome, message)
        answer = self.interrupt(hitl_request(outcome))
        return self._relay(thread_id, run_id, outcome, answer, reviewer, calls, message)

    def _relay(
        self,
        thread_id: str,
        run_id: str,
        outcome: Mapping[str, Any],
        answer: Any,
        reviewer: Optional[str],
        calls: Sequence[Mapping[str, Any]],
        message: Mapping[str, Any],
    ) -> Result:
        approval_id = outcome["approval_id"]
        try:
            body = to_resume(answer, outcome["requests"])
        except AnswerError as err:
            return all_denied(calls, _reason(INVALID_ANSWER, f"the human's answer could not be used: {err}"), message)
        who = reviewer
        if not who:
            why = (
                "nobody can be named as the human who answered: the run has no authenticated user "
                "(`langgraph_auth_user`) and the adapter no `reviewer` setting, so Warden cannot record who approved"
            )
            return all_denied(calls, _reason(INVALID_ANSWER, why), message)
        try:
            if self._answered_before(thread_id, run_id, approval_id):
                # This interrupt was resumed before, and the step paused again
                # (a new approval): the first answer stands; this one runs nothing.
                self._withdraw(thread_id, approval_id, who)
                return all_denied(calls, _already_answered(), message)
            resolution = self.client.resume(
                thread_id, approval_id, body, reviewer=str(who), idempotency_key=f"relay:{approval_id}"
            )
        except WardenHTTPError as err:
            if err.code == "approval_resolved":
                return all_denied(calls, _already_answered(), message)
            return all_denied(calls, refusal_deny(err).reasons[0], message)
        except WardenError as err:
            return all_denied(calls, refusal_deny(err).reasons[0], message)
        if resolution.get("replayed"):
            return all_denied(calls, _already_answered(), message)
        result = _result(resolution, message)
        result.approval_id = approval_id
        return result

    def _answered_before(self, thread_id: str, run_id: str, current: str) -> bool:
        """Whether this run paused before ``current``: a step pauses again only
        when it runs again after being answered."""
        return any(
            view.get("run_id") == run_id and view.get("approval_id") != current
            for view in self.client.approvals(thread_id, include_resolved=True)
        )

    def _withdraw(self, thread_id: str, approval_id: str, who: str) -> None:
        """Rejects a pause made by a step that had been answered already."""
        with contextlib.suppress(WardenError):
            self.client.resume(
                thread_id,
                approval_id,
                {"reject_all": {"message": "this step was answered before; the repeated resume runs nothing"}},
                reviewer=str(who),
                idempotency_key=f"relay:{approval_id}",
            )


def _args_of(calls: Sequence[Mapping[str, Any]], request: Mapping[str, Any]) -> Dict[str, Any]:
    for call in calls:
        if call.get("id") == request.get("tool_call_id"):
            return dict(call.get("args") or {})
    return {}


def _reason(code: str, message: str) -> ReasonDict:
    return {"code": code, "message": message}


def _already_answered() -> ReasonDict:
    return _reason(
        ALREADY_ANSWERED,
        "this approval was answered before and its calls were handed over then; they are not run again",
    )


def all_denied(
    calls: Sequence[Mapping[str, Any]],
    reason: Union[Reason, ReasonDict, Mapping[str, str]],
    message: Mapping[str, Any],
) -> Result:
    """Every call of the message denied for one reason."""
    if isinstance(reason, Reason):
        first = _reason(reason.code, reason.message)
    else:
        first = _reason(reason["code"], reason.get("message", ""))
    reasons = [first]
    return Result(
        calls=[
            CallResult(
                id=c.get("id"),
                name=str(c.get("name", "")),
                status="denied",
                args=dict(c.get("args") or {}),
                reasons=reasons,
                note=denial_text(str(c.get("name", "")), reasons),
            )
            for c in calls
        ],
        message=dict(message),
    )


def _result(outcome: Mapping[str, Any], sent: Mapping[str, Any]) -> Result:
    """Warden's outcome (or resolution), call by call."""
    calls = []
    for c in outcome.get("calls") or []:
        reasons = list(c.get("reasons") or [])
        status = c["status"] if c["status"] in ("run", "denied") else "denied"
        note = None
        if status == "denied":
            note = _human_rejection(c) or denial_text(c["name"], reasons)
        calls.append(
            CallResult(
                id=c.get("id"),
                name=c["name"],
                status=status,
                args=dict(c.get("args") or {}),
                reasons=reasons,
                note=note,
                decision=c.get("decision"),
            )
        )
    return Result(
        calls=calls,
        message=dict(outcome.get("message") or sent),
        approval_id=outcome.get("approval_id"),
        notices=list(outcome.get("notices") or []),
    )


def _human_rejection(call: Mapping[str, Any]) -> Optional[str]:
    """A human's rejection, in the human's words."""
    if call.get("decision") != "reject":
        return None
    for reason in call.get("reasons") or []:
        if reason.get("code") == codes.APPROVAL_REJECTED:
            return f"The user rejected the tool call '{call['name']}': {reason.get('message', '')}"
    return f"The user rejected the tool call '{call['name']}'."


__all__ = [
    "ADAPTER_FAILED",
    "ALLOWED_DECISIONS",
    "ALREADY_ANSWERED",
    "APPROVAL_PENDING",
    "AnswerError",
    "CallResult",
    "Relay",
    "Result",
    "adapter_failure",
    "all_denied",
    "denial_text",
    "hitl_request",
    "run_id_for",
    "to_resume",
    "unreachable_after",
]
