"""Hooks on every eagerly dispatched op's result, for subsystems that adjust results.

The core dispatcher knows nothing of the subsystems above it (the distributed package's
DTensor) nor of the policies that rarely apply (_device_dtypes.py). Each installs a function
`hook(op_name, inputs, result) -> result` here while it has work to do; with none installed
an op pays one attribute read. In-place ops keep their tensor, so they have no result to
adjust.
"""

from __future__ import annotations

__all__ = ["STATE", "install", "uninstall"]


class _State:
    hooks: tuple = ()  # run in order; empty when no subsystem needs them


STATE = _State()


def install(hook) -> None:
    if hook not in STATE.hooks:
        STATE.hooks = STATE.hooks + (hook,)


def uninstall(hook) -> None:
    STATE.hooks = tuple(h for h in STATE.hooks if h is not hook)
