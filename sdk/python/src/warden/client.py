"""The HTTP client for the Warden daemon (``warden serve``).

Pure standard library: one keep-alive connection per thread, JSON in and out.
Every failure raises: :class:`WardenUnavailable` when the daemon cannot be
reached, :class:`WardenHTTPError` when it refuses the request. A caller that
must fail closed treats any :class:`WardenError` as a deny.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional
from urllib.parse import quote, urlsplit

DEFAULT_URL = "http://127.0.0.1:8787"
DEFAULT_TOKEN_ENV = "WARDEN_TOKEN"


class WardenError(Exception):
    """Any failure to get a decision from Warden."""


class WardenUnavailable(WardenError, ConnectionError):
    """The daemon could not be reached or did not answer in time."""


class WardenHTTPError(WardenError):
    """The daemon refused the request (401, 403, 400, 413, 422, ...)."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"warden answered {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Reason:
    code: str
    message: str = ""


@dataclass(frozen=True)
class Evaluation:
    """Warden's decision on one tool call (the JSON of ``POST /v1/evaluate``)."""

    verdict: str
    allow: bool
    reasons: List[Reason]
    policy_id: Optional[str]
    metadata: Dict[str, Any]
    decided_by: Optional[str]
    interaction_mode: str
    stages: List[Dict[str, Any]]
    generation: int
    duration_us: int
    #: The id of this decision in the daemon's decision log.
    decision_id: Optional[str] = None
    #: The signed decision record, when the daemon signs decisions.
    decision_record: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], decision_id: Optional[str] = None) -> "Evaluation":
        try:
            return cls(
                verdict=data["verdict"],
                allow=bool(data["allow"]),
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
            raise WardenError(f"warden answered an unexpected decision: {err!r}") from err


def tool_call(
    tool_name: str,
    tool_input: Optional[Mapping[str, Any]] = None,
    *,
    tool_call_id: Optional[str] = None,
    context: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """A request body for ``POST /v1/evaluate``; ``None`` context values are left out."""
    call: Dict[str, Any] = {"tool_name": tool_name, "tool_input": dict(tool_input or {})}
    if tool_call_id is not None:
        call["tool_call_id"] = tool_call_id
    ctx = {k: v for k, v in (context or {}).items() if v is not None}
    if ctx:
        call["context"] = ctx
    return call


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
        timeout: float = 5.0,
    ):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self.token = token if token is not None else os.environ.get(token_env)
        self.timeout = timeout
        self._local = threading.local()

    # -- the API -----------------------------------------------------------

    def evaluate(
        self,
        tool_name: str,
        tool_input: Optional[Mapping[str, Any]] = None,
        *,
        tool_call_id: Optional[str] = None,
        context: Optional[Mapping[str, Any]] = None,
    ) -> Evaluation:
        """Judges one tool call."""
        return self.evaluate_call(
            tool_call(tool_name, tool_input, tool_call_id=tool_call_id, context=context)
        )

    def evaluate_call(self, call: Mapping[str, Any]) -> Evaluation:
        """Judges a request body as ``POST /v1/evaluate`` takes it."""
        data, headers = self._request("POST", "/v1/evaluate", call)
        return Evaluation.from_json(data, headers.get("x-warden-decision-id"))

    async def aevaluate(self, *args: Any, **kwargs: Any) -> Evaluation:
        """:meth:`evaluate`, without blocking the event loop."""
        return await asyncio.to_thread(self.evaluate, *args, **kwargs)

    async def aevaluate_call(self, call: Mapping[str, Any]) -> Evaluation:
        return await asyncio.to_thread(self.evaluate_call, call)

    # -- human approval --------------------------------------------------

    def submit_tool_calls(self, thread_id: str, run_id: str, response: Mapping[str, Any]) -> Dict[str, Any]:
        """A model response (``{"message": {"tool_calls": [...]}, "context": {...}}``)
        through the approval gate: what runs, what is denied, what waits for a human."""
        return self._request("POST", f"/v1/threads/{_seg(thread_id)}/runs/{_seg(run_id)}/tool-calls", response)[0]

    def approvals(self, thread_id: str, *, include_resolved: bool = False) -> List[Dict[str, Any]]:
        """The thread's pending approvals (with ``include_resolved``, all of them)."""
        query = "?all=true" if include_resolved else ""
        return self._request("GET", f"/v1/threads/{_seg(thread_id)}/approvals{query}", None)[0]["approvals"]

    def resume(self, thread_id: str, approval_id: str, answer: Mapping[str, Any]) -> Dict[str, Any]:
        """A human's answer: ``{"decisions": [{"request_id", "decision", ...}]}`` or
        ``{"reject_all": {"message": ...}}``."""
        return self._request("POST", f"/v1/threads/{_seg(thread_id)}/approvals/{_seg(approval_id)}/resume", answer)[0]

    def reload(self) -> Dict[str, Any]:
        """Reloads the daemon's config file (admin token)."""
        return self._request("POST", "/v1/admin/reload", None)[0]

    def providers(self) -> Dict[str, Any]:
        """The live provider set (admin token)."""
        return self._request("GET", "/v1/admin/providers", None)[0]

    def health(self) -> Dict[str, Any]:
        return self._request("GET", "/healthz", None)[0]

    def close(self) -> None:
        """Closes this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- transport ---------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=self.timeout)
            self._local.conn = conn
        return conn

    def _request(self, method: str, path: str, body: Optional[Mapping[str, Any]]):
        payload = b"" if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        # A kept-alive connection the server closed meanwhile fails on first
        # use: retry once on a new one (judging a call has no side effect).
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(method, self._prefix + path, body=payload, headers=headers)
                response = conn.getresponse()
                raw = response.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as err:
                self.close()
                if attempt == 2:
                    raise WardenUnavailable(f"warden at {self.url} closed the connection: {err}") from err
            except (OSError, http.client.HTTPException, socket.timeout) as err:
                self.close()
                raise WardenUnavailable(f"cannot reach warden at {self.url}: {err}") from err
        answer_headers = {k.lower(): v for k, v in response.getheaders()}
        try:
            data = json.loads(raw) if raw else {}
        except ValueError as err:
            raise WardenError(f"warden answered {response.status} with a body that is not JSON") from err
        if response.status != 200:
            error = data.get("error", {}) if isinstance(data, dict) else {}
            raise WardenHTTPError(
                response.status, error.get("code", "unknown"), error.get("message", raw.decode(errors="replace"))
            )
        return data, answer_headers
