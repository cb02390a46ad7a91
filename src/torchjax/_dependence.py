"""Which outputs of a pure function have a derivative path from which inputs.

PyTorch's strict modes ask whether an output is reachable from an input on the autograd
graph. The JAX counterpart: linearize the function and follow the data flow of the linear
(tangent) program from its inputs to its outputs. Outputs whose tangent is a symbolic zero
(integer results, argmax, comparisons, constants) are not reached; jit calls are followed
into their bodies, other structured primitives count as depending on all their inputs.
"""

from __future__ import annotations

import jax
from jax.extend.core import Literal


def dependence(fn, arrays) -> list[list[bool]]:
    """deps[i][j]: output i of fn (a list of arrays) depends differentiably on input j."""
    # Linearized inside a trace, on abstract values: nothing runs. Linearizing the concrete
    # arrays would execute fn's primal part, and a jitted fn would then compile one more
    # program per input signature just to answer this question.
    box = []

    def linear_program(*xs):
        _, lin = jax.linearize(fn, *xs)
        box.append(jax.make_jaxpr(lin)(*xs))
        return ()

    jax.make_jaxpr(linear_program)(*[jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays])
    closed = box[0]
    masks = _reach(closed.jaxpr, [1 << j for j in range(len(arrays))])
    return [[bool(m >> j & 1) for j in range(len(arrays))] for m in masks]


def _sub_jaxpr(eqn):
    for key in ("jaxpr", "call_jaxpr"):
        sub = eqn.params.get(key)
        if sub is not None:
            return getattr(sub, "jaxpr", sub)
    return None


def _reach(jaxpr, in_masks) -> list[int]:
    env = dict(zip(jaxpr.invars, in_masks))

    def read(v):
        return 0 if isinstance(v, Literal) else env.get(v, 0)

    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        sub = _sub_jaxpr(eqn)
        if sub is not None and len(sub.invars) == len(ins) and len(sub.outvars) == len(
                eqn.outvars):
            outs = _reach(sub, ins)
        else:
            m = 0
            for x in ins:
                m |= x
            outs = [m] * len(eqn.outvars)
        for v, m in zip(eqn.outvars, outs):
            env[v] = m
    return [read(v) for v in jaxpr.outvars]
