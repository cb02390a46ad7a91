"""A custom Function called on traced values (inside torchjax.func transforms, checkpoint's
recomputation, or a jax transform of torchjax code).

There JAX, not the tape, differentiates: the Function becomes a jax.custom_vjp whose forward
is the user's forward and whose backward is the user's backward, so JAX uses the custom
gradient instead of differentiating through the forward's ops (which would be wrong for
straight-through estimators and the like).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._autograd.grad_mode import no_grad
from .._tensor import Tensor

# torchjax.compile sets this while it traces a step: tensors hold tracers there, yet the tape
# records as in eager mode (backward() runs inside the trace), so Functions take the eager path
TAPE_TRACING = [False]


def is_traced(args) -> bool:
    if TAPE_TRACING[0]:
        return False
    return any(isinstance(a, Tensor) and isinstance(a._data, jax.core.Tracer) for a in args)


class _Saved:
    """ctx.saved_tensors' entry during the traced backward: the residual as a Tensor."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def unpack(self, node):
        return self.tensor


def _sum_to(g, shape):
    """A gradient broadcast against its input, summed back to the input's shape."""
    if g.shape == tuple(shape):
        return g
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead > 0 else g
    axes = tuple(i for i, (a, b) in enumerate(zip(g.shape, shape)) if b == 1 and a != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


def _float0_zeros(x):
    return jnp.zeros(jnp.shape(x), jax.dtypes.float0)


def apply_traced(cls, args: tuple, new_style: bool):
    pos = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    is_tensor = tuple(isinstance(a, Tensor) for a in args)
    state: dict = {}  # the forward's ctx and output layout, read by the backward trace

    def run_forward(arrays):
        a = list(args)
        for i, x in zip(pos, arrays):
            a[i] = Tensor._wrap(x)
        ctx = cls._backward_cls(is_tensor, is_tensor)
        with no_grad():
            if new_style:
                out = cls.forward(*a)
                cls.setup_context(ctx, tuple(a), out)
            else:
                out = cls.forward(ctx, *a)
        outs = out if isinstance(out, tuple) else (out,)
        state["layout"] = (isinstance(out, tuple),
                           tuple(None if isinstance(o, Tensor) else o for o in outs))
        return ctx, tuple(o._data for o in outs if isinstance(o, Tensor))

    @jax.custom_vjp
    def f(*arrays):
        return run_forward(arrays)[1]

    def fwd(*arrays):
        ctx, outs = run_forward(arrays)
        saved = tuple(None if t is None else t._data for t in (ctx.to_save or ()))
        ctx.to_save = None
        state["ctx"] = ctx
        return outs, (saved, arrays)

    def bwd(res, cts):
        saved, arrays = res
        ctx = state["ctx"]
        ctx._fn_saved = tuple(None if s is None else _Saved(Tensor._wrap(s)) for s in saved)
        grads_in = []
        for ct in cts:
            if ct.dtype == jax.dtypes.float0:
                grads_in.append(None if not ctx.materialize_grads else
                                Tensor._wrap(jnp.zeros(ct.shape, jnp.float32)))
            else:
                grads_in.append(Tensor._wrap(ct))
        with no_grad():
            res_grads = ctx._user_backward()(ctx, *grads_in)
        if not isinstance(res_grads, tuple):
            res_grads = (res_grads,)
        out = []
        for i, x in zip(pos, arrays):
            g = res_grads[i] if i < len(res_grads) else None
            if not jnp.issubdtype(x.dtype, jnp.inexact):
                out.append(_float0_zeros(x))
            elif g is None:
                out.append(jnp.zeros_like(x))
            else:
                out.append(_sum_to(g._data, x.shape).astype(x.dtype))
        return tuple(out)

    f.defvjp(fwd, bwd)
    arrays = f(*(args[i]._data for i in pos))
    is_tuple, layout = state["layout"]
    it = iter(arrays)
    outs = tuple(Tensor._wrap(next(it)) if o is None else o for o in layout)
    return outs if is_tuple else outs[0]
