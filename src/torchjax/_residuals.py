"""Rows whose backward reads the intermediate values their forward kept (JAX's residuals).

Eagerly, a recorded op keeps its inputs and its backward (_pure.BackwardSpec) runs the
forward again under jax.vjp. For most rows that costs little: XLA keeps only what the
gradient reads. An RNN's gradient reads every step's gates, so its backward re-ran the whole
scan: the 2-layer LSTM of bench_startup spent about a third of its backward there, and the
node's program compiled the forward scan a second time (docs/performance_startup.md).

A row marked `residuals=True` therefore runs its forward, when it is recorded, as
jax.vjp's forward: the program returns the outputs and the residuals (the leaves of the
vjp function), the node keeps the residuals after its usual saved values, and its backward
(ResidualSpec) applies the vjp's linear map to them. The map itself (the tree of the vjp
function: a jaxpr and how the residuals enter it) depends only on the call's kind and
argument shapes: it is captured while the forward program is traced, or, when that program
came from the program cache, by tracing the forward abstractly (jax.eval_shape) the first
time a backward program must be traced. Both programs are named for the program cache.

The node keeps its inputs as before: create_graph's differentiable backward (_jax_node)
re-runs the forward from them (the residuals are constants to a second derivative).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.api_util import shaped_abstractify

from . import _programs
from ._pure import _make_pure, at_positions, inexact_outputs, pytorch_complex_convention

_FORWARDS: dict = {}  # (row, statics, compute dtype, diff) -> the forward program
_TREES: dict = {}     # (row, statics, compute dtype, diff, avals) -> _Tree
_SPECS: dict = {}     # (eager spec, avals) -> ResidualSpec


class _Tree:
    """What a backward needs to rebuild the vjp function from its residuals."""

    __slots__ = ("tree", "kept", "single", "outs")

    def __init__(self, tree, kept, single, outs):
        self.tree = tree      # the vjp function's pytree structure
        self.kept = kept      # positions of the differentiable outputs (tuple results)
        self.single = single  # the row returns one array
        self.outs = outs      # avals of the differentiable outputs (zeros for missing cts)


def avals_of(arrays) -> tuple:
    """The call's argument avals as a key of plain values (shape, dtype name, weak type), in
    the pytree layout of `arrays` (None stays None, lists are tuples): hashable, and named
    the same in every process (the program cache's ident)."""
    return tuple(None if a is None else
                 tuple(_aval(x) for x in a) if isinstance(a, (tuple, list)) else _aval(a)
                 for a in arrays)


def _aval(x):
    a = shaped_abstractify(x)
    return (a.shape, a.dtype.name, a.weak_type)


def _structs(avals) -> list:
    """jax.ShapeDtypeStructs for an avals_of key (jax.eval_shape's arguments)."""
    def struct(k):
        return jax.ShapeDtypeStruct(k[0], jnp.dtype(k[1]), weak_type=k[2])

    def single(a):
        return len(a) == 3 and isinstance(a[1], str)

    return [None if a is None else struct(a) if single(a) else tuple(map(struct, a))
            for a in avals]


def _struct_of(x):
    a = shaped_abstractify(x)
    return jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)


def _vjp_forward(prep, stat, cd, diff):
    """fn(*arrays) -> (outputs, residual leaves), recording the vjp's tree per avals."""
    fwd = _make_pure(prep, stat, cd, None)
    base = (prep, stat, cd, diff)

    def forward(*arrays):
        key = base + (avals_of(arrays),)
        g, primals = at_positions(
            fwd, [list(a) if isinstance(a, tuple) else a for a in arrays], diff)
        h, kept, single = inexact_outputs(g)
        diffed, vjp, outs = jax.vjp(h, *primals, has_aux=True)
        leaves, tree = jax.tree_util.tree_flatten(vjp)
        if key not in _TREES:
            _TREES[key] = _Tree(tree, tuple(kept), single[0],
                                jax.tree_util.tree_map(_struct_of, diffed))
        return outs, tuple(leaves)

    return forward


def forward(prep, stat, cd, arrays, diff):
    """(outputs, residuals, avals) of this call run as its vjp's forward."""
    key = (prep, stat, cd, diff)
    f = _FORWARDS.get(key)
    if f is None:
        ident = _programs.ident_of("residual forward", prep.op.name, prep.op.fn, stat,
                                   tuple(map(type, stat)), cd, diff)
        f = _FORWARDS[key] = _programs.program(_vjp_forward(prep, stat, cd, diff), ident)
    outs, residuals = f(*arrays)
    return outs, residuals, avals_of(arrays)


class ResidualSpec:
    """The backward of a `residuals=True` call of one kind and argument shapes, in the
    interface of _pure.BackwardSpec (pure, jit, edge_of, n_edges, slots, ident). The node's
    saved tuple is the eager one with the residuals appended; `eager` is the BackwardSpec
    that recomputes from the inputs (create_graph uses it)."""

    __slots__ = ("pure", "jit", "edge_of", "n_edges", "slots", "ident", "eager", "_key")

    def __init__(self, eager, prep, stat, cd, diff, avals):
        self.eager = eager
        self.edge_of, self.n_edges, self.slots = eager.edge_of, eager.n_edges, eager.slots
        self._key = (prep, stat, cd, diff, avals)
        self.ident = eager.ident and _programs.ident_of("residual backward", eager.ident,
                                                        avals)

        def pure(saved, cts):
            t = self._tree()
            vjp = jax.tree_util.tree_unflatten(t.tree, saved[-1])
            if t.single:
                ct = cts[0] if cts[0] is not None else jnp.zeros(t.outs.shape, t.outs.dtype)
            else:
                ct = tuple(cts[k] if cts[k] is not None else jnp.zeros(o.shape, o.dtype)
                           for k, o in zip(t.kept, t.outs))
            return vjp(ct)

        self.pure = pytorch_complex_convention(pure)
        self.jit = _programs.program(self.pure, self.ident)

    def _tree(self) -> _Tree:
        t = _TREES.get(self._key)
        if t is None:  # the forward program came from the program cache: trace it abstractly
            prep, stat, cd, diff, avals = self._key
            jax.eval_shape(_vjp_forward(prep, stat, cd, diff), *_structs(avals))
            t = _TREES[self._key]
        return t

    def run(self, saved, cts):
        from ._view_grad import run_spec
        return run_spec(self, saved, cts)


def spec_for(eager, prep, stat, cd, diff, avals) -> ResidualSpec:
    key = (eager, avals)
    spec = _SPECS.get(key)
    if spec is None:
        spec = _SPECS[key] = ResidualSpec(eager, prep, stat, cd, diff, avals)
    return spec
