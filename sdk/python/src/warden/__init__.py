"""Warden: a client for the tool-call guardrail daemon, a DeerFlow provider and
a LangChain agent middleware.

    from warden import WardenClient

    client = WardenClient("http://127.0.0.1:8787", token="...")
    decision = client.decide({"tool_name": "bash", "tool_input": {"command": "git status"}})
    if not decision.allow:
        print(decision.verdict, decision.reasons)

In this process, without a daemon (needs the native module, the
``warden-guardrails-native`` wheel)::

    from warden import Warden

    warden = Warden.from_config("warden.yaml")     # the same methods as WardenClient

DeerFlow: ``use: warden.deerflow:WardenProvider`` (see :mod:`warden.deerflow`).
LangChain / LangGraph: ``warden.langchain.WardenMiddleware`` (see :mod:`warden.langchain`).
"""

from typing import Any

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

#: Names imported on first use: they need the native module, which
#: ``import warden`` and the HTTP client must not.
_IN_PROCESS = ("Warden", "WardenConfigError")


def __getattr__(name: str) -> Any:
    if name in _IN_PROCESS:
        from . import inprocess  # raises an ImportError saying how to install it

        return getattr(inprocess, name)
    raise AttributeError(f"module 'warden' has no attribute {name!r}")


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
