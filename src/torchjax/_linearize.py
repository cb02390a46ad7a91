"""Ops linearized as they run, while torchjax.compile traces a step that calls backward().

Eagerly, a recorded op keeps its inputs and its backward re-runs the forward under jax.vjp
when (and if) a backward comes. Inside a compiled step's trace that costs twice: the
forward is traced once as the op runs and again, with JVP tracers, by its node's backward,
and the step's jaxpr holds both copies until XLA merges them. A step that differentiates
inside knows its backward is coming, so there each op runs under jax.vjp from the start: the
forward is traced once, and the node's backward only applies the linear map it kept
(measured on the GPT step of bench/bench_compile.py: docs/performance.md).

Only while `ACTIVE[0]` (set by the compiler around such a trace), for out-of-place ops over
real floating inputs and outputs, with no saved-tensor hooks (whose unpacked values the
backward must use). Everything else keeps the eager path, which stays correct here too.
"""

from __future__ import annotations

import jax.numpy as jnp

ACTIVE = [False]


def _real(x) -> bool:
    return not jnp.issubdtype(x.dtype, jnp.complexfloating)


def run(fwd, arrays, diff):
    """(outputs, backward) of fwd(*arrays) differentiated at the `diff` positions ((i, -1)
    for a tensor argument, (i, j) for element j of a tensor-list argument); backward(cts)
    gives one gradient per diff position. None when this call keeps the eager path."""
    import jax

    from ._pure import at_positions, inexact_outputs

    f, primals = at_positions(fwd, [list(a) if isinstance(a, tuple) else a for a in arrays],
                              diff)
    if not all(_real(p) for p in primals):
        return None  # complex: PyTorch's conjugate convention lives in the eager backward
    g, kept, single = inexact_outputs(f)
    diffed, vjp, outs = jax.vjp(g, *primals, has_aux=True)
    if not all(_real(o) for o in (diffed if not single[0] else (diffed,))):
        return None

    def backward(cts):
        if single[0]:
            ct = cts[0] if cts[0] is not None else jnp.zeros_like(diffed)
        else:
            ct = tuple(cts[k] if cts[k] is not None else jnp.zeros_like(o)
                       for k, o in zip(kept, diffed))
        return vjp(ct)

    return outs, backward


class Linearized:
    """A node's backward spec with the linear map of its forward (see the module doc):
    run() applies it; everything else (create_graph's recorded backward, the program
    identity) is the eager spec's."""

    __slots__ = ("spec", "backward")

    def __init__(self, spec, backward):
        self.spec = spec
        self.backward = backward

    def run(self, saved, cts):
        grads = self.backward(tuple(cts))
        res = [None] * self.spec.n_edges
        for k, g in zip(self.spec.edge_of, grads):
            res[k] = g
        return res

    def __getattr__(self, name):
        return getattr(self.spec, name)
