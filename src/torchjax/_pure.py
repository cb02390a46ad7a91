"""A row as a pure function of arrays: the forward of one call (statics bound, inputs cast
to the compute dtype) and the backward of one recorded call (BackwardSpec).

Both are plain JAX functions; _dispatch.py runs them eagerly through cached jax.jit calls and
the fused backward (_autograd/engine.py) traces many specs into one program.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import _programs
from ._autocast import Cast
from ._tensor import Tensor
from ._view_grad import run_spec

_SCALARS = (bool, int, float, complex, np.number, np.bool_)
_T, _L, _S = 0, 1, 2  # kinds of dynamic parameters: tensor, tensor list, scalar


def _cast(v, dtype):
    if v is None:
        return None
    return jnp.asarray(v, dtype=dtype.np) if v.__class__ in _SCALARS or v.dtype != dtype.np \
        else v


def _types(stat):
    """The types of the static arguments, inside tuples too ((5,) and (5.0,) are equal keys
    but may compile differently, e.g. a pooling stride)."""
    if not stat:  # most pointwise rows have no static arguments
        return ()
    types = tuple(map(type, stat))
    if tuple in types:
        return tuple(_types(v) if type(v) is tuple else k for v, k in zip(stat, types))
    return types


def _make_pure(prep, stat: tuple, cd, out_cast):
    """The row's function of dynamic arrays, with statics bound and inputs cast to cd."""
    op = prep.op
    static_kw = dict(zip(op.statics, stat))
    names, kinds, fn = prep.names, prep.promote_kinds, op.fn
    if isinstance(cd, Cast):
        return _make_autocast_pure(names, prep.kinds, fn, static_kw, cd, out_cast)

    def pure(*dyn):
        kw = dict(static_kw)
        for n, k, v in zip(names, kinds, dyn):
            if cd is not None:
                if k == _T:
                    v = _cast(v, cd)
                elif k == _L:
                    v = tuple(_cast(x, cd) for x in v)
            kw[n] = v
        out = fn(**kw)
        if out_cast is not None:
            out = out.astype(out_cast.np)
        return out

    return pure


def _make_autocast_pure(names, kinds, fn, static_kw, cast, out_cast):
    """_make_pure for a row that promotes nothing itself, under autocast: every tensor
    argument (promote_args or not) is eligible for the cast, as in PyTorch."""

    def pure(*dyn):
        kw = dict(static_kw)
        for n, k, v in zip(names, kinds, dyn):
            if k == _T:
                v = cast.apply(v)
            elif k == _L:
                v = tuple(cast.apply(x) for x in v)
            kw[n] = v
        out = fn(**kw)
        if out_cast is not None:
            out = out.astype(out_cast.np)
        return out

    return pure


def _hashable(v):
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, Tensor):
        raise TypeError("expected a Python value here, got a Tensor")
    if isinstance(v, np.ndarray):
        return tuple(v.tolist())
    return v


def _conj_complex(xs):
    return tuple(jnp.conj(x) if x is not None and jnp.iscomplexobj(x) else x for x in xs)


def pytorch_complex_convention(pure):
    """A node's backward with PyTorch's convention for complex gradients.

    For complex tensors PyTorch's gradients are the conjugates of the cotangents jax.vjp
    works with, so complex cotangents are conjugated on the way into the VJP and complex
    gradients on the way out. Real arrays pass through untouched (the check is on static
    dtypes, so it costs nothing in the compiled program); between two nodes the two
    conjugations cancel."""

    def wrapped(saved, cts):
        return _conj_complex(pure(saved, _conj_complex(cts)))

    return wrapped


def _from_result(prep, cd) -> bool:
    """Whether this call's backward reads the result (the row's result_grad) instead of
    re-running the op; only for real floating results, where the rule needs no conjugation."""
    return prep.result_grad is not None and cd is not None and cd.is_floating_point


def vjp_of_inexact(f, primals, cts):
    """The vjp of f at primals for cotangents `cts` (one per output of f, None for none):
    integer and boolean outputs take no cotangent, missing ones are zeros."""
    kept = []  # which outputs are differentiable, found while tracing

    def g(*d):
        outs = f(*d)
        if isinstance(outs, (tuple, list)):
            kept[:] = [k for k, o in enumerate(outs) if jnp.issubdtype(o.dtype, jnp.inexact)]
            return tuple(outs[k] for k in kept)
        return outs

    outs, vjp = jax.vjp(g, *primals)
    if isinstance(outs, tuple):
        ct = tuple(cts[k] if cts[k] is not None else jnp.zeros_like(o)
                   for k, o in zip(kept, outs))
    else:
        ct = cts[0] if cts[0] is not None else jnp.zeros_like(outs)
    return vjp(ct)


def inexact_outputs(f):
    """(g, kept, single) for jax.vjp(g, ..., has_aux=True): g(*d) returns f's differentiable
    (inexact) outputs and, as aux, all of them; once traced, `kept` lists the positions of
    the differentiable ones of a tuple result and single[0] says f returned one array."""
    kept: list = []
    single = [True]

    def g(*d):
        outs = f(*d)
        if isinstance(outs, (tuple, list)):
            single[0] = False
            kept[:] = [k for k, o in enumerate(outs) if jnp.issubdtype(o.dtype, jnp.inexact)]
            return tuple(outs[k] for k in kept), outs
        return outs, outs

    return g, kept, single


def at_positions(fwd, args, diff):
    """(g, primals): g(*d) is fwd(*args) with the `diff` positions replaced by d ((i, -1) for
    argument i, (i, j) for element j of list argument i; `args` holds lists for those), and
    primals the values at those positions."""

    def g(*d):
        a = [list(x) if isinstance(x, list) else x for x in args]
        for (i, j), v in zip(diff, d):
            if j < 0:
                a[i] = v
            else:
                a[i][j] = v
        return fwd(*(tuple(x) if isinstance(x, list) else x for x in a))

    return g, [args[i] if j < 0 else args[i][j] for i, j in diff]


class BackwardSpec:
    """The backward of one (op, statics, dtype, differentiated inputs, unsaved shapes)."""

    # slots: per gradient, where its input sits in the saved tuple and its edge (create_graph)
    # ident: what names this backward across processes (the program cache, _programs.py),
    # or None when it cannot be named exactly
    __slots__ = ("pure", "jit", "edge_of", "n_edges", "slots", "ident")

    def __init__(self, prep, stat, cd, out_cast, diff, unsaved, n_edges):
        fwd = _make_pure(prep, stat, cd, out_cast)
        self.ident = _programs.ident_of(
            "backward", prep.op.name, prep.op.fn, stat, tuple(map(type, stat)), cd, out_cast,
            diff, unsaved, n_edges, prep.result_grad if _from_result(prep, cd) else None)
        self.n_edges = n_edges
        self.edge_of = _edge_index(prep, diff, n_edges)
        self.slots = tuple((i, j, e) for (i, j), e in zip(diff, self.edge_of))
        if _from_result(prep, cd):
            rule = prep.result_grad
            self.slots = ((0, -1, -1),)  # the saved result, reached through the node itself
            self.pure = lambda saved, cts: (rule(saved[0], cts[0]),)
            self.jit = _programs.program(self.pure, self.ident)
            return

        def pure(saved, cts):
            args = [list(a) if isinstance(a, tuple) else a for a in saved]
            for i, j, shape, dt in unsaved:  # inputs whose values the gradient does not use
                z = jnp.zeros(shape, dt)
                if j < 0:
                    args[i] = z
                else:
                    args[i][j] = z

            g, primals = at_positions(fwd, args, diff)
            return vjp_of_inexact(g, primals, cts)

        self.pure = pytorch_complex_convention(pure)
        self.jit = _programs.program(self.pure, self.ident)

    def run(self, saved, cts):
        return run_spec(self, saved, cts)


_SPECS: dict = {}


def _spec_for(prep, stat, cd, out_cast, diff, unsaved, n_edges):
    key = (prep, stat, tuple(map(type, stat)), cd, out_cast, diff, unsaved, n_edges)
    try:
        spec = _SPECS.get(key)
    except TypeError:
        stat = _hashable(stat)
        key = (prep, stat, tuple(map(type, stat)), cd, out_cast, diff, unsaved, n_edges)
        spec = _SPECS.get(key)
    if spec is None:
        spec = _SPECS[key] = BackwardSpec(prep, key[1], cd, out_cast, diff, unsaved, n_edges)
    return spec


def _edge_index(prep, diff, n_edges):
    # Edges are laid out per dynamic position: one for a tensor, len(list) for a list.
    # diff lists (i, j) in the same order, so walk both together.
    n_list = n_edges - sum(1 for k in prep.kinds if k == _T)
    idx = []
    for i, j in diff:
        e = 0
        for p, k in enumerate(prep.kinds):
            if p == i:
                e += 0 if j < 0 else j
                break
            if k == _T:
                e += 1
            elif k == _L:
                e += n_list
        idx.append(e)
    return tuple(idx)
