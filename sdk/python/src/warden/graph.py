"""What a LangGraph run tells Warden: its thread, whether it can pause for a
human and resume (a checkpointer and a thread id), its runtime context (where
DeerFlow keeps a run's settings), and the run's interaction mode.

Works without LangGraph installed, and outside a graph: then there is no run,
and nothing can pause.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

#: The interaction modes Warden knows.
MODES = ("interactive", "scheduled", "webhook", "autonomous")
#: Run origins with nobody in front of an approval card.
UNATTENDED_ORIGINS = ("im", "extension", "mcp_notification")
#: Keys of the runtime context (or the adapter's settings) that describe how the
#: run meets humans: forwarded to Warden only with an internal token.
MODE_KEYS = ("interaction_mode", "non_interactive", "disable_clarification", "channel_name", "run_origin")


@dataclass(frozen=True)
class Run:
    """The LangGraph run a call is made in."""

    thread_id: Optional[str]
    #: A checkpointer and a thread id: an interrupt can be resumed.
    can_resume: bool
    #: The runtime context (a mapping), or ``{}``.
    context: Mapping[str, Any] = field(default_factory=dict)
    #: Where in the graph the current task runs (stable when a task re-runs on resume).
    checkpoint_ns: str = ""
    #: The run's authenticated user, as the LangGraph server sets it
    #: (``langgraph_auth_user`` in the run config, a key no client may set), or
    #: ``None``: the only account of the human that comes with the run.
    auth_user: Optional[str] = None


#: LangGraph's ``get_config``, looked up on first use (``False``: LangGraph
#: is not installed). Every guarded call asks for it, so the import statement
#: is not run again each time.
_get_config: Any = None


def _config_reader() -> Any:
    global _get_config
    if _get_config is None:
        try:
            from langgraph.config import get_config
        except ImportError:
            _get_config = False
        else:
            _get_config = get_config
    return _get_config


def current_run() -> Optional[Run]:
    """The run of the current graph task, or ``None`` outside a graph."""
    get_config = _config_reader()
    if not get_config:
        return None
    try:
        config = get_config()
    except RuntimeError:
        return None
    conf = config.get("configurable") or {}
    runtime = conf.get("__pregel_runtime")
    context: Mapping[str, Any] = {}
    for found in (getattr(runtime, "context", None), config.get("context")):
        if isinstance(found, Mapping):
            context = found
            break
    thread_id = conf.get("thread_id")
    thread_id = str(thread_id) if thread_id is not None else None
    return Run(
        thread_id=thread_id,
        can_resume=bool(thread_id) and conf.get("__pregel_checkpointer") is not None,
        context=context,
        checkpoint_ns=str(conf.get("checkpoint_ns") or ""),
        auth_user=_identity(conf.get("langgraph_auth_user")) or _identity(conf.get("langgraph_auth_user_id")),
    )


def _identity(user: Any) -> Optional[str]:
    """The identity of LangGraph's authenticated user: the server's user object
    (``.identity``), a mapping with ``identity``, or the id itself."""
    if isinstance(user, Mapping):
        user = user.get("identity")
    elif user is not None and not isinstance(user, str):
        user = getattr(user, "identity", None)
    return user if isinstance(user, str) and user else None


def resuming() -> bool:
    """Whether the current graph task holds a human's answer (it runs again on
    resume, and its ``interrupt()`` will return that answer): from then on no
    failure may turn the call into a run. ``False`` outside a graph."""
    get_config = _config_reader()
    if not get_config:
        return False
    try:
        conf = get_config().get("configurable") or {}
    except RuntimeError:
        return False
    scratchpad = conf.get("__pregel_scratchpad")
    if scratchpad is None:
        return False
    if getattr(scratchpad, "resume", None):
        return True
    null_resume = getattr(scratchpad, "get_null_resume", None)
    # Not consumed: interrupt() takes it when the answer is read.
    return null_resume is not None and null_resume(False) is not None


def reviewer_of(run: Optional[Run], fixed: Optional[str], mapping: Optional[Mapping[str, str]]) -> Optional[str]:
    """Who answered a pause, as Warden is told: the run's authenticated user
    (through the operator's ``mapping`` of identities to reviewer names, where
    one is given), else the operator's ``fixed`` reviewer; never a name the
    client supplies (the runtime context, the resume value). ``None`` when
    nobody can be named."""
    if run is not None and run.auth_user:
        return (mapping or {}).get(run.auth_user, run.auth_user)
    return fixed or None


def passes_through(err: BaseException) -> bool:
    """Whether ``err`` is LangGraph's own control flow (an ``interrupt()``, a
    command to a parent graph), which an adapter lets pass instead of turning
    it into a deny."""
    try:
        from langgraph.errors import GraphBubbleUp
    except ImportError:
        return False
    return isinstance(err, GraphBubbleUp)


def check_mode(who: str, interaction_mode: Optional[str]) -> Optional[str]:
    """A fixed mode from an adapter's settings: one of :data:`MODES`, or refused."""
    if interaction_mode is not None and interaction_mode not in MODES:
        raise ValueError(f"{who}: interaction_mode '{interaction_mode}' is not one of {', '.join(MODES)}")
    return interaction_mode


def mode_keys(
    context: Mapping[str, Any],
    interaction_mode: Optional[str] = None,
    run_origin: Optional[str] = None,
) -> Dict[str, Any]:
    """The run's interaction-mode keys, in Warden's names: the adapter's fixed
    settings first, else the runtime context's (DeerFlow's ``run_interaction_mode``
    is Warden's ``interaction_mode``)."""
    keys: Dict[str, Any] = {}
    mode = interaction_mode or context.get("interaction_mode") or context.get("run_interaction_mode")
    if mode:
        keys["interaction_mode"] = str(mode).strip().lower()
    for flag in ("non_interactive", "disable_clarification"):
        if context.get(flag) is True:
            keys[flag] = True
    channel = context.get("channel_name")
    if isinstance(channel, str) and channel:
        keys["channel_name"] = channel
    origin = run_origin or context.get("run_origin")
    if origin:
        keys["run_origin"] = str(origin)
    return keys


def unattended(keys: Mapping[str, Any]) -> bool:
    """Whether nobody can answer a question in this run, by its own account
    (Warden's order: an explicit mode wins; an unknown one counts as unattended)."""
    mode = keys.get("interaction_mode")
    if mode is not None:
        by_mode = mode != "interactive"
    else:
        by_mode = bool(
            keys.get("non_interactive") or keys.get("channel_name") == "github" or keys.get("disable_clarification")
        )
    return by_mode or keys.get("run_origin") in UNATTENDED_ORIGINS


def run_context(
    run: Optional[Run],
    is_internal: Callable[[], bool],
    interaction_mode: Optional[str] = None,
    run_origin: Optional[str] = None,
    pause_on_ask: bool = True,
) -> Tuple[Dict[str, Any], bool]:
    """What a run adds to the context of its calls, and whether it can pause for
    a human. The mode keys are sent when the token is internal (``is_internal``
    is asked only when there are any); a run that cannot pause, or is unattended
    by its own account and could not say so, is told to Warden as one that
    cannot resume (any caller may say that: it only makes asks denies)."""
    if run is None and interaction_mode is None and run_origin is None:
        # Outside a graph with no fixed settings: no mode keys, and no pause
        # (what the lines below work out, without the work).
        return {"can_resume": False}, False
    keys = mode_keys(run.context if run else {}, interaction_mode, run_origin)
    by_its_account = unattended(keys)
    forwarded = bool(keys) and is_internal()
    context: Dict[str, Any] = dict(keys) if forwarded else {}
    resumable = pause_on_ask and run is not None and run.can_resume
    if (by_its_account and not forwarded) or not resumable:
        context["can_resume"] = False
    return context, resumable and not by_its_account
