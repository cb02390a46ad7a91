"""torch.sym_int, sym_float, sym_max, sym_min, sym_not, sym_sqrt, sym_sum, sym_ite,
sym_constrain_range(_for_size) and sym_fresh_size: the SymInt-aware helpers that code written
for torch.compile calls. torchjax's sizes are plain Python ints (torch.SymInt is int, see
types.py), so each is the plain Python operation, with PyTorch's result types."""

from __future__ import annotations

import math

__all__ = ["sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum",
           "sym_ite", "sym_constrain_range", "sym_constrain_range_for_size", "sym_fresh_size"]


def sym_int(a):
    """int(a), truncating toward zero."""
    return int(a)


def sym_float(a):
    return float(a)


def _widened(result, a, b):
    # a float on either side makes the result a float, as SymFloat's max/min do
    return float(result) if isinstance(a, float) or isinstance(b, float) else result


def sym_max(a, b):
    return _widened(max(a, b), a, b)


def sym_min(a, b):
    return _widened(min(a, b), a, b)


def sym_not(a):
    return not a


def sym_sqrt(a):
    return math.sqrt(a)


def sym_sum(*args):
    """The sum of a sequence of sizes (given as one iterable)."""
    items = args[0] if len(args) == 1 and not isinstance(args[0], (int, float)) else args
    return sum(items)


def sym_ite(b, t, f):
    """t if b else f, for a bool b and t, f of one type."""
    if not isinstance(b, bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_constrain_range(size, min=None, max=None) -> None:
    """Nothing to record: a plain int's range is its value."""


def sym_constrain_range_for_size(size, min=None, max=None) -> None:
    """Nothing to record: a plain int's range is its value."""


def sym_fresh_size(expr):
    return expr
