"""The package's reason codes (``warden.codes``) are Warden's: generated from
``warden_types::codes`` (crates/types/src/codes.rs) by scripts/python-codes,
and held to it here, so that a code added or changed in Rust and not here
fails. No daemon, no native module."""

import re
import subprocess
import sys

from conftest import ROOT

from warden import codes

RUST = ROOT / "crates" / "types" / "src" / "codes.rs"


def rust_codes():
    """Every ``pub const NAME: &str = "...";`` of codes.rs, read on its own."""
    text = RUST.read_text(encoding="utf-8")
    return dict(re.findall(r'^pub const ([A-Z][A-Z0-9_]*): &str = "([^"]*)";', text, re.MULTILINE))


def python_codes():
    return {name: value for name, value in vars(codes).items() if name.isupper() and isinstance(value, str)}


def test_the_package_has_every_rust_code_by_the_same_name_and_value():
    assert len(rust_codes()) > 40
    assert python_codes() == rust_codes()


def test_the_generated_module_is_what_the_script_writes():
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "python-codes"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stderr
