"""The JSON Warden reads, and only that: the client never sends invalid JSON.

Python's ``json`` writes ``NaN`` and ``Infinity`` (not JSON) and lone surrogates
as ``\\ud800`` escapes (not Unicode); LangChain's own parser produces both from a
model's output. Warden would refuse such a body as a whole, so the client refuses
it first and answers a local deny that names the argument
(``warden.unencodable_input``). The fast path is one ``json.dumps``; the value is
walked only to say where the problem is.
"""

from __future__ import annotations

import json
import math
from typing import Any, Optional

#: The reason code of a call the client could not put into JSON.
UNENCODABLE_INPUT = "warden.unencodable_input"


class UnencodableInput(ValueError):
    """A value JSON cannot carry; ``path`` says where (``tool_input.timeout``)."""

    def __init__(self, path: str, why: str):
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why


def encode(body: Any) -> bytes:
    """``body`` as UTF-8 JSON text, or :class:`UnencodableInput`."""
    try:
        return json.dumps(body, allow_nan=False, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except (ValueError, TypeError) as err:
        found = _find(body, "")
        if found is not None:
            raise found from err
        raise UnencodableInput("the request", str(err)) from err


def _find(value: Any, path: str) -> Optional[UnencodableInput]:
    """The first value below ``path`` that JSON cannot carry."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return UnencodableInput(path or "the request", f"{value!r} is not a JSON number")
        return None
    if isinstance(value, str):
        return _check_text(value, path)
    if value is None or isinstance(value, (bool, int)):
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return UnencodableInput(_join(path, repr(key)), "an object key must be a string")
            problem = _check_text(key, _join(path, key)) or _find(item, _join(path, key))
            if problem is not None:
                return problem
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            problem = _find(item, f"{path}[{i}]")
            if problem is not None:
                return problem
        return None
    return UnencodableInput(path or "the request", f"a {type(value).__name__} is not a JSON value")


def _check_text(text: str, path: str) -> Optional[UnencodableInput]:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return UnencodableInput(path or "the request", "the text holds a lone surrogate, which is not Unicode")
    return None


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
