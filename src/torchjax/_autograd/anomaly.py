"""Anomaly detection: remember where each graph node was created, and check backward for NaN.

While enabled, every recorded node keeps the Python stack of the line that created it (the
user's frames, not torchjax's own), and the backward engine runs node by node, checking each
node's gradients. A failing node warns with that stack and raises PyTorch's errors.
"""

from __future__ import annotations

import os
import traceback
import warnings
import weakref

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _State:
    # process-wide, as PyTorch's anomaly mode is (and read on every node creation)
    __slots__ = ("enabled", "check_nan")

    def __init__(self):
        self.enabled = False
        self.check_nan = True


STATE = _State()
_STACKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def is_anomaly_enabled() -> bool:
    return STATE.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return STATE.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """torch.set_anomaly_enabled: the process-wide switch set_detect_anomaly sets, without a
    context to restore it (and, as PyTorch's, without the warning)."""
    if not isinstance(enabled, bool):
        raise TypeError(f"set_anomaly_enabled(): argument 'enabled' (position 1) must be bool, "
                        f"not {type(enabled).__name__}")
    STATE.enabled, STATE.check_nan = enabled, bool(check_nan)


def _warn_enabled():
    warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and "
                  "should only be enabled for debugging.", stacklevel=3)


class detect_anomaly:
    """Context manager (and decorator) turning anomaly detection on inside it."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self.prev = STATE.enabled
        self.prev_check_nan = STATE.check_nan
        _warn_enabled()

    def __enter__(self) -> None:
        self.prev, self.prev_check_nan = STATE.enabled, STATE.check_nan
        STATE.enabled, STATE.check_nan = True, self.check_nan

    def __exit__(self, *args) -> None:
        STATE.enabled, STATE.check_nan = self.prev, self.prev_check_nan

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off; as a context manager, restore the previous mode."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev, self.prev_check_nan = STATE.enabled, STATE.check_nan
        STATE.enabled, STATE.check_nan = bool(mode), bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args) -> None:
        STATE.enabled, STATE.check_nan = self.prev, self.prev_check_nan


def remember(node) -> None:
    """Keep the creating stack of `node` (called by Node.__init__ while enabled)."""
    frames = [f for f in traceback.extract_stack()
              if not os.path.abspath(f.filename).startswith(_PACKAGE)]
    _STACKS[node] = "".join(traceback.format_list(frames))


def warn_forward_stack(node) -> None:
    stack = _STACKS.get(node)
    if stack is None:
        return
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                  f"the error:\n{stack}", stacklevel=2)


def check_grads(node, grads) -> None:
    """Raise PyTorch's error when a node's backward produced NaN."""
    if not STATE.check_nan:
        return
    import jax.numpy as jnp
    for i, g in enumerate(grads):
        if g is None:
            continue
        arr = getattr(g, "_data", g)
        if jnp.issubdtype(arr.dtype, jnp.inexact) and bool(jnp.isnan(arr).any()):
            warn_forward_stack(node)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                               f"{i}th output.")
