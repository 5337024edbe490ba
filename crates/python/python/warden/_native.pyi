"""Types of ``warden._native``, Warden's Rust core in this process. Use it
through :class:`warden.Warden`, which gives it the HTTP client's types and
errors; the answers here are the daemon's JSON, as Python objects, except an
evaluation, which is the client's :class:`warden.Evaluation` (its ``raw`` the
daemon's JSON)."""

from typing import Any, Dict, List, Mapping, Optional

from warden.client import Evaluation

__version__: str

class ConfigError(ValueError):
    """The configuration was refused: args are (message, file, key, reason, line, column)."""

class ApiError(Exception):
    """What the daemon would answer with an HTTP error: args are (status, code, message, details)."""

class Deferred:
    """The fields of an in-process :class:`warden.Evaluation` made on first read."""

    raw: Dict[str, Any]
    stages: List[Dict[str, Any]]

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
        tool_name: str,
        tool_input: Optional[Mapping[str, Any]] = None,
        tool_call_id: Optional[str] = None,
        context: Optional[Mapping[str, Any]] = None,
    ) -> Evaluation: ...
    def evaluate_json(self, body: bytes) -> Evaluation: ...
    def submit_tool_calls(self, thread_id: str, run_id: str, body: bytes) -> Dict[str, Any]: ...
    def approvals(self, thread_id: str, include_resolved: bool = False) -> List[Dict[str, Any]]: ...
    def resume(
        self, thread_id: str, approval_id: str, body: bytes, idempotency_key: Optional[str] = None
    ) -> Dict[str, Any]: ...
    def grants(self, include_inactive: bool = False) -> List[Dict[str, Any]]: ...
    def revoke_grant(self, grant_id: str, reviewer: Optional[str] = None) -> Dict[str, Any]: ...
    def interaction(self, body: Optional[bytes] = None) -> Dict[str, Any]: ...
    def reload(self) -> Dict[str, Any]: ...
    def providers(self) -> Dict[str, Any]: ...
    def health(self) -> Dict[str, Any]: ...
    @property
    def role_name(self) -> str: ...
    @property
    def principal(self) -> str: ...
    @property
    def data_dir(self) -> str: ...
