"""The native module's type stubs (crates/python/python/warden/_native.pyi,
which the wheel ships and mypy reads through sdk/python/src/warden/_native.pyi)
name what the built module has: its classes, and each class's methods and
properties, no more and no fewer. Needs the native module."""

import ast
import inspect

import pytest
from conftest import ROOT, require_native

require_native()
from warden import _native  # noqa: E402

STUB = ast.parse((ROOT / "crates" / "python" / "python" / "warden" / "_native.pyi").read_text(encoding="utf-8"))
CLASSES = {node.name: node for node in STUB.body if isinstance(node, ast.ClassDef)}


def public(names):
    return {name for name in names if not name.startswith("_")}


def test_the_stub_has_every_class_of_the_module():
    built = {name for name, value in vars(_native).items() if inspect.isclass(value) and not name.startswith("_")}
    assert set(CLASSES) == built


@pytest.mark.parametrize("name", sorted(n for n in CLASSES if not n.endswith("Error")))
def test_a_classes_stub_has_its_methods_and_properties(name):
    stubbed = public(node.name for node in CLASSES[name].body if isinstance(node, ast.FunctionDef))
    assert stubbed == public(dir(getattr(_native, name)))
