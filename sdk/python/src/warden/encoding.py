"""The JSON Warden reads, and only that: the client never sends invalid JSON.

Python's ``json`` writes ``NaN`` and ``Infinity`` (not JSON) and lone surrogates
as ``\\ud800`` escapes (not Unicode); LangChain's own parser produces both from a
model's output. Warden would refuse such a body as a whole, so the client refuses
it first and answers a local deny that names the argument
(``warden.unencodable_input``). A value that contains itself, or nests past
Python's recursion limit, is refused the same way (``warden.input_too_deep``,
the daemon's code for nesting past its limit): every failure of encoding is a
refusal naming its cause, never an exception that escapes to the harness. The
fast path is one ``json.dumps``; the value is walked (without recursion) only to
say where the problem is.
"""

from __future__ import annotations

import json
import math
from typing import Any, List, Optional, Set, Tuple

# The reason codes of a call the client could not put into JSON, and of one
# nested deeper than Warden reads (the daemon's), importable from here as before.
from .codes import INPUT_TOO_DEEP as INPUT_TOO_DEEP
from .codes import UNENCODABLE_INPUT as UNENCODABLE_INPUT

#: The deepest nesting Warden reads (the daemon's ``server.limits.max_json_depth``
#: default; the core's ``MAX_INPUT_DEPTH``). The walk stops there.
MAX_DEPTH = 64
#: The longest path quoted in a refusal.
_SHOWN = 160


class UnencodableInput(ValueError):
    """A value JSON cannot carry; ``path`` says where (``tool_input.timeout``),
    ``code`` is the deny's reason code."""

    def __init__(self, path: str, why: str, code: str = UNENCODABLE_INPUT):
        if len(path) > _SHOWN:
            path = path[:_SHOWN] + "…"
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why
        self.code = code


def unencodable_message(err: UnencodableInput) -> str:
    """The message of the deny a refused value stands for."""
    if err.code == INPUT_TOO_DEEP:
        return f"{err.path}: {err.why}; Warden does not read it, so the call is denied"
    return f"{err.path}: {err.why}; JSON cannot carry it, so the call is denied"


def encode(body: Any) -> bytes:
    """``body`` as UTF-8 JSON text, or :class:`UnencodableInput`."""
    try:
        text = json.dumps(body, allow_nan=False, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except Exception as err:  # any failure to encode is a refusal, whatever raised it
        try:
            found = _find(body)
        except Exception:  # a value that fails even to be looked at
            found = None
        if found is not None:
            raise found from err
        raise UnencodableInput("the request", f"it cannot be written as JSON ({type(err).__name__}: {err})") from err
    # ``json`` writes a key that is not a string as one (``1`` as ``"1"``, so
    # ``{1: a, "1": b}`` has one key twice) and an integer past a float's range
    # as digits no JSON reader takes: refused as the in-process core refuses them.
    if _coerced(body):
        found = _find(body)
        if found is not None:
            raise found
    return text


def _coerced(body: Any) -> bool:
    """Whether ``body`` (which ``json`` could write) holds a key that is not a
    string or an integer that is no JSON number. Walked without recursion."""
    stack: List[Any] = [body]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    return True
                stack.append(item)
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, int) and not isinstance(value, bool) and _too_large(value):
            return True
    return False


def _too_large(n: int) -> bool:
    """Past a float's range: the daemon's parser reads a larger integer as a float."""
    try:
        float(n)
    except OverflowError:
        return True
    return False


class _Leave:
    """On the walk's stack: the children of this container are done."""

    __slots__ = ("container",)

    def __init__(self, container: int):
        self.container = container


def _find(body: Any) -> Optional[UnencodableInput]:
    """The first value in ``body`` that JSON cannot carry, depth first; a
    container met again inside itself is a cycle, and one nested past
    :data:`MAX_DEPTH` is too deep."""
    inside: Set[int] = set()
    stack: List[Tuple[Any, str, int]] = [(body, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, _Leave):
            inside.discard(value.container)
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                return UnencodableInput(path or "the request", f"{value!r} is not a JSON number")
            continue
        if isinstance(value, str):
            problem = _check_text(value, path)
            if problem is not None:
                return problem
            continue
        if isinstance(value, int) and not isinstance(value, bool) and _too_large(value):
            return UnencodableInput(path or "the request", "the integer is too large for a JSON number")
        if value is None or isinstance(value, (bool, int)):
            continue
        if not isinstance(value, (dict, list, tuple)):
            return UnencodableInput(path or "the request", f"a {type(value).__name__} is not a JSON value")
        if id(value) in inside:
            return UnencodableInput(
                path or "the request",
                f"the value contains itself, so it nests without end (Warden reads {MAX_DEPTH} levels)",
                INPUT_TOO_DEEP,
            )
        if depth >= MAX_DEPTH:
            return UnencodableInput(
                path or "the request", f"the value nests deeper than {MAX_DEPTH} levels", INPUT_TOO_DEEP
            )
        inside.add(id(value))
        stack.append((_Leave(id(value)), path, depth))
        children: List[Tuple[Any, str, int]] = []
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    return UnencodableInput(_join(path, repr(key)), "an object key must be a string")
                problem = _check_text(key, _join(path, repr(key)))
                if problem is not None:
                    return problem
                children.append((item, _join(path, key), depth + 1))
        else:
            children = [(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
        stack.extend(reversed(children))
    return None


def _check_text(text: str, path: str) -> Optional[UnencodableInput]:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return UnencodableInput(path or "the request", "the text holds a lone surrogate, which is not Unicode")
    return None


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
