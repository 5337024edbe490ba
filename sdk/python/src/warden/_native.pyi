# The native module's types (crates/python, PyO3), for type checkers: the
# module itself ships in the warden-guardrails-native wheel. A test holds this
# file to the built module's names.

from pathlib import Path
from typing import Any, Dict, List, Optional

from .answers import (
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
from .client import Evaluation

__version__: str

class ConfigError(ValueError):
    """args: (message, file, key, reason, line, column)."""

class ApiError(Exception):
    """args: (status, code, message, details)."""

class Deferred:
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
