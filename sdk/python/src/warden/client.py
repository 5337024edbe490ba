"""The HTTP client for the Warden daemon (``warden serve``).

Pure standard library: one keep-alive connection per thread, JSON in and out.

Two ways to ask for a decision:

- :meth:`WardenClient.decide` fails closed by itself. Whatever goes wrong once the
  request was sent (a reset, a timeout, a closed connection, any refusal: a bad
  token, a wrong role, a thread waiting for a human) comes back as a deny whose
  reason names the cause; so does a call the client cannot put into JSON
  (``NaN``, a lone surrogate) or that is larger than the daemon accepts. Only
  when Warden cannot be reached at all (the connection is refused, the name does
  not resolve, the connection is not accepted in time: nothing was sent) does it
  raise :class:`WardenUnavailable`, so that the harness's own setting decides.
- :meth:`WardenClient.evaluate` raises for every failure
  (:class:`WardenUnavailable`, :class:`WardenNoAnswer`, :class:`WardenHTTPError`)
  and is for callers that handle them; it too never sends invalid JSON.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import threading
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, cast
from urllib.parse import quote, urlsplit

from .answers import (
    ApprovalView,
    GateOutcome,
    Grant,
    Health,
    InteractionMode,
    InteractionReport,
    ProviderList,
    ReloadReport,
    Resolution,
    StageReport,
    Verdict,
)
from .codes import APPROVAL_PENDING as APPROVAL_PENDING
from .codes import FORBIDDEN as FORBIDDEN
from .codes import INPUT_TOO_LARGE as INPUT_TOO_LARGE
from .codes import NO_ANSWER as NO_ANSWER
from .codes import REFUSED as REFUSED
from .codes import UNAUTHORIZED as UNAUTHORIZED
from .encoding import UnencodableInput, encode, unencodable_message

DEFAULT_URL = "http://127.0.0.1:8787"
DEFAULT_TOKEN_ENV = "WARDEN_TOKEN"
#: Seconds to wait for an answer once connected: a decision takes milliseconds.
DEFAULT_TIMEOUT = 2.0
#: Seconds to wait for the connection to be accepted.
DEFAULT_CONNECT_TIMEOUT = 0.5
#: The largest body sent; the daemon's `server.limits.max_body_bytes` default.
DEFAULT_MAX_REQUEST_BYTES = 1 << 20

# The reason codes of the denies the client answers itself (INPUT_TOO_LARGE,
# UNAUTHORIZED, FORBIDDEN, APPROVAL_PENDING, REFUSED, NO_ANSWER) are
# warden.codes', imported above and importable from here as before.
#: The stage name of a decision the client made itself.
CLIENT_STAGE = "client"


class WardenError(Exception):
    """Any failure to get an answer from Warden."""


class WardenUnavailable(WardenError, ConnectionError):
    """Warden could not be reached at all: nothing was sent."""


class WardenNoAnswer(WardenError):
    """The request was sent, but no answer came (a reset, a timeout, a closed
    connection, a body that is not Warden's)."""


class WardenUnsendable(WardenError):
    """The client would not send the request: not JSON (``NaN``, a lone
    surrogate) or too large. ``evaluation`` is the deny it stands for."""

    def __init__(self, evaluation: Evaluation):
        super().__init__(evaluation.reasons[0].message)
        self.evaluation = evaluation


class WardenHTTPError(WardenError):
    """The daemon refused the request (401, 403, 400, 409, 413, 422, ...)."""

    def __init__(self, status: int, code: str, message: str, details: Any = None):
        super().__init__(f"warden answered {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details


@dataclass(frozen=True)
class Reason:
    code: str
    message: str = ""


#: The fields of an in-process Evaluation made on first read (Evaluation.__getattr__).
_DEFERRED = frozenset({"raw", "stages"})


@dataclass(frozen=True)
class Evaluation:
    """Warden's decision on one tool call (the JSON of ``POST /v1/evaluate``)."""

    verdict: Verdict
    allow: bool
    reasons: List[Reason]
    policy_id: Optional[str]
    metadata: Dict[str, Any]
    decided_by: Optional[str]
    interaction_mode: InteractionMode
    stages: List[StageReport]
    generation: int
    duration_us: int
    #: The id of this decision in the daemon's decision log (none for a local deny).
    decision_id: Optional[str] = None
    #: The signed decision record, when the daemon signs decisions.
    decision_record: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], decision_id: Optional[str] = None) -> Evaluation:
        try:
            return cls(
                verdict=data["verdict"],
                allow=data["verdict"] == "allow",
                reasons=[Reason(r["code"], r.get("message", "")) for r in data["reasons"]],
                policy_id=data.get("policy_id"),
                metadata=dict(data.get("metadata") or {}),
                decided_by=data.get("decided_by"),
                interaction_mode=data["interaction_mode"],
                stages=list(data.get("stages") or []),
                generation=int(data["generation"]),
                duration_us=int(data["duration_us"]),
                decision_id=decision_id,
                decision_record=data.get("decision_record"),
                raw=dict(data),
            )
        except (KeyError, TypeError, ValueError) as err:
            raise WardenNoAnswer(f"warden answered something that is not a decision: {err!r}") from err

    # An evaluation made in this process (warden.Warden) leaves `raw` and
    # `stages` in the native core until they are first read: making them
    # would hold the GIL, which threads judging at once take turns for.
    def __getattr__(self, name: str) -> Any:
        deferred = self.__dict__.get("_deferred")
        if deferred is None or name not in _DEFERRED:
            raise AttributeError(f"'Evaluation' object has no attribute '{name}'")
        value = getattr(deferred, name)
        object.__setattr__(self, name, value)
        return value

    def __getstate__(self) -> Dict[str, Any]:
        """Every field, made if it was deferred (for pickle and copy)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def local_deny(cls, code: str, message: str, **metadata: Any) -> Evaluation:
        """A deny the client decided itself (``decided_by: client``): never an allow."""
        return cls(
            verdict="deny",
            allow=False,
            reasons=[Reason(code, message)],
            policy_id=None,
            metadata=dict(metadata),
            decided_by=CLIENT_STAGE,
            interaction_mode="interactive",
            stages=[],
            generation=0,
            duration_us=0,
        )


def tool_call(
    tool_name: str,
    tool_input: Optional[Mapping[str, Any]] = None,
    *,
    tool_call_id: Optional[str] = None,
    context: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """A request body for ``POST /v1/evaluate``; ``None`` context values are left out."""
    call: Dict[str, Any] = {"tool_name": tool_name, "tool_input": tool_input if tool_input is not None else {}}
    if tool_call_id is not None:
        call["tool_call_id"] = tool_call_id
    ctx = {k: v for k, v in (context or {}).items() if v is not None}
    if ctx:
        call["context"] = ctx
    return call


def refusal_deny(err: WardenError) -> Evaluation:
    """The deny a harness applies for a failure after the request was sent (or
    for a request the client would not send)."""
    if isinstance(err, WardenUnsendable):
        return err.evaluation
    if isinstance(err, WardenHTTPError):
        if err.status == 401:
            return Evaluation.local_deny(
                UNAUTHORIZED, f"Warden refused the harness's token ({err.code}): {err.message}; the call is denied"
            )
        if err.status == 403:
            return Evaluation.local_deny(
                FORBIDDEN,
                f"the harness's token may not ask Warden this ({err.code}): {err.message}; the call is denied",
            )
        if err.code == "approval_pending":
            details = err.details if isinstance(err.details, dict) else {}
            return Evaluation.local_deny(APPROVAL_PENDING, err.message, **details)
        return Evaluation.local_deny(
            REFUSED, f"Warden refused the request ({err.status} {err.code}): {err.message}; the call is denied"
        )
    return Evaluation.local_deny(NO_ANSWER, f"{err}; the call is denied")


def _seg(value: str) -> str:
    """One path segment, percent-encoded."""
    return quote(str(value), safe="")


class WardenClient:
    """A client for one daemon.

    ``token`` defaults to the environment variable named by ``token_env``
    (``WARDEN_TOKEN``). Thread-safe: each thread keeps its own connection.
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: Optional[str] = None,
        *,
        token_env: str = DEFAULT_TOKEN_ENV,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self.token_env = token_env
        self.token = token if token is not None else os.environ.get(token_env)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_request_bytes = max_request_bytes
        self._local = threading.local()
        self._role: Optional[str] = None

    @classmethod
    def for_harness(cls, who: str, url: str, token: Optional[str], token_env: str, **options: Any) -> WardenClient:
        """A client for an adapter (``who``), which refuses to start without a token."""
        client = cls(url, token, token_env=token_env, **options)
        if not client.token:
            raise ValueError(
                f"{who}: no token: set the environment variable {token_env} (or `token`) "
                "to a token from the daemon's server.tokens"
            )
        return client

    def is_internal(self) -> bool:
        """Whether this client's token has the internal role (it may set the
        run's interaction mode): asked once, ``False`` while it cannot be asked."""
        if self._role is None:
            try:
                self._role = str(self.interaction()["caller"]["role"])
            except (WardenError, KeyError, TypeError):
                return False
        return self._role == "internal"

    def judges_inline(self, call: Optional[Mapping[str, Any]] = None) -> bool:
        """Never: every call waits on the network, so the ``a*`` methods run it
        on a worker thread."""
        return False

    # -- decisions ---------------------------------------------------------

    def decide(self, call: Mapping[str, Any]) -> Evaluation:
        """Judges a request body (``POST /v1/evaluate``), failing closed: every
        failure after sending is a deny naming its cause. Raises only
        :class:`WardenUnavailable` (nothing was sent)."""
        try:
            return self.evaluate_call(call)
        except WardenUnavailable:
            raise
        except WardenError as err:
            return refusal_deny(err)

    async def adecide(self, call: Mapping[str, Any]) -> Evaluation:
        """:meth:`decide`, without blocking the event loop."""
        return await asyncio.to_thread(self.decide, call)

    def evaluate(
        self,
        tool_name: str,
        tool_input: Optional[Mapping[str, Any]] = None,
        *,
        tool_call_id: Optional[str] = None,
        context: Optional[Mapping[str, Any]] = None,
    ) -> Evaluation:
        """Judges one tool call; raises on every failure (see the module)."""
        return self.evaluate_call(tool_call(tool_name, tool_input, tool_call_id=tool_call_id, context=context))

    def evaluate_call(self, call: Mapping[str, Any]) -> Evaluation:
        """Judges a request body as ``POST /v1/evaluate`` takes it. A call that
        cannot be sent as JSON, or is too large, is a local deny."""
        try:
            payload = self._encode(call)
        except _LocalDeny as deny:
            return deny.evaluation
        data, headers = self._exchange("POST", "/v1/evaluate", payload)
        return Evaluation.from_json(data, headers.get("x-warden-decision-id"))

    async def aevaluate(
        self,
        tool_name: str,
        tool_input: Optional[Mapping[str, Any]] = None,
        *,
        tool_call_id: Optional[str] = None,
        context: Optional[Mapping[str, Any]] = None,
    ) -> Evaluation:
        """:meth:`evaluate`, without blocking the event loop."""
        return await asyncio.to_thread(self.evaluate, tool_name, tool_input, tool_call_id=tool_call_id, context=context)

    async def aevaluate_call(self, call: Mapping[str, Any]) -> Evaluation:
        """:meth:`evaluate_call`, without blocking the event loop."""
        return await asyncio.to_thread(self.evaluate_call, call)

    def interaction(
        self, context: Optional[Mapping[str, Any]] = None, tools: Optional[Sequence[str]] = None
    ) -> InteractionReport:
        """The run's resolved interaction policy (``GET``/``POST /v1/interaction``):
        its mode, whether a human can be asked, what a tool under ``hitl_approval``
        does, the tools to offer and to withhold, network eligibility, the
        guidance for the agent's prompt, and this client's token (``caller``)."""
        if context is None and tools is None:
            return cast(InteractionReport, self._request("GET", "/v1/interaction", None)[0])
        query: Dict[str, Any] = {"context": {k: v for k, v in (context or {}).items() if v is not None}}
        if tools is not None:
            query["tools"] = list(tools)
        return cast(InteractionReport, self._request("POST", "/v1/interaction", query)[0])

    # -- human approval --------------------------------------------------

    def submit_tool_calls(self, thread_id: str, run_id: str, response: Mapping[str, Any]) -> GateOutcome:
        """A model response (``{"message": {"tool_calls": [...]}, "context": {...}}``)
        through the approval gate: what runs, what is denied, what waits for a human."""
        path = f"/v1/threads/{_seg(thread_id)}/runs/{_seg(run_id)}/tool-calls"
        return cast(GateOutcome, self._request("POST", path, response)[0])

    def approvals(self, thread_id: str, *, include_resolved: bool = False) -> List[ApprovalView]:
        """The thread's pending approvals (with ``include_resolved``, all of them)."""
        query = "?all=true" if include_resolved else ""
        page = self._request("GET", f"/v1/threads/{_seg(thread_id)}/approvals{query}", None)[0]
        return cast(List[ApprovalView], page["approvals"])

    def resume(
        self,
        thread_id: str,
        approval_id: str,
        answer: Mapping[str, Any],
        *,
        reviewer: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Resolution:
        """A human's answer: ``{"decisions": [{"request_id", "decision", ...}]}`` or
        ``{"reject_all": {"message": ...}}``. A token with ``relay: true`` names the
        human in ``reviewer``. The same ``idempotency_key`` and answer again replays
        the first outcome with ``"replayed": true``: its calls must not run again."""
        body = dict(answer)
        if reviewer is not None:
            body["reviewer"] = reviewer
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        path = f"/v1/threads/{_seg(thread_id)}/approvals/{_seg(approval_id)}/resume"
        return cast(Resolution, self._request("POST", path, body, headers)[0])

    def grants(self, *, include_inactive: bool = False) -> List[Grant]:
        """Standing grants, newest first: live ones (with ``include_inactive``,
        expired and revoked ones too). An agent's token sees its own."""
        query = "?all=true" if include_inactive else ""
        return cast(List[Grant], self._request("GET", f"/v1/grants{query}", None)[0]["grants"])

    def revoke_grant(self, grant_id: str, *, reviewer: Optional[str] = None) -> Grant:
        """Ends a standing grant now (an approver, or a relay naming the human)."""
        body = {"reviewer": reviewer} if reviewer is not None else {}
        return cast(Grant, self._request("POST", f"/v1/grants/{_seg(grant_id)}/revoke", body)[0])

    def reload(self) -> ReloadReport:
        """Reloads the daemon's config file (admin token)."""
        return cast(ReloadReport, self._request("POST", "/v1/admin/reload", None)[0])

    def providers(self) -> ProviderList:
        """The live provider set (admin token)."""
        return cast(ProviderList, self._request("GET", "/v1/admin/providers", None)[0])

    def health(self) -> Health:
        """``GET /healthz``: up, with a provider set."""
        return cast(Health, self._request("GET", "/healthz", None)[0])

    def close(self) -> None:
        """Closes this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- transport ---------------------------------------------------------

    def _encode(self, body: Mapping[str, Any]) -> bytes:
        try:
            payload = encode(body)
        except UnencodableInput as err:
            raise _LocalDeny(err.code, unencodable_message(err)) from err
        if len(payload) > self.max_request_bytes:
            raise _LocalDeny(
                INPUT_TOO_LARGE,
                f"the call is {len(payload)} bytes; Warden accepts at most {self.max_request_bytes}",
            )
        return payload

    def _request(
        self,
        method: str,
        path: str,
        body: Optional[Mapping[str, Any]],
        headers: Optional[Mapping[str, str]] = None,
    ) -> Tuple[Any, Dict[str, str]]:
        if body is None:
            payload = None
        else:
            try:
                payload = self._encode(body)
            except _LocalDeny as deny:
                raise WardenUnsendable(deny.evaluation) from None
        return self._exchange(method, path, payload, headers)

    def _connect(self) -> http.client.HTTPConnection:
        """This thread's connection; a new one is connected here, so that a
        failure to connect (nothing sent) is told apart from a failure after."""
        kept: Optional[http.client.HTTPConnection] = getattr(self._local, "conn", None)
        if kept is not None and kept.sock is not None:
            return kept
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=self.connect_timeout)
        try:
            conn.connect()
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            raise WardenUnavailable(f"cannot reach warden at {self.url}: {err}") from err
        conn.sock.settimeout(self.timeout)
        self._local.conn = conn
        return conn

    def _exchange(
        self,
        method: str,
        path: str,
        payload: Optional[bytes],
        extra_headers: Optional[Mapping[str, str]] = None,
    ) -> Tuple[Any, Dict[str, str]]:
        headers = {"Accept": "application/json"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if extra_headers:
            headers.update(extra_headers)
        # A kept-alive connection the server closed meanwhile fails on first use,
        # before the server read anything: retry once on a new connection.
        for attempt in (1, 2):
            reused = getattr(self._local, "conn", None) is not None
            conn = self._connect()
            try:
                conn.request(method, self._prefix + path, body=payload, headers=headers)
                response = conn.getresponse()
                raw = response.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as err:
                self.close()
                if attempt == 2 or not reused:
                    raise WardenNoAnswer(f"warden at {self.url} closed the connection: {err}") from err
            except (OSError, http.client.HTTPException, socket.timeout) as err:
                self.close()
                raise WardenNoAnswer(f"warden at {self.url} did not answer: {err}") from err
        if response.will_close:
            self.close()
        answer_headers = {k.lower(): v for k, v in response.getheaders()}
        try:
            data = json.loads(raw) if raw else {}
        except ValueError as err:
            raise WardenNoAnswer(f"warden answered {response.status} with a body that is not JSON") from err
        if response.status != 200:
            error = data.get("error", {}) if isinstance(data, dict) else {}
            raise WardenHTTPError(
                response.status,
                error.get("code", "unknown"),
                error.get("message", raw.decode(errors="replace")),
                error.get("details"),
            )
        return data, answer_headers


class _LocalDeny(Exception):
    """A call the client denies without sending it."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.evaluation = Evaluation.local_deny(code, message)
