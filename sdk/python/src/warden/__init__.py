"""Warden: a client for the tool-call guardrail daemon, and a DeerFlow provider.

    from warden import WardenClient

    client = WardenClient("http://127.0.0.1:8787", token="...")
    decision = client.evaluate("bash", {"command": "git status"}, context={"thread_id": "t-1"})
    if not decision.allow:
        print(decision.verdict, decision.reasons)

DeerFlow: ``use: warden.deerflow:WardenProvider`` (see :mod:`warden.deerflow`).
"""

from .client import (
    DEFAULT_URL,
    Evaluation,
    Reason,
    WardenClient,
    WardenError,
    WardenHTTPError,
    WardenUnavailable,
    tool_call,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_URL",
    "Evaluation",
    "Reason",
    "WardenClient",
    "WardenError",
    "WardenHTTPError",
    "WardenUnavailable",
    "tool_call",
]
