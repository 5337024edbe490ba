"""Both faces, the daemon's client and Warden in-process, offer every method of
``warden.api.WardenAPI`` with its parameters, so that an adapter given either
works the same. (mypy holds their types to it too: scripts/test.)"""

import inspect

import pytest
from conftest import require_native

from warden import WardenClient
from warden.api import WardenAPI

METHODS = sorted(
    name for name, value in vars(WardenAPI).items() if not name.startswith("_") and inspect.isfunction(value)
)


def faces():
    return [WardenClient, require_native().Warden]


def parameters(function):
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def test_the_api_has_the_methods_the_adapters_call():
    assert {"decide", "adecide", "is_internal", "judges_inline", "submit_tool_calls", "resume"} <= set(METHODS)


@pytest.mark.parametrize("method", METHODS)
def test_both_faces_take_the_apis_parameters(method):
    expected = parameters(getattr(WardenAPI, method))
    for face in faces():
        implemented = getattr(face, method)
        assert inspect.isfunction(implemented), f"{face.__name__}.{method} is not a method"
        assert parameters(implemented) == expected, f"{face.__name__}.{method}"
        declared = getattr(WardenAPI, method)
        assert inspect.iscoroutinefunction(implemented) == inspect.iscoroutinefunction(declared), method
