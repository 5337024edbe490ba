"""What the harness adapters share when they are built: the Warden they ask
(a client given, the daemon at a URL, or Warden in this process from a
config), and the error for a setting they do not take."""

from __future__ import annotations

import difflib
import inspect
from typing import Any, Callable, List, Optional

from .api import WardenAPI
from .client import DEFAULT_URL, WardenClient


def warden_for(
    who: str,
    *,
    client: Optional[WardenAPI],
    url: Optional[str],
    config: Optional[str],
    data_dir: Optional[str],
    token: Optional[str],
    token_env: str,
    timeout: float,
    connect_timeout: float,
    inline_budget_ms: Optional[float] = None,
) -> WardenAPI:
    """The Warden adapter ``who`` asks: ``client`` when given, else exactly one
    of the daemon at ``url`` and Warden in this process from ``config``."""
    if client is not None:
        return client
    if (url is None) == (config is None):
        given = "both" if url is not None else "neither"
        raise ValueError(
            f"{who}: give exactly one of `url` (the Warden daemon, e.g. {DEFAULT_URL}) "
            f"and `config` (a warden.yaml, for Warden in this process); {given} was given"
        )
    if config is not None:
        from .inprocess import Warden

        # This process is the caller: internal, so the run's mode is told to
        # Warden; no token (there is no daemon to present it to).
        warden = Warden.from_config(config, data_dir=data_dir)
        if inline_budget_ms is not None:
            warden.inline_budget_ms = inline_budget_ms
        return warden
    assert url is not None  # exactly one of url and config
    return WardenClient.for_harness(who, url, token, token_env, timeout=timeout, connect_timeout=connect_timeout)


def unknown_settings(who: str, init: Callable[..., Any], names: List[str]) -> str:
    """The error for settings ``init`` does not take, with the nearest known
    name of each: a misspelt safety setting must not silently do nothing."""
    known = [n for n in inspect.signature(init).parameters if n not in ("self", "unknown")]
    parts = []
    for name in names:
        near = difflib.get_close_matches(name.replace("-", "_"), known, n=1)
        parts.append(f"`{name}`" + (f" (did you mean `{near[0]}`?)" if near else ""))
    return f"{who}: unknown settings {', '.join(parts)}; the settings are {', '.join(known)}"
