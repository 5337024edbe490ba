"""The one API of Warden in Python: :class:`WardenAPI`, which both faces
implement, the daemon's HTTP client (:class:`warden.WardenClient`) and Warden
inside this process (:class:`warden.Warden`). The adapters (DeerFlow's
provider, the LangChain middleware, the approval relay) take any
:class:`WardenAPI`, so that a harness switches faces by changing the line
that makes one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Protocol, Sequence

from .answers import ApprovalView, GateOutcome, Grant, Health, InteractionReport, ProviderList, ReloadReport, Resolution

if TYPE_CHECKING:
    from .client import Evaluation


class WardenAPI(Protocol):
    """What a harness asks Warden. Every method answers what the daemon's
    route answers (the same JSON, typed in :mod:`warden.answers`) and raises
    :class:`~warden.client.WardenHTTPError` where the route answers an error."""

    def is_internal(self) -> bool:
        """Whether calls are judged as an internal caller's (they may set the
        run's interaction mode)."""
        ...

    def judges_inline(self, call: Optional[Mapping[str, Any]] = None) -> bool:
        """Whether the ``a*`` methods judge ``call`` on the running event loop
        itself rather than on a worker thread (with no call: whether they ever
        do). True only where judging is bounded below a small budget and
        neither waits on the network nor touches the approval store."""
        ...

    # -- decisions ---------------------------------------------------------

    def decide(self, call: Mapping[str, Any]) -> Evaluation:
        """Judges a request body, failing closed: every failure after sending
        is a deny naming its cause."""
        ...

    async def adecide(self, call: Mapping[str, Any]) -> Evaluation:
        """:meth:`decide`, without blocking the event loop."""
        ...

    def evaluate(
        self,
        tool_name: str,
        tool_input: Optional[Mapping[str, Any]] = None,
        *,
        tool_call_id: Optional[str] = None,
        context: Optional[Mapping[str, Any]] = None,
    ) -> Evaluation:
        """Judges one tool call; raises on every failure."""
        ...

    async def aevaluate(
        self,
        tool_name: str,
        tool_input: Optional[Mapping[str, Any]] = None,
        *,
        tool_call_id: Optional[str] = None,
        context: Optional[Mapping[str, Any]] = None,
    ) -> Evaluation:
        """:meth:`evaluate`, without blocking the event loop."""
        ...

    def evaluate_call(self, call: Mapping[str, Any]) -> Evaluation:
        """Judges a request body as ``POST /v1/evaluate`` takes it."""
        ...

    async def aevaluate_call(self, call: Mapping[str, Any]) -> Evaluation:
        """:meth:`evaluate_call`, without blocking the event loop."""
        ...

    def interaction(
        self, context: Optional[Mapping[str, Any]] = None, tools: Optional[Sequence[str]] = None
    ) -> InteractionReport:
        """The run's resolved interaction policy, and who asks (``caller``)."""
        ...

    # -- human approval ------------------------------------------------------

    def submit_tool_calls(self, thread_id: str, run_id: str, response: Mapping[str, Any]) -> GateOutcome:
        """A model response through the approval gate."""
        ...

    def approvals(self, thread_id: str, *, include_resolved: bool = False) -> List[ApprovalView]:
        """The thread's pending approvals (with ``include_resolved``, all of them)."""
        ...

    def resume(
        self,
        thread_id: str,
        approval_id: str,
        answer: Mapping[str, Any],
        *,
        reviewer: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Resolution:
        """A human's answer to a pause."""
        ...

    def grants(self, *, include_inactive: bool = False) -> List[Grant]:
        """Standing grants, newest first."""
        ...

    def revoke_grant(self, grant_id: str, *, reviewer: Optional[str] = None) -> Grant:
        """Ends a standing grant now."""
        ...

    # -- operating -------------------------------------------------------------

    def reload(self) -> ReloadReport:
        """Reads the configuration again and swaps the provider set atomically."""
        ...

    def providers(self) -> ProviderList:
        """The live provider set."""
        ...

    def health(self) -> Health:
        """Up, with a provider set."""
        ...

    def close(self) -> None:
        """Lets go of what the face holds (the HTTP client's connection)."""
        ...


if TYPE_CHECKING:
    from .client import WardenClient
    from .inprocess import Warden

    def _both_faces_implement_it(client: WardenClient, warden: Warden) -> List[WardenAPI]:
        # Checked by mypy (strict, in scripts/test): a method either face lacks,
        # or types otherwise, is an error here.
        return [client, warden]


__all__ = ["WardenAPI"]
