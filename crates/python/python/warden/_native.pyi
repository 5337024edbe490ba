"""Types of ``warden._native``, Warden's Rust core in this process. Use it
through :class:`warden.Warden`, which gives it the HTTP client's types and
errors; the answers here are the daemon's JSON, as Python objects typed by
:mod:`warden.answers`, except an evaluation, which is the client's
:class:`warden.Evaluation` (its ``raw`` the daemon's JSON).

This file ships in the native wheel, next to the module; the pure package's
source tree links to it (sdk/python/src/warden/_native.pyi) so that mypy reads
it there, and a test holds it to the built module's names."""

from pathlib import Path
from typing import Any, Dict, List, Optional

from warden.answers import (
    ApprovalView,
    GateOutcome,
    Grant,
    Health,
    InteractionReport,
    ProviderList,
    ReloadReport,
    Resolution,
    StageReport,
)
from warden.client import Evaluation

__version__: str

class ConfigError(ValueError):
    """The configuration was refused: args are (message, file, key, reason, line, column)."""

class ApiError(Exception):
    """What the daemon would answer with an HTTP error: args are (status, code, message, details)."""

class Deferred:
    """The fields of an in-process :class:`warden.Evaluation` made on first read."""

    @property
    def raw(self) -> Dict[str, Any]: ...
    @property
    def stages(self) -> List[StageReport]: ...

class Core:
    @staticmethod
    def load(
        *,
        path: Optional[str] = None,
        text: Optional[str] = None,
        name: Optional[str] = None,
        base_dir: Optional[str] = None,
        data_dir: Optional[str] = None,
        internal: bool = True,
        principal: Optional[str] = None,
        decision_log: bool = False,
    ) -> Core: ...
    def evaluate(
        self,
        tool_name: object,
        tool_input: object = None,
        tool_call_id: object = None,
        context: object = None,
    ) -> Evaluation: ...
    def evaluate_json(self, body: bytes) -> Evaluation: ...
    def submit_tool_calls(self, thread_id: str, run_id: str, body: bytes) -> GateOutcome: ...
    def approvals(self, thread_id: str, include_resolved: bool = False) -> List[ApprovalView]: ...
    def resume(
        self, thread_id: str, approval_id: str, body: bytes, idempotency_key: Optional[str] = None
    ) -> Resolution: ...
    def grants(self, include_inactive: bool = False) -> List[Grant]: ...
    def revoke_grant(self, grant_id: str, reviewer: Optional[str] = None) -> Grant: ...
    def interaction(self, body: Optional[bytes] = None) -> InteractionReport: ...
    def reload(self) -> ReloadReport: ...
    def providers(self) -> ProviderList: ...
    def health(self) -> Health: ...
    @property
    def worst_case_ms(self) -> float: ...
    @property
    def role_name(self) -> str: ...
    @property
    def principal(self) -> str: ...
    @property
    def data_dir(self) -> Path: ...
    @property
    def decision_log_path(self) -> Optional[Path]: ...
    def flush_decision_log(self) -> None: ...
