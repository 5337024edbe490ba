"""Warden inside this Python process: :class:`Warden`, over the native module
``warden._native`` (the ``warden-guardrails-native`` wheel, built from Warden's
Rust core with PyO3).

It answers as the daemon does, through the same methods as
:class:`warden.WardenClient`, so that a harness switches between the two by
changing the line that makes one::

    warden = WardenClient("http://127.0.0.1:8787", token_env="WARDEN_TOKEN")   # the daemon
    warden = Warden.from_config("warden.yaml")                                  # in-process

The same :class:`~warden.client.Evaluation` comes back, with the daemon's
fields; a request the daemon would refuse raises the same
:class:`~warden.client.WardenHTTPError` (status, code, message, details); a
call whose arguments JSON cannot carry is the same deny. What differs: no
network, so nothing raises :class:`~warden.client.WardenUnavailable`; no
decision log, so ``decision_id`` is ``None``; and the caller is this process,
trusted as an internal caller that relays a named human's answers (see the
package README, "In-process").

The ``a*`` methods judge a call on the event loop itself, with no hop to a
thread, when nothing can keep them there long: the configuration's worst case
(:attr:`Warden.worst_case_ms`, from the providers' and the classifier's time
limits) is within :attr:`Warden.inline_budget_ms`, and the call names no thread
(which would read, and may write, the approval store). Otherwise they judge on
a worker thread, as before.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
from collections import abc
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TypeVar, Union

from .answers import (
    ApprovalView,
    GateOutcome,
    Grant,
    Health,
    InteractionReport,
    ProviderList,
    ReloadReport,
    Resolution,
)
from .client import (
    DEFAULT_MAX_REQUEST_BYTES,
    Evaluation,
    WardenError,
    WardenHTTPError,
    WardenUnsendable,
    refusal_deny,
)
from .encoding import UnencodableInput, encode, unencodable_message

try:
    from . import _native
except ImportError as err:  # pragma: no cover - depends on the installation
    raise ImportError(
        "warden.Warden runs Warden's Rust core in this process and needs the native module "
        "warden._native, which is not installed: `pip install warden-guardrails-native` "
        "(from the repository: scripts/build-python-native). The HTTP client, "
        "warden.WardenClient, works without it."
    ) from err

PathLike = Union[str, "os.PathLike[str]"]

#: The keys of a ``POST /v1/evaluate`` body; a call with others is read as the
#: daemon reads a body (and refused as it refuses one).
_CALL_KEYS = frozenset(("tool_name", "tool_input", "tool_call_id", "context"))

#: How long, at most, the ``a*`` methods may keep the event loop judging a call
#: (milliseconds): a configuration whose worst case is longer is judged on a
#: worker thread. One provider with ``timeout_ms: 1`` and ``configure_timeout_ms: 1``
#: fits (its worst case is 5 ms: see :attr:`Warden.worst_case_ms`); the shipped
#: limits (50-100 ms a call, 2 s to configure) do not.
DEFAULT_INLINE_BUDGET_MS = 5.0

T = TypeVar("T")


class WardenConfigError(WardenError, ValueError):
    """The configuration was refused: what (``reason``) and where (``file``,
    ``key`` such as ``guardrails.providers[0].limits.fuel``, ``line``)."""

    def __init__(
        self,
        message: str,
        file: Optional[str] = None,
        key: Optional[str] = None,
        reason: str = "",
        line: Optional[int] = None,
        column: Optional[int] = None,
    ):
        super().__init__(message)
        self.file = file
        self.key = key
        self.reason = reason
        self.line = line
        self.column = column


def _api_error(err: Exception) -> WardenHTTPError:
    status, code, message, details = err.args
    return WardenHTTPError(status, code, message, details)


def _load(**options: Any) -> _native.Core:
    try:
        return _native.Core.load(**options)
    except _native.ConfigError as err:
        raise WardenConfigError(*err.args) from None


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"Warden: {name} must be True or False, not {value!r}")
    return value


def _budget(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"Warden: inline_budget_ms must be a number of milliseconds, 0 or more, not {value!r}")
    return float(value)


class Warden:
    """Warden's core in this process. Make one with :meth:`from_config`,
    :meth:`from_string` or :meth:`from_dict`; thread-safe (the pipeline runs
    without the GIL, so threads judge calls at once).

    ``data_dir`` overrides the configuration's (the approval store lives
    there). ``internal=False`` judges calls as an agent's token would (the
    interaction keys and attribution fields of a call's context are then
    dropped); ``principal`` names this process's pauses and grants (default
    ``local``, the command line's). ``inline_budget_ms`` bounds how long the
    ``a*`` methods may judge on the event loop itself (see the module; 0: never).
    ``decision_log=True`` writes every decision to the decision log the
    configuration's ``decision_log:`` section describes, in the data directory,
    with the daemon's writer (hash chain, checkpoints, rotation): the lines
    ``warden log verify`` checks (:attr:`decision_log_path`,
    :meth:`flush_decision_log`)."""

    def __init__(self, core: _native.Core, *, inline_budget_ms: float = DEFAULT_INLINE_BUDGET_MS):
        self._core = core
        self._evaluate = core.evaluate
        self.inline_budget_ms = inline_budget_ms

    # -- making one ------------------------------------------------------------

    @classmethod
    def from_config(
        cls,
        path: PathLike,
        *,
        data_dir: Optional[PathLike] = None,
        internal: bool = True,
        principal: Optional[str] = None,
        inline_budget_ms: float = DEFAULT_INLINE_BUDGET_MS,
        decision_log: bool = False,
    ) -> Warden:
        """Loads a configuration file (``warden.yaml``), as ``warden serve --config`` does."""
        core = _load(
            path=os.fspath(path),
            data_dir=_path(data_dir),
            internal=internal,
            principal=principal,
            decision_log=_flag("decision_log", decision_log),
        )
        return cls(core, inline_budget_ms=inline_budget_ms)

    @classmethod
    def from_string(
        cls,
        text: str,
        base_dir: Optional[PathLike] = None,
        *,
        data_dir: Optional[PathLike] = None,
        internal: bool = True,
        principal: Optional[str] = None,
        inline_budget_ms: float = DEFAULT_INLINE_BUDGET_MS,
        decision_log: bool = False,
    ) -> Warden:
        """Loads configuration text (YAML); relative paths in it start at
        ``base_dir`` (default: the working directory)."""
        if not isinstance(text, str):
            raise TypeError(f"Warden.from_string: the configuration must be a str, not {type(text).__name__}")
        return cls(
            _load(
                text=text,
                name="<string>",
                base_dir=_path(base_dir),
                data_dir=_path(data_dir),
                internal=internal,
                principal=principal,
                decision_log=_flag("decision_log", decision_log),
            ),
            inline_budget_ms=inline_budget_ms,
        )

    @classmethod
    def from_dict(
        cls,
        config: Mapping[str, Any],
        base_dir: Optional[PathLike] = None,
        *,
        data_dir: Optional[PathLike] = None,
        internal: bool = True,
        principal: Optional[str] = None,
        inline_budget_ms: float = DEFAULT_INLINE_BUDGET_MS,
        decision_log: bool = False,
    ) -> Warden:
        """Loads a configuration given as the YAML file's data (a dict)."""
        if not isinstance(config, Mapping):
            raise TypeError(f"Warden.from_dict: the configuration must be a dict, not {type(config).__name__}")
        try:
            # JSON is YAML: the same strict reader, key paths and all. One key
            # a line, so that an error's line says which key.
            text = json.dumps(dict(config), indent=1, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise WardenConfigError(
                f"<dict>: the configuration is not YAML data: {err}", "<dict>", None, str(err)
            ) from None
        try:
            core = _load(
                text=text,
                name="<dict>",
                base_dir=_path(base_dir),
                data_dir=_path(data_dir),
                internal=internal,
                principal=principal,
                decision_log=_flag("decision_log", decision_log),
            )
        except WardenConfigError as err:
            if err.line is None:
                raise
            # The line is the JSON text's, which the caller never saw: the key says where.
            message = str(err).rsplit(" (line ", 1)[0]
            raise WardenConfigError(message, err.file, err.key, err.reason) from None
        return cls(core, inline_budget_ms=inline_budget_ms)

    # -- who this is -----------------------------------------------------------

    @property
    def principal(self) -> str:
        return self._core.principal

    @property
    def data_dir(self) -> str:
        return os.fspath(self._core.data_dir)

    @property
    def decision_log_path(self) -> Optional[str]:
        """The decision log this process writes (``decision_log=True``), or None."""
        path = self._core.decision_log_path
        return None if path is None else os.fspath(path)

    def flush_decision_log(self) -> None:
        """Writes out and syncs every decision logged so far (the writer
        otherwise does every ``decision_log.fsync_interval_ms``)."""
        self._core.flush_decision_log()

    def is_internal(self) -> bool:
        """Whether calls are judged as an internal caller's (they may set the
        run's interaction mode): the default in-process."""
        return self._core.role_name == "internal"

    # -- on the event loop, or off it --------------------------------------------

    @property
    def inline_budget_ms(self) -> float:
        """How long the ``a*`` methods may keep the event loop judging one call
        (milliseconds; 0: never). Compared with :attr:`worst_case_ms`."""
        return self._inline_budget_ms

    @inline_budget_ms.setter
    def inline_budget_ms(self, value: float) -> None:
        self._inline_budget_ms = _budget(value)

    @property
    def worst_case_ms(self) -> float:
        """The longest one judgement can take under the live configuration
        (milliseconds): for each provider, and the classifier, the wait for a
        free instance, configuring a new one and the call, each under its
        ``timeout_ms`` (the epoch tick after it, in the sandbox). A reload
        changes it. The native stages, whose work grows with the call's size
        within the request limits, are not counted."""
        return self._core.worst_case_ms

    def judges_inline(self, call: Optional[Mapping[str, Any]] = None) -> bool:
        """Whether the ``a*`` methods judge ``call`` on the event loop itself:
        when :attr:`worst_case_ms` is within :attr:`inline_budget_ms` and the
        call names no thread (a thread's pause is looked up in the approval
        store, which an overdue one is written to). With no call: whether any
        call is judged there."""
        budget = self._inline_budget_ms
        if budget <= 0 or self._core.worst_case_ms > budget:
            return False
        if call is None or not _is_mapping(call):
            return True
        context: Any = call.get("context")
        return not (_is_mapping(context) and context.get("thread_id") is not None)

    # -- decisions -------------------------------------------------------------

    def decide(self, call: Mapping[str, Any]) -> Evaluation:
        """Judges a request body, failing closed: a request the daemon would
        refuse is a deny naming why (as :meth:`WardenClient.decide`)."""
        try:
            return self.evaluate_call(call)
        except WardenError as err:
            return refusal_deny(err)

    async def adecide(self, call: Mapping[str, Any]) -> Evaluation:
        """:meth:`decide`, without blocking the event loop past
        :attr:`inline_budget_ms` (see :meth:`judges_inline`)."""
        if self.judges_inline(call):
            return self.decide(call)
        return await asyncio.to_thread(self.decide, call)

    def evaluate(
        self,
        tool_name: str,
        tool_input: Optional[Mapping[str, Any]] = None,
        *,
        tool_call_id: Optional[str] = None,
        context: Optional[Mapping[str, Any]] = None,
    ) -> Evaluation:
        """Judges one tool call; raises :class:`WardenHTTPError` where the daemon
        answers an error (a malformed context)."""
        # The native core makes the Evaluation itself: the less Python a call
        # runs, the less of it holds the GIL, and the more threads judge at once.
        try:
            return self._evaluate(tool_name, tool_input, tool_call_id, context)
        except _native.ApiError as err:
            raise _api_error(err) from None

    def evaluate_call(self, call: Mapping[str, Any]) -> Evaluation:
        """Judges a request body as ``POST /v1/evaluate`` takes it."""
        if isinstance(call, dict) and _CALL_KEYS.issuperset(call):
            try:
                return self._evaluate(
                    call.get("tool_name"), call.get("tool_input"), call.get("tool_call_id"), call.get("context")
                )
            except _native.ApiError as err:
                raise _api_error(err) from None
        # Not a plain call: read as the daemon reads a body, and refused as it
        # refuses one (an unknown key, say).
        try:
            body = encode(call)
        except UnencodableInput as err:
            # What the client answers for a body it would not send.
            return Evaluation.local_deny(err.code, unencodable_message(err))
        try:
            return self._core.evaluate_json(body)
        except _native.ApiError as err:
            raise _api_error(err) from None

    async def aevaluate(
        self,
        tool_name: str,
        tool_input: Optional[Mapping[str, Any]] = None,
        *,
        tool_call_id: Optional[str] = None,
        context: Optional[Mapping[str, Any]] = None,
    ) -> Evaluation:
        """:meth:`evaluate`, without blocking the event loop past
        :attr:`inline_budget_ms`: on the loop itself when it cannot take
        longer (see :meth:`judges_inline`), else on a worker thread (the
        pipeline runs without the GIL)."""
        if self.judges_inline({"context": context}):
            return self.evaluate(tool_name, tool_input, tool_call_id=tool_call_id, context=context)
        return await asyncio.to_thread(self.evaluate, tool_name, tool_input, tool_call_id=tool_call_id, context=context)

    async def aevaluate_call(self, call: Mapping[str, Any]) -> Evaluation:
        """:meth:`evaluate_call`, without blocking the event loop past
        :attr:`inline_budget_ms` (see :meth:`judges_inline`)."""
        if self.judges_inline(call):
            return self.evaluate_call(call)
        return await asyncio.to_thread(self.evaluate_call, call)

    def interaction(
        self, context: Optional[Mapping[str, Any]] = None, tools: Optional[Sequence[str]] = None
    ) -> InteractionReport:
        """The run's resolved interaction policy, and this caller (``caller``:
        ``{"token": principal, "role": ...}``), as ``/v1/interaction``."""
        if context is None and tools is None:
            return self._call(self._core.interaction)
        query: Dict[str, Any] = {"context": {k: v for k, v in (context or {}).items() if v is not None}}
        if tools is not None:
            query["tools"] = list(tools)
        return self._call(self._core.interaction, _body(query))

    # -- human approval ----------------------------------------------------------

    def submit_tool_calls(self, thread_id: str, run_id: str, response: Mapping[str, Any]) -> GateOutcome:
        """A model response (``{"message": {"tool_calls": [...]}, "context": {...}}``)
        through the approval gate: what runs, what is denied, what waits for a human."""
        return self._call(self._core.submit_tool_calls, str(thread_id), str(run_id), _body(response))

    def approvals(self, thread_id: str, *, include_resolved: bool = False) -> List[ApprovalView]:
        """The thread's pending approvals (with ``include_resolved``, all of them)."""
        return self._call(self._core.approvals, str(thread_id), include_resolved)

    def resume(
        self,
        thread_id: str,
        approval_id: str,
        answer: Mapping[str, Any],
        *,
        reviewer: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Resolution:
        """A human's answer, relayed by this process: ``reviewer`` names the
        human (required, as from a relay token). The same ``idempotency_key``
        and answer again replays the first outcome with ``"replayed": true``."""
        body = dict(answer)
        if reviewer is not None:
            body["reviewer"] = reviewer
        return self._call(self._core.resume, str(thread_id), str(approval_id), _body(body), idempotency_key or None)

    def grants(self, *, include_inactive: bool = False) -> List[Grant]:
        """This principal's standing grants, newest first."""
        return self._call(self._core.grants, include_inactive)

    def revoke_grant(self, grant_id: str, *, reviewer: Optional[str] = None) -> Grant:
        """Ends a standing grant now, in the name of the human ``reviewer``."""
        return self._call(self._core.revoke_grant, str(grant_id), reviewer)

    # -- operating -------------------------------------------------------------

    def reload(self) -> ReloadReport:
        """Reads the configuration again (the file, or the same text) and swaps
        the provider set atomically; on failure the running set keeps serving
        and :class:`WardenHTTPError` (422 ``reload_failed``) says why."""
        return self._call(self._core.reload)

    def providers(self) -> ProviderList:
        """The live provider set, as ``GET /v1/admin/providers``."""
        return self._core.providers()

    def health(self) -> Health:
        """As ``GET /healthz``."""
        return self._core.health()

    def close(self) -> None:
        """Nothing to close in-process; here so that code written for the client runs."""

    @staticmethod
    def _call(method: Callable[..., T], *args: Any) -> T:
        try:
            return method(*args)
        except _native.ApiError as err:
            raise _api_error(err) from None


def _path(value: Optional[PathLike]) -> Optional[str]:
    return None if value is None else os.fspath(value)


def _body(body: Mapping[str, Any]) -> bytes:
    """A request body as the client would send it; what it would not send is
    not sent here either (:class:`WardenUnsendable`)."""
    try:
        payload = encode(body)
    except UnencodableInput as err:
        raise WardenUnsendable(Evaluation.local_deny(err.code, unencodable_message(err))) from None
    if len(payload) > DEFAULT_MAX_REQUEST_BYTES:
        raise WardenHTTPError(
            413,
            "body_too_large",
            f"request body is {len(payload)} bytes; the limit is {DEFAULT_MAX_REQUEST_BYTES} bytes",
        )
    return payload


def _is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, a dict first: this runs on every async
    call, and ``typing.Mapping``'s check costs about a microsecond."""
    return type(value) is dict or (value is not None and isinstance(value, abc.Mapping))


__all__ = ["Warden", "WardenConfigError"]
