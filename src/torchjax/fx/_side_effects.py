"""Functions whose call nodes dead-code elimination keeps (torch.fx.node.has_side_effect)."""

from __future__ import annotations

import operator

_SIDE_EFFECTFUL: set = {operator.setitem, print}


def has_side_effect(fn):
    """Marks fn so that eliminate_dead_code never erases a call of it; returns fn."""
    _SIDE_EFFECTFUL.add(fn)
    return fn


def is_side_effectful(fn) -> bool:
    if fn in _SIDE_EFFECTFUL:
        return True
    orig = getattr(fn, "_fx_original", None)
    return orig is not None and orig in _SIDE_EFFECTFUL or \
        getattr(fn, "__name__", "") in ("_assert", "_record_function_enter",
                                        "_record_function_exit")
