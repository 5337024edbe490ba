"""A DeerFlow ``GuardrailProvider`` backed by the Warden daemon.

In DeerFlow's ``config.yaml``::

    guardrails:
      enabled: true
      fail_closed: true          # decides only when Warden cannot be reached at all
      provider:
        use: warden.deerflow:WardenProvider
        config:
          url: http://127.0.0.1:8787
          token_env: WARDEN_TOKEN   # a token with relay: true, so that asks reach a human
          # interaction_mode: scheduled   # a deployment that runs unattended
          # timeout: 2.0                  # seconds, once connected
          # connect_timeout: 0.5

Or with Warden inside DeerFlow's process, no daemon at all (needs the native
module, the ``warden-guardrails-native`` wheel): ``config`` instead of ``url``
(exactly one of the two)::

        config:
          config: /etc/deerflow/warden.yaml   # Warden's configuration file
          # data_dir: /var/lib/warden        # instead of the file's (the approval store)
          # inline_budget_ms: 5              # see below

In-process, DeerFlow's async path (``aevaluate``) judges a call on the event
loop itself when the configuration's worst case (the providers' time limits)
is within ``inline_budget_ms`` and the call names no thread; otherwise, and
always over HTTP, on a worker thread. A pause (it writes the approval store)
is always made on a worker thread. See :class:`warden.Warden`.

What it decides, whatever DeerFlow's ``fail_closed`` says:

- Warden's allow is DeerFlow's allow; everything else is a deny, including every
  failure once the request was sent (a reset, a timeout, a closed connection, a
  refused token or role, a thread waiting for a human) and a call the client
  cannot send (``NaN``, a lone surrogate, too large): each with a reason code that
  names the cause. Only when Warden cannot be reached at all (nothing was sent)
  before it answered does it raise, so that DeerFlow's ``fail_closed`` decides
  that case alone: once Warden has asked for a human, or the human has
  answered, an unreachable daemon is a deny (``warden.no_answer``).
- An ask pauses the graph for a human (LangGraph's ``interrupt()``, in the shape
  of LangChain's ``HumanInTheLoopMiddleware``: one action request per call) when
  the run can pause (a checkpointer, a thread id, an attended run); on resume the
  human's decision (LangChain's ``{"decisions": [...]}`` or agent-chat-ui's
  ``[{"type": "accept", ...}]``) is relayed to Warden, naming the human: the
  run's authenticated user (``langgraph_auth_user``, through the ``reviewers``
  setting's mapping of identities to reviewer names where given), else the
  ``reviewer`` setting, never a name the client supplies; the call runs (an
  edit replaces the call's arguments in place), or is denied. In DeerFlow 0.1.7
  the request carries no thread or run id: they come from LangGraph's run config.
- Where nobody can be asked (a scheduled or other unattended run, a subagent, no
  checkpointer) an ask is a deny that tells the agent not to work around it.
- Arguments that contain themselves or nest past Python's recursion limit are
  a deny (``warden.input_too_deep``), like any call the client cannot send;
  anything else that fails inside the provider is a deny naming the exception
  (``warden.adapter_failed``): nothing it raises lets DeerFlow's
  ``fail_closed: false`` run the call.

The run's interaction mode and origin come from the runtime context
(``interaction_mode``/``run_interaction_mode``, ``non_interactive``,
``disable_clarification``, ``channel_name``, ``run_origin``) or from the fixed
``interaction_mode``/``run_origin`` settings; they are sent to Warden when the
token is internal (an agent's token may not set them), and an unattended run is
always told to Warden as one that cannot pause.

DeerFlow's request carries the user's role and ids; Warden believes them only
from a token allowed to assert them (``asserts: [user_role, user_id,
oauth_provider, oauth_id]`` on the token, see docs/daemon.md, "Trust"): with a
plain agent token they are dropped (``warden.context_keys_dropped``), and the
call is judged at the daemon's time, not the request's ``timestamp``.


When DeerFlow is installed its own classes are used; otherwise classes of the
same shape (DeerFlow 0.1.7's), so the provider can be used and tested without it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from . import adapter, codes, graph
from .api import WardenAPI
from .approval import NO_HUMAN_CODES, NO_WORKAROUND, Relay, Result, adapter_failure, run_id_for, unreachable_after
from .client import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_TIMEOUT,
    DEFAULT_TOKEN_ENV,
    Evaluation,
    WardenUnavailable,
    tool_call,
)

# The reason code of a call the adapter denies because the graph holds no
# human, importable from here as before.
from .codes import ASK_UNAVAILABLE as ASK_UNAVAILABLE

logger = logging.getLogger(__name__)

try:  # pragma: no cover - depends on whether DeerFlow is installed
    from deerflow.guardrails.provider import (
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
        """DeerFlow 0.1.7's request; newer releases add fields (read with getattr)."""

        tool_name: str
        tool_input: Dict[str, Any]
        agent_id: Optional[str] = None
        thread_id: Optional[str] = None
        is_subagent: bool = False
        timestamp: str = ""


#: The request's attribution that Warden's context takes, by the same names
#: (newer DeerFlow releases carry them; 0.1.7 carries agent_id and thread_id).
_CONTEXT_FIELDS = ("agent_id", "thread_id", "run_id", "user_id", "user_role", "oauth_provider", "oauth_id")


def to_tool_call(request: Any, context: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """A Warden request body from a DeerFlow ``GuardrailRequest`` (or any object
    with the same attributes); ``context`` adds to (never replaces) what the
    request carries."""
    ctx: Dict[str, Any] = dict(context or {})
    for name in _CONTEXT_FIELDS:
        value = getattr(request, name, None)
        if value not in (None, ""):
            ctx[name] = value
    ctx["is_subagent"] = bool(getattr(request, "is_subagent", False)) or bool(ctx.get("is_subagent"))
    timestamp = getattr(request, "timestamp", None)
    if timestamp:
        ctx["timestamp"] = timestamp
    tool_input = getattr(request, "tool_input", None)
    return tool_call(
        str(getattr(request, "tool_name", "")),
        tool_input if tool_input is not None else {},
        tool_call_id=getattr(request, "tool_call_id", None) or None,
        context=ctx,
    )


def to_decision(evaluation: Evaluation) -> GuardrailDecision:
    """DeerFlow's decision from Warden's: ``allow`` only for an allow. Where no
    human can be asked, the message tells the agent not to work around it."""
    metadata = dict(evaluation.metadata)
    metadata["warden"] = {
        "verdict": evaluation.verdict,
        "decided_by": evaluation.decided_by,
        "generation": evaluation.generation,
        "interaction_mode": evaluation.interaction_mode,
        "decision_id": evaluation.decision_id,
    }
    reasons = [GuardrailReason(code=r.code, message=r.message) for r in evaluation.reasons]
    if evaluation.verdict != "allow" and reasons and reasons[0].code in NO_HUMAN_CODES:
        # DeerFlow appends ". Choose an alternative approach." to the message.
        text = f"{reasons[0].message}. {NO_WORKAROUND}".rstrip(".")
        reasons[0] = GuardrailReason(code=reasons[0].code, message=text)
    return GuardrailDecision(
        allow=evaluation.verdict == "allow", reasons=reasons, policy_id=evaluation.policy_id, metadata=metadata
    )


def _decision_of(result: Result, evaluation: Evaluation) -> GuardrailDecision:
    """DeerFlow's decision for the one call of a relayed pause."""
    call = result.calls[0] if result.calls else None
    if call is not None and call.runs:
        return GuardrailDecision(
            allow=True,
            reasons=[GuardrailReason(code=r["code"], message=r.get("message", "")) for r in call.reasons],
            metadata={"warden": {"verdict": "allow", "decision": call.decision, "approval_id": result.approval_id}},
        )
    reasons = call.reasons if call is not None else []
    first = reasons[0] if reasons else {"code": codes.DENIED, "message": "blocked by guardrail policy"}
    message = first.get("message", "")
    if call is not None and call.decision == "reject" and call.note is not None:
        message = call.note  # the human's words
    return GuardrailDecision(
        allow=False,
        reasons=[GuardrailReason(code=first["code"], message=message)]
        + [GuardrailReason(code=r["code"], message=r.get("message", "")) for r in reasons[1:]],
        metadata={"warden": {"verdict": "deny", "decision": call.decision if call else None}},
    )


class WardenProvider:
    """DeerFlow's ``GuardrailProvider`` protocol over the Warden daemon."""

    name = "warden"

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        token_env: str = DEFAULT_TOKEN_ENV,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        interaction_mode: Optional[str] = None,
        run_origin: Optional[str] = None,
        pause_on_ask: bool = True,
        reviewer: Optional[str] = None,
        reviewers: Optional[Mapping[str, str]] = None,
        framework: Optional[str] = None,
        client: Optional[WardenAPI] = None,
        config: Optional[str] = None,
        data_dir: Optional[str] = None,
        inline_budget_ms: Optional[float] = None,
        **unknown: Any,
    ):
        if unknown:
            # A misspelt safety setting (`interaction-mode`) must not silently
            # do nothing. DeerFlow itself passes only `framework`.
            raise ValueError(adapter.unknown_settings("WardenProvider", WardenProvider.__init__, sorted(unknown)))
        self.framework = framework
        # Settings first: a wrong one is reported before anything is loaded.
        self.interaction_mode = graph.check_mode("WardenProvider", interaction_mode)
        self.client: WardenAPI = adapter.warden_for(
            "WardenProvider",
            client=client,
            url=url,
            config=config,
            data_dir=data_dir,
            token=token,
            token_env=token_env,
            timeout=timeout,
            connect_timeout=connect_timeout,
            inline_budget_ms=inline_budget_ms,
        )
        self.run_origin = run_origin
        self.pause_on_ask = pause_on_ask
        #: Who answers a pause where the run has no authenticated user (a
        #: single-user deployment), and the reviewer name of each
        #: authenticated identity: see :func:`warden.graph.reviewer_of`.
        self.reviewer = reviewer
        self.reviewers = dict(reviewers or {})

    # -- DeerFlow's protocol ------------------------------------------------

    def evaluate(self, request: Any) -> GuardrailDecision:
        """Warden's decision on DeerFlow's request. Raises only when Warden
        cannot be reached at all (DeerFlow's ``fail_closed`` decides that) and
        for LangGraph's interrupt (a pause); any other failure, whatever raised
        it, is a deny naming the cause (``warden.adapter_failed``), since
        DeerFlow with ``fail_closed: false`` runs the call of a provider that
        raises."""
        try:
            return self._evaluate(request)
        except Exception as err:  # every failure is a deny
            return _failed(err)

    async def aevaluate(self, request: Any) -> GuardrailDecision:
        """:meth:`evaluate` for DeerFlow's async path. Where the client judges
        on the event loop (Warden in this process, within its inline budget:
        :meth:`~warden.api.WardenAPI.judges_inline`), the call is judged there,
        in the graph task's own context; a pause, which writes the approval
        store, goes to a worker thread. Otherwise the whole call runs on a
        worker thread. Either thread starts with a copy of the task's context,
        so LangGraph's ``interrupt()`` works from it. A failure to get there
        (no thread to be had) is a deny like any other."""
        try:
            if not _judges_inline(self.client):
                return await asyncio.to_thread(self.evaluate, request)
            run, context, can_pause, call = self._prepare(request)
            if not _judges_inline(self.client, call):
                # It names a thread, whose pause is looked up in the store.
                return await asyncio.to_thread(self._judge, request, run, context, can_pause, call)
            evaluation = self._decide(call)
            if self._pauses(request, run, can_pause, evaluation):
                assert run is not None  # a run that can pause
                return await asyncio.to_thread(self._pause, request, run, context, evaluation)
            return _answer(evaluation, can_pause)
        except Exception as err:  # every failure is a deny
            return _failed(err)

    def _evaluate(self, request: Any) -> GuardrailDecision:
        return self._judge(request, *self._prepare(request))

    def _judge(
        self,
        request: Any,
        run: Optional[graph.Run],
        context: Dict[str, Any],
        can_pause: bool,
        call: Dict[str, Any],
    ) -> GuardrailDecision:
        evaluation = self._decide(call)
        if self._pauses(request, run, can_pause, evaluation):
            assert run is not None  # a run that can pause
            return self._pause(request, run, context, evaluation)
        return _answer(evaluation, can_pause)

    def _decide(self, call: Dict[str, Any]) -> Evaluation:
        """Warden's evaluation. An unreachable Warden raises (DeerFlow's
        ``fail_closed`` decides), except when the task holds a human's answer:
        it runs again on resume and asks Warden first, and no daemon gone since
        may turn that answer (a reject) into a run."""
        try:
            return self.client.decide(call)
        except WardenUnavailable as err:
            if not graph.resuming():
                raise
            reason = unreachable_after("a human answered", err)
            return Evaluation.local_deny(reason["code"], reason["message"])

    def _prepare(self, request: Any) -> Tuple[Optional[graph.Run], Dict[str, Any], bool, Dict[str, Any]]:
        """The graph run the call is made in, the context it adds, whether it
        can pause for a human, and Warden's request body."""
        run = graph.current_run()
        context, can_pause = graph.run_context(
            run, self.client.is_internal, self.interaction_mode, self.run_origin, self.pause_on_ask
        )
        if run is not None and run.thread_id:
            context["thread_id"] = run.thread_id
            run_id = run.context.get("run_id")
            if isinstance(run_id, str) and run_id:
                context["run_id"] = run_id
        return run, context, can_pause, to_tool_call(request, context)

    def _pauses(self, request: Any, run: Optional[graph.Run], can_pause: bool, evaluation: Evaluation) -> bool:
        """Whether Warden's answer pauses the graph for a human: an ask in a
        run that can pause, or, when the graph runs the call again on resume,
        this call's own pause."""
        if not can_pause:
            return False
        if evaluation.verdict == "ask":
            return True
        return _pending(evaluation) and evaluation.metadata.get("run_id") == self._run_id(request, run)

    @staticmethod
    def _run_id(request: Any, run: Optional[graph.Run]) -> str:
        """The same for this call each time its graph task runs (it runs again on resume)."""
        ns = run.checkpoint_ns if run else ""
        return run_id_for("deerflow", ns, getattr(request, "tool_name", ""), getattr(request, "tool_input", None))

    # -- a human's answer ----------------------------------------------------

    def _pause(
        self, request: Any, run: graph.Run, context: Dict[str, Any], evaluation: Evaluation
    ) -> GuardrailDecision:
        from langgraph.types import interrupt

        run_id = self._run_id(request, run)
        call_id = getattr(request, "tool_call_id", None) or f"call_{run_id[4:28]}"
        tool_input = getattr(request, "tool_input", None)
        message = {"tool_calls": [{"id": call_id, "name": str(request.tool_name), "args": tool_input or {}}]}
        # The submission must be the same bytes when the task runs again.
        stable = {k: v for k, v in context.items() if k not in ("thread_id", "run_id", "timestamp")}
        for name in _CONTEXT_FIELDS[2:]:
            value = getattr(request, name, None)
            if value not in (None, ""):
                stable.setdefault(name, value)
        reviewer = graph.reviewer_of(run, self.reviewer, self.reviewers)
        try:
            # A run that can pause has a thread (graph.Run.can_resume).
            result = Relay(self.client, interrupt).judge(str(run.thread_id), run_id, message, stable, reviewer)
        except WardenUnavailable as err:
            # Warden has answered ask: a daemon gone before the pause was
            # recorded is a deny, not DeerFlow's fail_closed to decide.
            reason = unreachable_after("it asked for a human", err)
            return to_decision(Evaluation.local_deny(reason["code"], reason["message"]))
        call = result.calls[0] if result.calls else None
        if call is not None and call.runs and call.args != (tool_input or {}) and isinstance(tool_input, dict):
            # An edit: DeerFlow hands the tool call's own argument dict to the
            # provider and runs the call with it afterwards.
            tool_input.clear()
            tool_input.update(call.args)
        return _decision_of(result, evaluation)


def _failed(err: Exception) -> GuardrailDecision:
    """The deny for a failure inside the provider, naming it. An unreachable
    Warden (DeerFlow's ``fail_closed`` decides) and LangGraph's own control
    flow (a pause) are raised again."""
    if isinstance(err, WardenUnavailable) or graph.passes_through(err):
        raise err
    reason = adapter_failure("the Warden provider", err)
    return to_decision(Evaluation.local_deny(reason["code"], reason["message"]))


def _judges_inline(client: WardenAPI, call: Optional[Mapping[str, Any]] = None) -> bool:
    """Whether the client judges ``call`` on the event loop. A client of the
    caller's own written before :class:`WardenAPI` had ``judges_inline``
    judges off the loop, as every client did then."""
    judges = getattr(client, "judges_inline", None)
    return bool(judges(call)) if judges is not None else False


def _pending(evaluation: Evaluation) -> bool:
    """Whether Warden denied the call because its thread waits for a human."""
    return (
        evaluation.verdict == "deny"
        and bool(evaluation.reasons)
        and evaluation.reasons[0].code == codes.APPROVAL_PENDING
    )


def _answer(evaluation: Evaluation, can_pause: bool) -> GuardrailDecision:
    """DeerFlow's decision where nothing pauses: an ask in a run that cannot
    pause is a deny (the daemon was told; this covers a mode the token could
    not send)."""
    if evaluation.verdict == "ask" and not can_pause:
        return to_decision(_no_human(evaluation))
    return to_decision(evaluation)


def _no_human(evaluation: Evaluation) -> Evaluation:
    return Evaluation.local_deny(
        ASK_UNAVAILABLE,
        "the call needs a human's approval, but nobody can be asked in this run: denied",
        asked=[r.code for r in evaluation.reasons],
    )


__all__ = [
    "GuardrailDecision",
    "GuardrailReason",
    "GuardrailRequest",
    "WardenProvider",
    "to_decision",
    "to_tool_call",
]
