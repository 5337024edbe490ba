"""Warden inside DeepCode (PyPI ``deepcode-hku`` 2.3): a ``permission_checker``
for DeepCode's agent runner.

    from warden.deepcode import WardenChecker

    checker = WardenChecker(config="warden.yaml", workspace=ws, tools=registry)   # Warden in this process
    # or: WardenChecker(url="http://127.0.0.1:8787", token_env="WARDEN_TOKEN", ...)
    spec = AgentRunSpec(..., tools=registry, permission_checker=checker)    # async; ``checker.check`` is sync

DeepCode calls ``checker(tool_name, arguments)`` before each tool call and
reads ``(decision, reason)``. This checker answers only ``"allow"`` or
``"deny"``, never ``"ask"``: DeepCode hands an ask to its
``permission_request_hook`` and to ``PermissionRequest`` command hooks (a
workspace's ``.claude/settings.json`` can hold one), which may turn it into an
allow without a human. A Warden ask is resolved here, through Warden's approval
store: the call is paused (it shows in the console and on the approvals API),
the checker waits, at most ``approval_timeout`` seconds, for a human's answer
and returns ``allow`` only for a human's approval (naming the human), else
``deny``. Where nobody can be asked (a headless run, ``full_auto``, a
subagent) an ask is a deny.

Whatever fails once Warden was asked (the daemon unreachable, a reset, a
refused token, an exception anywhere in the checker) is a deny naming its
cause: the checker never raises, so DeepCode's own fail-closed message never
hides the cause either.

DeepCode's run maps to Warden's interaction mode (``run_mode``, ``headless``):
an attended ``default`` or ``plan`` run is ``interactive``; a ``headless`` run
(``deepcode exec``, no approver) or a ``full_auto`` one is ``autonomous`` and
cannot ask. ``plan`` also keeps DeepCode's read-only bound: a tool that is not
read-only is denied (``perm.read_only_mode``) before Warden is asked.
``interaction_mode`` fixes Warden's mode instead (``scheduled`` for
automations). See docs/deepcode.md.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import time
import uuid
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import adapter, codes, graph
from .answers import ApprovalView, ReasonDict
from .api import WardenAPI
from .approval import NO_HUMAN_CODES, NO_WORKAROUND, adapter_failure, denial_text, unreachable_after
from .client import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_TIMEOUT,
    DEFAULT_TOKEN_ENV,
    Evaluation,
    WardenError,
    WardenUnavailable,
    refusal_deny,
    tool_call,
)

#: DeepCode's run modes (``core/harness/permissions.py`` ``PermissionMode``).
RUN_MODES = ("default", "plan", "full_auto")
#: How long an ask waits for a human by default, in seconds.
DEFAULT_APPROVAL_TIMEOUT = 300.0
#: How often the approval store is read while a call waits for a human.
DEFAULT_POLL_INTERVAL = 0.25
#: What DeepCode treats as read-only without its tool registry: its engine's
#: list (``_READ_ONLY_TOOLS``) and its coding tools' read-only ones.
DEEPCODE_READ_ONLY = frozenset(
    {
        "read_file",
        "read_multiple_files",
        "read_code_mem",
        "get_file_structure",
        "search_code",
        "search_code_references",
        "get_indexes_overview",
        "get_operation_history",
        "grep",
        "glob",
        "ls",
        "list_dir",
        "web_fetch",
        "update_plan",
        "read",
        "skill",
    }
)
#: The lines of an ``apply_patch`` envelope that name a file it touches.
_PATCH_PATH = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.MULTILINE)
_STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}

Answer = Tuple[str, str]


@dataclass(frozen=True)
class RunMode:
    """DeepCode's run, as Warden is told about it."""

    #: Warden's interaction mode for the run.
    interaction_mode: str
    #: Whether a human can answer an ask in this run.
    can_ask: bool
    #: Whether only read-only tools may run (DeepCode's ``plan``).
    read_only: bool


def run_mode_of(run_mode: str, headless: bool, interaction_mode: Optional[str] = None) -> RunMode:
    """Warden's interaction mode for a DeepCode run (docs/deepcode.md, "Modes")."""
    unattended = headless or run_mode == "full_auto"
    mode = interaction_mode or ("autonomous" if unattended else "interactive")
    return RunMode(
        interaction_mode=mode, can_ask=mode == "interactive" and not unattended, read_only=run_mode == "plan"
    )


def patch_paths(patch: Any) -> List[str]:
    """The files an ``apply_patch`` envelope adds, updates, deletes or moves to."""
    return _PATCH_PATH.findall(patch) if isinstance(patch, str) else []


class WardenChecker:
    """DeepCode's ``permission_checker`` backed by Warden: ``await
    checker(name, arguments)`` (or ``checker.check(name, arguments)``, which
    blocks while a human is asked) → ``("allow" | "deny", reason)``."""

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        token_env: str = DEFAULT_TOKEN_ENV,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        config: Optional[str] = None,
        data_dir: Optional[str] = None,
        client: Optional[WardenAPI] = None,
        run_mode: str = "default",
        headless: bool = False,
        interaction_mode: Optional[str] = None,
        is_subagent: bool = False,
        thread_id: Optional[str] = None,
        agent_id: str = "deepcode",
        workspace: Optional[Any] = None,
        tools: Optional[Any] = None,
        approval_timeout: float = DEFAULT_APPROVAL_TIMEOUT,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        **unknown: Any,
    ):
        if unknown:
            # A misspelt safety setting (`run-mode`, `headles`) must not silently do nothing.
            raise ValueError(adapter.unknown_settings("WardenChecker", WardenChecker.__init__, sorted(unknown)))
        if run_mode not in RUN_MODES:
            raise ValueError(f"WardenChecker: run_mode '{run_mode}' is not one of {', '.join(RUN_MODES)}")
        if not isinstance(headless, bool):
            raise ValueError(f"WardenChecker: headless must be true or false, not {headless!r}")
        for name, value in (("approval_timeout", approval_timeout), ("poll_interval", poll_interval)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"WardenChecker: {name} must be a positive number of seconds, not {value!r}")
        self.mode = run_mode_of(run_mode, headless, graph.check_mode("WardenChecker", interaction_mode))
        if is_subagent:
            self.mode = replace(self.mode, can_ask=False)  # a subagent's asks are denies, as Warden's are
        self.client: WardenAPI = adapter.warden_for(
            "WardenChecker",
            client=client,
            url=url,
            config=config,
            data_dir=data_dir,
            token=token,
            token_env=token_env,
            timeout=timeout,
            connect_timeout=connect_timeout,
        )
        self.is_subagent = is_subagent
        #: The session's id: its calls' `run_id` in Warden's log, and the
        #: stem of its pauses' threads (:meth:`pause_thread`).
        self.thread_id = thread_id or f"deepcode-{uuid.uuid4().hex[:16]}"
        self._asks = itertools.count(1)
        self.agent_id = agent_id
        self.workspace = str(workspace) if workspace is not None else None
        #: DeepCode's ToolRegistry: calls are judged with the parameters it
        #: will run them with (it casts them after the check).
        self.tools = tools
        read_only = getattr(tools, "read_only_tool_names", None)
        self.read_only_tools = DEEPCODE_READ_ONLY | frozenset(read_only or ())
        self.approval_timeout = float(approval_timeout)
        self.poll_interval = float(poll_interval)
        self._context_cache: Optional[Dict[str, Any]] = None

    def pause_thread(self, n: int) -> str:
        """The thread of the session's ``n``-th ask (from 1). Each ask has a
        thread of its own: Warden holds one pause per thread, so an unanswered
        pause does not refuse the session's later asks, nor one of a batch
        DeepCode checks concurrently the others."""
        return f"{self.thread_id}-ask-{n}"

    # -- DeepCode's seam ------------------------------------------------------

    async def __call__(self, tool_name: str, arguments: Any) -> Answer:
        """The async checker: judging within the in-process budget happens on
        the event loop, anything that may wait (the network, a human) on a
        worker thread. Never raises."""
        try:
            judges_inline = getattr(self.client, "judges_inline", None)
            if judges_inline is None or not judges_inline():
                return await asyncio.to_thread(self.check, tool_name, arguments)
            calls = self._calls(tool_name, arguments)
            if isinstance(calls, tuple):
                return calls
            for call in calls:
                if not judges_inline(call):
                    return await asyncio.to_thread(self.check, tool_name, arguments)
            evaluations = [self._decide(c) for c in calls]
            answer = self._answer(tool_name, evaluations)
            if answer is not None:
                return answer
            return await asyncio.to_thread(self._ask, tool_name, arguments, calls, evaluations)
        except Exception as err:  # every failure is a deny
            return _failed(tool_name, err)

    def check(self, tool_name: str, arguments: Any) -> Answer:
        """The sync checker (it blocks the caller while a human is asked). Never raises."""
        try:
            calls = self._calls(tool_name, arguments)
            if isinstance(calls, tuple):
                return calls
            evaluations = [self._decide(c) for c in calls]
            answer = self._answer(tool_name, evaluations)
            if answer is not None:
                return answer
            return self._ask(tool_name, arguments, calls, evaluations)
        except Exception as err:  # every failure is a deny
            return _failed(tool_name, err)

    # -- judging --------------------------------------------------------------

    def _calls(self, tool_name: str, arguments: Any) -> Any:
        """Warden's request bodies for one DeepCode call (an ``apply_patch``
        adds an ``edit`` of every file its envelope touches), or a deny."""
        params = arguments
        if self.tools is not None and callable(getattr(self.tools, "prepare_call", None)):
            _tool, params, error = self.tools.prepare_call(tool_name, arguments)
            if error:
                return _deny(codes.INVALID_TOOL_INPUT, f"DeepCode would not run this call: {error}", tool_name)
        if self.mode.read_only and tool_name not in self.read_only_tools:
            return _deny(
                codes.READ_ONLY_MODE,
                f"DeepCode runs in plan mode: '{tool_name}' is not a read-only tool, so it may not run",
                tool_name,
            )
        context = self._context()
        calls = [tool_call(str(tool_name), params if params is not None else {}, context=context)]
        if tool_name == "apply_patch" and isinstance(params, Mapping):
            calls += [tool_call("edit", {"file_path": p}, context=context) for p in patch_paths(params.get("patch"))]
        return calls

    def _context(self) -> Dict[str, Any]:
        """The context of every call of the session (made once). The session
        is the ``run_id``, not the ``thread_id``: the checker itself holds a
        call while it waits for a human, so a pause must not also stop the
        session's other calls (a thread waiting for a human denies them, and
        until ``hitl_approval.expire_after`` after an unanswered one), and a
        call naming no thread is judged without reading the approval store."""
        if self._context_cache is None:
            context: Dict[str, Any] = {"run_id": self.thread_id, "agent_id": self.agent_id}
            if self.workspace:
                context["cwd"] = self.workspace
            if self.is_subagent:
                context["is_subagent"] = True
            if not self.mode.can_ask:
                context["can_resume"] = False  # any caller may say so: it only turns asks into denies
            if self.client.is_internal():  # the mode keys are believed from internal callers only
                context["interaction_mode"] = self.mode.interaction_mode
                if not self.mode.can_ask:
                    context["non_interactive"] = True
            self._context_cache = context
        return self._context_cache

    def _decide(self, call: Mapping[str, Any]) -> Evaluation:
        """Warden's evaluation; an unreachable Warden is a deny (DeepCode has no fail-open switch to leave it to)."""
        try:
            return self.client.decide(call)
        except WardenUnavailable as err:
            return Evaluation.local_deny(codes.NO_ANSWER, f"Warden could not be reached ({err}); the call is denied")

    def _answer(self, tool_name: str, evaluations: Sequence[Evaluation]) -> Optional[Answer]:
        """DeepCode's answer where no human is asked: the strictest evaluation
        wins; None for an ask a human can answer."""
        if len(evaluations) == 1:
            worst = evaluations[0]
        else:  # the strictest wins; of two denies, the policy's own reason over "nobody can be asked"
            worst = max(
                evaluations, key=lambda e: (_STRICTNESS.get(e.verdict, 2), _first(e)["code"] not in NO_HUMAN_CODES)
            )
        if worst.verdict == "allow":
            return ("allow", _allowed(worst))
        if worst.verdict == "ask" and self.mode.can_ask:
            return None
        if worst.verdict == "ask":
            why = "the call needs a human's approval, but nobody can be asked in this run (headless or unattended)"
            return _deny(codes.ASK_UNAVAILABLE, f"{why}: {_first(worst)['message']}", tool_name)
        return ("deny", denial_text(tool_name, _reasons(worst)))

    # -- a human's answer -----------------------------------------------------

    def _ask(
        self, tool_name: str, arguments: Any, calls: Sequence[Mapping[str, Any]], evaluations: Sequence[Evaluation]
    ) -> Answer:
        """Pauses the call in Warden's approval store and waits for a human's
        answer, at most ``approval_timeout`` seconds. Allow only for an
        approval; an edit replaces DeepCode's arguments in place."""
        run_id = f"deepcode-{uuid.uuid4().hex}"
        ids = [f"{run_id[9:25]}-{i}" for i in range(len(calls))]
        message = {
            "tool_calls": [{"id": i, "name": c["tool_name"], "args": c["tool_input"]} for i, c in zip(ids, calls)]
        }
        context = {k: v for k, v in calls[0].get("context", {}).items() if k not in ("thread_id", "run_id")}
        try:
            thread = self.pause_thread(next(self._asks))
            outcome = self.client.submit_tool_calls(thread, run_id, {"message": message, "context": context})
        except WardenError as err:
            return _refused(tool_name, err, "it asked for a human")
        if outcome.get("run_state") != "waiting_for_input":
            return self._settled(tool_name, arguments, outcome.get("calls") or [], None, ids)
        approval_id = str(outcome.get("approval_id"))
        deadline = time.monotonic() + self.approval_timeout
        while True:
            view = self._view(tool_name, thread, approval_id)
            if isinstance(view, tuple):
                return view
            resolution = view.get("resolution") if view is not None else None
            if resolution is not None:
                return self._settled(tool_name, arguments, resolution.get("calls") or [], resolution, ids)
            left = deadline - time.monotonic()
            if left <= 0:
                return _deny(
                    codes.APPROVAL_EXPIRED,
                    f"nobody answered within {self.approval_timeout:g} s (approval {approval_id}): the call is "
                    "denied, and a later answer does not run it",
                    tool_name,
                )
            time.sleep(min(self.poll_interval, left))

    def _view(self, tool_name: str, thread: str, approval_id: str) -> Any:
        """The approval as the store holds it now; a deny where the store cannot be read."""
        try:
            views: List[ApprovalView] = self.client.approvals(thread, include_resolved=True)
        except WardenError as err:
            return _refused(tool_name, err, "it asked for a human")
        for view in views:
            if view.get("approval_id") == approval_id:
                return view
        return None

    def _settled(
        self,
        tool_name: str,
        arguments: Any,
        outcomes: Sequence[Mapping[str, Any]],
        resolution: Optional[Mapping[str, Any]],
        ids: Sequence[str],
    ) -> Answer:
        """DeepCode's answer once the pause is resolved: allow only when every
        call of it runs, the edits of a patch's files left as asked."""
        by_id = {o.get("id"): o for o in outcomes}
        ours = [by_id.get(i) for i in ids]
        for outcome in ours:
            if outcome is None or outcome.get("status") != "run":
                return self._rejected(tool_name, outcome, resolution)
        first = ours[0]
        assert first is not None  # every call runs
        for outcome, sent in zip(ours[1:], ids[1:]):
            if outcome is not None and outcome.get("decision") == "edit":
                return _deny(
                    codes.INVALID_ANSWER,
                    f"an edit of a patched file's path ({sent}) cannot be applied to the patch; edit the patch instead",
                    tool_name,
                )
        args = first.get("args")
        if first.get("decision") == "edit" and isinstance(arguments, dict) and isinstance(args, dict):
            # DeepCode runs the call with the dict it handed to the checker.
            arguments.clear()
            arguments.update(args)
        who = (resolution or {}).get("reviewer")
        if who:
            return ("allow", f"Warden: approved by {who}")
        return ("allow", _allowed_codes([r.get("code", "") for r in first.get("reasons") or []]))

    def _rejected(
        self, tool_name: str, outcome: Optional[Mapping[str, Any]], resolution: Optional[Mapping[str, Any]]
    ) -> Answer:
        reasons: List[ReasonDict] = list((outcome or {}).get("reasons") or [])
        who = (resolution or {}).get("reviewer")
        if outcome is not None and outcome.get("decision") == "reject" and who:
            said = next((r.get("message", "") for r in reasons if r.get("code") == codes.APPROVAL_REJECTED), "")
            return ("deny", f"Warden: {who} rejected tool '{tool_name}' ({codes.APPROVAL_REJECTED}): {said}")
        if not reasons:
            reasons = [{"code": codes.DENIED, "message": "the paused call does not run"}]
        return ("deny", denial_text(tool_name, reasons))


# -- answers --------------------------------------------------------------------


def _deny(code: str, message: str, tool_name: str) -> Answer:
    return ("deny", denial_text(tool_name, [{"code": code, "message": message}]))


def _reasons(evaluation: Evaluation) -> List[ReasonDict]:
    return [{"code": r.code, "message": r.message} for r in evaluation.reasons]


def _first(evaluation: Evaluation) -> ReasonDict:
    reasons = _reasons(evaluation)
    return reasons[0] if reasons else {"code": codes.DENIED, "message": ""}


def _allowed(evaluation: Evaluation) -> str:
    return _allowed_codes([r.code for r in evaluation.reasons])


def _allowed_codes(names: Sequence[str]) -> str:
    return f"Warden allowed ({', '.join(n for n in names if n) or codes.ALLOWED})"


def _refused(tool_name: str, err: WardenError, after: str) -> Answer:
    """A failure once Warden answered ask: a deny naming it."""
    if isinstance(err, WardenUnavailable):
        reason = unreachable_after(after, err)
    else:
        first = refusal_deny(err).reasons[0]
        reason = {"code": first.code, "message": first.message}
    return ("deny", denial_text(tool_name, [reason]))


def _failed(tool_name: Any, err: Exception) -> Answer:
    """Any failure inside the checker: a deny naming it."""
    try:
        return ("deny", denial_text(str(tool_name), [adapter_failure("the Warden checker", err)]))
    except Exception:  # a tool name whose str() raises
        return ("deny", f"Warden: the checker failed ({type(err).__name__}); the call is denied. {NO_WORKAROUND}")


__all__ = ["DEEPCODE_READ_ONLY", "RUN_MODES", "RunMode", "WardenChecker", "patch_paths", "run_mode_of"]
