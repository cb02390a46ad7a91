"""torchjax._dynamo.explain(fn)(*args): the graph breaks of a function, without running it.

The function is traced as torchjax.compile would trace it, and every state change is undone
afterwards. To list more than the first break, the tensor methods that read values (`item`,
`bool`, `tolist`, `numpy`, printing, ...) are patched for the length of the trace: on a traced
tensor they note the break and hand back a placeholder (zeros, False), so the trace goes on
past it. Only explain does this; a compiled function stops at its first break. A break that
cannot be stepped over (a shape that depends on values) ends the list.
"""

from __future__ import annotations

import traceback

import numpy as np
from jax.core import Tracer

from .. import _printing
from .._functionalize import tree_flatten
from .._tensor import Tensor
from .._x64 import scope
from . import _discover
from ._breaks import _NEEDS_VALUES, GraphBreak, _is_internal, classify
from ._compiled import _TRACING, _known
from ._trace import trace


class BreakReason:
    """One graph break: why, and where in the user's code (innermost frame last)."""

    def __init__(self, reason: str, user_stack: list):
        self.reason = reason
        self.user_stack = user_stack

    def __repr__(self) -> str:
        where = self.user_stack[-1] if self.user_stack else "?"
        return f"BreakReason(reason={self.reason!r}, at={where})"


class ExplainOutput:
    """What explain found (the fields of PyTorch's ExplainOutput that apply here)."""

    def __init__(self, break_reasons, op_count, ops_per_graph):
        self.break_reasons = break_reasons
        self.graph_break_count = len(break_reasons)
        self.graph_count = len(break_reasons) + 1
        self.op_count = op_count
        self.ops_per_graph = ops_per_graph
        self.graphs = []
        self.out_guards = []
        self.compile_times = ""

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, b in enumerate(self.break_reasons, 1):
            lines.append(f"  Break Reason {i}:")
            lines.append(f"    Reason: {b.reason}")
            lines.append("    User Stack:")
            lines.extend(f"      {f}" for f in b.user_stack)
        return "\n".join(lines)

    __repr__ = __str__


def _user_stack() -> list:
    return [f"{fr.filename}:{fr.lineno} in {fr.name}" for fr in traceback.extract_stack()
            if not _is_internal(fr.filename)]


def _placeholder(name, t):
    a = t._data
    zero = np.zeros(a.shape, dtype=np.dtype(a.dtype) if a.dtype != "bfloat16" else np.float32)
    if name in ("item",):
        return zero.reshape(()).item() if a.size == 1 else 0
    if name == "tolist":
        return zero.tolist()
    if name in ("numpy", "__array__"):
        return zero
    if name == "__bool__":
        return False
    if name in ("__float__",):
        return 0.0
    if name in ("__int__", "__index__"):
        return 0
    if name == "__complex__":
        return 0j
    return f"tensor(<traced {list(a.shape)} {a.dtype}>)"


def explain(fn, *extra_args, **extra_kwargs):
    """explain(fn)(*args, **kwargs) -> ExplainOutput (PyTorch's torch._dynamo.explain)."""
    if extra_args or extra_kwargs:  # the old form explain(fn, *args)
        return explain(fn)(*extra_args, **extra_kwargs)

    def inner(*args, **kwargs):
        reasons: list = []
        patched = {}

        def patch(name, owner):
            original = getattr(owner, name)

            def replacement(self, *a, **k):
                if isinstance(self, Tensor) and isinstance(self._data, Tracer):
                    reasons.append(BreakReason(_NEEDS_VALUES[name], _user_stack()))
                    return _placeholder(name, self)
                return original(self, *a, **k)
            patched[(owner, name)] = original
            setattr(owner, name, replacement)

        for name in ("item", "tolist", "numpy", "__array__", "__bool__", "__float__",
                     "__int__", "__index__", "__complex__", "__format__"):
            patch(name, Tensor)
        original_repr = _printing.tensor_repr

        def repr_hook(t, *a, **k):
            if isinstance(t._data, Tracer):
                reasons.append(BreakReason(_NEEDS_VALUES["tensor_repr"], _user_stack()))
                return _placeholder("repr", t)
            return original_repr(t, *a, **k)
        _printing.tensor_repr = repr_hook
        op_count = 0
        _TRACING[0] += 1
        try:
            leaves, _ = tree_flatten((args, kwargs))
            inputs = [x for x in leaves if isinstance(x, Tensor)]
            src = _discover.roots(fn, args, kwargs)
            state, _ = _discover.walk(src)
            with scope():  # traced as torchjax.compile traces: in torchjax's x64 scope
                traced = trace(fn, args, kwargs, _known(inputs, state), src)
            op_count = len(traced.jaxpr.jaxpr.eqns)
        except Exception as e:
            brk = classify(e)
            if brk is None:
                raise
            reasons.append(BreakReason(brk.reason, [brk.where] if brk.where else []))
        finally:
            _TRACING[0] -= 1
            for (owner, name), original in patched.items():
                setattr(owner, name, original)
            _printing.tensor_repr = original_repr
        return ExplainOutput(reasons, op_count, [op_count])

    return inner


__all__ = ["explain", "ExplainOutput", "BreakReason", "GraphBreak"]
