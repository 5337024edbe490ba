"""Warden in a LangChain 1.x / LangGraph agent: ``WardenMiddleware``.

    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from warden.langchain import WardenMiddleware

    agent = create_agent(model, tools, middleware=[WardenMiddleware(url="http://127.0.0.1:8787")],
                         checkpointer=InMemorySaver())

After the model answers, every tool call of its message goes through Warden's
approval gate (``POST /v1/threads/{thread}/runs/{run}/tool-calls``), as one
message: what Warden allows runs, what it denies is answered with a tool message
that says why, and what needs a human (an ask, or a tool under
``hitl_approval``) pauses the graph once, with LangGraph's ``interrupt()`` in the
shape of LangChain's ``HumanInTheLoopMiddleware`` (action requests and review
configs; decisions approve / edit / reject), so existing approval UIs drive it.
The resume value is LangChain's ``{"decisions": [...]}``, one per action
request, or agent-chat-ui's ``[{"type": "accept" | "edit" | "response" |
"ignore", "args": ...}]``. The human is named from the run's authenticated user
(``langgraph_auth_user``, which the LangGraph server sets; through the
``reviewers`` mapping of identities to reviewer names where given), else the
middleware's ``reviewer`` setting; never from a name the client supplies (the
runtime context, the resume value). The middleware relays the answer to
Warden's resume route, which records the human and re-judges edits, and runs
exactly what Warden says runs, with the arguments it says. Resuming the same
interrupt twice runs nothing the second time; a daemon unreachable once the
human has answered denies every call.

Every call of the model's message is answered: a call Warden's answer does not
account for (it dropped it, say for arguments nested too deep to read) is
denied with a tool message naming why, never dropped.

Before a tool runs, the middleware checks that Warden judged that very call
(id, name and arguments): nothing runs that Warden did not judge.

Where no human can be asked (no checkpointer or thread id, an unattended run, a
subagent) Warden denies what would have waited. The harness's token needs
``relay: true`` in the daemon's ``server.tokens`` to relay a human's answer.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any, Dict, List, Mapping, Optional

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import interrupt

from . import graph
from .api import WardenAPI
from .approval import Relay, Result, adapter_failure, all_denied, run_id_for
from .client import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_TIMEOUT,
    DEFAULT_TOKEN_ENV,
    DEFAULT_URL,
    WardenClient,
    WardenUnavailable,
)

# The reason code of a call Warden never judged, importable from here as before.
from .codes import NOT_JUDGED as NOT_JUDGED

#: Where the middleware marks, on the AI message, the calls Warden let run.
MARK = "warden"


def call_digest(name: str, args: Any) -> str:
    """Identifies a call by its name and arguments. Arguments JSON cannot
    carry (a cycle, nesting past the recursion limit) get a value that is no
    digest, so they match no judged call (Warden judged only what it read)."""
    try:
        text = json.dumps([name, args], sort_keys=True, ensure_ascii=False, default=str)
    except Exception as err:  # any value the model wrote
        return f"unencodable: {type(err).__name__}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class WardenMiddleware(AgentMiddleware):
    """Runs every tool call of an agent through Warden, pausing for a human
    where Warden asks (see the module)."""

    def __init__(
        self,
        client: Optional[WardenAPI] = None,
        *,
        url: str = DEFAULT_URL,
        token: Optional[str] = None,
        token_env: str = DEFAULT_TOKEN_ENV,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        interaction_mode: Optional[str] = None,
        run_origin: Optional[str] = None,
        reviewer: Optional[str] = None,
        reviewers: Optional[Mapping[str, str]] = None,
        context: Optional[Mapping[str, Any]] = None,
    ):
        super().__init__()
        self.client: WardenAPI = client or WardenClient.for_harness(
            "WardenMiddleware", url, token, token_env, timeout=timeout, connect_timeout=connect_timeout
        )
        self.interaction_mode = graph.check_mode("WardenMiddleware", interaction_mode)
        self.run_origin = run_origin
        #: Who answers where the run has no authenticated user, and the
        #: reviewer name of each identity: :func:`warden.graph.reviewer_of`.
        self.reviewer = reviewer
        self.reviewers = dict(reviewers or {})
        #: Attribution sent with every message (agent_id, user_id, ...).
        self.context = dict(context or {})

    # -- after the model: judge the message --------------------------------------

    def after_model(self, state: Any, runtime: Any) -> Optional[Dict[str, Any]]:
        messages = _messages(state)
        ai = messages[-1] if messages else None
        if not isinstance(ai, AIMessage) or not ai.tool_calls or MARK in (ai.response_metadata or {}):
            return None
        surfaces = _surfaces(ai)
        try:
            run = graph.current_run()
            mode, _ = graph.run_context(run, self.client.is_internal, self.interaction_mode, self.run_origin)
            context = {**self.context, **mode}
            thread_id = run.thread_id if run is not None and run.thread_id else "unthreaded"
            run_id = run_id_for("langchain", ai.id, ai.tool_calls)
            reviewer = graph.reviewer_of(run, self.reviewer, self.reviewers)
            result = Relay(self.client, interrupt).judge(thread_id, run_id, surfaces, context, reviewer)
        except Exception as err:  # every other failure denies every call
            return _failed(ai, err)
        return {"messages": _apply(ai, result)}

    async def aafter_model(self, state: Any, runtime: Any) -> Optional[Dict[str, Any]]:
        # The worker thread keeps LangGraph's context: interrupt() works there.
        try:
            return await asyncio.to_thread(self.after_model, state, runtime)
        except Exception as err:  # no thread to be had, say: every call denied
            messages = _messages(state)
            ai = messages[-1] if messages else None
            if not isinstance(ai, AIMessage) or not ai.tool_calls:
                raise
            return _failed(ai, err)

    # -- before a tool runs: only what Warden judged -------------------------------

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        refusal = _unjudged(request)
        return refusal if refusal is not None else handler(request)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        refusal = _unjudged(request)
        return refusal if refusal is not None else await handler(request)


def _failed(ai: AIMessage, err: Exception) -> Dict[str, Any]:
    """Every call of the message denied for the middleware's own failure,
    naming it. An unreachable Warden before it answered (the run stops with
    the error: nothing runs) and LangGraph's own control flow (a pause) are
    raised again."""
    if isinstance(err, WardenUnavailable) or graph.passes_through(err):
        raise err
    surfaces = _surfaces(ai)
    return {
        "messages": _apply(
            ai, all_denied(surfaces["tool_calls"], adapter_failure("the Warden middleware", err), surfaces)
        )
    }


def _messages(state: Any) -> List[Any]:
    if isinstance(state, Mapping):
        return list(state.get("messages") or [])
    return list(getattr(state, "messages", None) or [])


def _surfaces(ai: AIMessage) -> Dict[str, Any]:
    """The message as Warden's gate takes it: the calls and their other surfaces."""
    message: Dict[str, Any] = {
        "tool_calls": [{"id": c.get("id"), "name": c["name"], "args": c.get("args") or {}} for c in ai.tool_calls]
    }
    raw = (ai.additional_kwargs or {}).get("tool_calls")
    if isinstance(raw, list):
        message["raw_tool_calls"] = raw
    if isinstance(ai.content, list):
        message["content"] = ai.content
    return message


def _apply(ai: AIMessage, result: Result) -> List[Any]:
    """The AI message with only the calls that run (with Warden's arguments) on
    every surface, marked as judged, and a tool message for each other call of
    the model's message, whether Warden denied it or did not answer for it."""
    running = [c for c in result.calls if c.runs and c.id]
    ids = {c.id for c in running}
    tool_calls = [{"name": c.name, "args": c.args, "id": c.id, "type": "tool_call"} for c in running]
    additional = dict(ai.additional_kwargs or {})
    raw = result.message.get("raw_tool_calls")
    if isinstance(raw, list):
        additional["tool_calls"] = [r for r in raw if isinstance(r, Mapping) and r.get("id") in ids]
    content = ai.content
    if isinstance(result.message.get("content"), list):
        content = [b for b in result.message["content"] if not _is_call_block(b) or b.get("id") in ids]
    metadata = dict(ai.response_metadata or {})
    metadata[MARK] = {
        "judged": {c.id: call_digest(c.name, c.args) for c in running},
        "approval_id": result.approval_id,
    }
    updated = ai.model_copy(
        update={
            "tool_calls": tool_calls,
            "additional_kwargs": additional,
            "content": content,
            "response_metadata": metadata,
        }
    )
    notes = [
        ToolMessage(content=c.note or "denied by Warden", tool_call_id=c.id, name=c.name, status="error")
        for c in result.calls
        if not c.runs and c.id
    ]
    answered = {c.id for c in result.calls}
    notes += [_unanswered(c, result.notices) for c in ai.tool_calls if c.get("id") and c.get("id") not in answered]
    return [updated, *notes]


def _unanswered(call: Mapping[str, Any], notices: List[Any]) -> ToolMessage:
    """The deny of a call of the model's message that Warden's answer leaves out
    (the route drops a call it cannot read): the agent reads why instead of
    ending without a word."""
    name = str(call.get("name", "unknown_tool"))
    why = "; ".join(f"{n.get('code')}: {n.get('message', '')}" for n in notices if isinstance(n, Mapping))
    return ToolMessage(
        content=f"Warden did not judge this call of '{name}' ({NOT_JUDGED})"
        + (f": {why}" if why else "")
        + ", so it was not run.",
        tool_call_id=str(call.get("id")),
        name=name,
        status="error",
    )


def _is_call_block(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") in (
        "tool_use",
        "tool_call",
        "tool_call_chunk",
        "function_call",
    )


def _unjudged(request: Any) -> Optional[ToolMessage]:
    """A refusal for a call Warden did not let run, or ``None``."""
    call = request.tool_call
    judged: Mapping[str, str] = {}
    for message in reversed(_messages(request.state)):
        if isinstance(message, AIMessage):
            judged = ((message.response_metadata or {}).get(MARK) or {}).get("judged") or {}
            break
    if judged.get(call.get("id")) == call_digest(call.get("name", ""), call.get("args") or {}):
        return None
    name = str(call.get("name", "unknown_tool"))
    return ToolMessage(
        content=f"Warden did not judge this call of '{name}' ({NOT_JUDGED}), so it was not run.",
        tool_call_id=str(call.get("id", "missing_id")),
        name=name,
        status="error",
    )


__all__ = ["WardenMiddleware", "call_digest"]
