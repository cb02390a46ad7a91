"""torch.distributed.checkpoint.stateful: objects dcp.save asks for a state_dict() and
dcp.load gives the loaded one back through load_state_dict() (a model, an optimizer, a
user's wrapper of both)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["Stateful"]


@runtime_checkable
class Stateful(Protocol):
    """Anything with state_dict() and load_state_dict(state_dict)."""

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state_dict: dict[str, Any]) -> None: ...
