"""Warden: a client for the tool-call guardrail daemon, a DeerFlow provider and
a LangChain agent middleware.

    from warden import WardenClient

    client = WardenClient("http://127.0.0.1:8787", token="...")
    decision = client.decide({"tool_name": "bash", "tool_input": {"command": "git status"}})
    if not decision.allow:
        print(decision.verdict, decision.reasons)

DeerFlow: ``use: warden.deerflow:WardenProvider`` (see :mod:`warden.deerflow`).
LangChain / LangGraph: ``warden.langchain.WardenMiddleware`` (see :mod:`warden.langchain`).
"""

from .client import (
    DEFAULT_URL,
    Evaluation,
    Reason,
    WardenClient,
    WardenError,
    WardenHTTPError,
    WardenNoAnswer,
    WardenUnavailable,
    WardenUnsendable,
    refusal_deny,
    tool_call,
)

__version__ = "0.2.0"

__all__ = [
    "DEFAULT_URL",
    "Evaluation",
    "Reason",
    "WardenClient",
    "WardenError",
    "WardenHTTPError",
    "WardenNoAnswer",
    "WardenUnavailable",
    "WardenUnsendable",
    "refusal_deny",
    "tool_call",
]
