"""Turn a Python callable over torchjax Tensors into a pure function of jax arrays.

torchjax.func and torchjax.autograd.functional apply JAX's own transforms (vjp, jvp, vmap) to
user code written against Tensors. Every op is a nested jit that runs on tracers, so a pure
version of `f` only has to wrap the incoming arrays (tracers) as Tensors, call `f`, and hand
the arrays of the Tensor outputs back to JAX. The wrapped inputs never require grad, so the
tape records nothing for them (only for tensors `f` captures that require grad; those nodes
die with the call).

Arguments and results are PyTorch pytrees: tuples, lists, dicts (insertion order kept, as
torch.utils._pytree does, unlike jax.tree_util which sorts keys), namedtuples; everything else,
None included, is a leaf.
"""

from __future__ import annotations

import collections
from typing import Any

from ._autograd.grad_mode import enable_grad
from ._tensor import Tensor

LEAF = "*"


# -- pytrees ---------------------------------------------------------------------------------

def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _flatten(x, leaves: list):
    t = type(x)
    if t is tuple or t is list or _is_namedtuple(x):
        return (t, None, tuple(_flatten(c, leaves) for c in x))
    if t is dict or t is collections.OrderedDict or t is collections.defaultdict:
        keys = tuple(x)
        ctx = (keys, x.default_factory) if t is collections.defaultdict else keys
        return (t, ctx, tuple(_flatten(x[k], leaves) for k in keys))
    leaves.append(x)
    return LEAF


def tree_flatten(tree) -> tuple[list, Any]:
    """(leaves, spec) of a PyTorch-style pytree."""
    leaves: list = []
    spec = _flatten(tree, leaves)
    return leaves, spec


def tree_unflatten(leaves, spec):
    return _unflatten(iter(leaves), spec)


def _unflatten(it, spec):
    if spec == LEAF:
        return next(it)
    t, ctx, children = spec
    vals = [_unflatten(it, c) for c in children]
    if t is tuple:
        return tuple(vals)
    if t is list:
        return vals
    if t is dict or t is collections.OrderedDict:
        return t(zip(ctx, vals))
    if t is collections.defaultdict:
        keys, factory = ctx
        return collections.defaultdict(factory, zip(keys, vals))
    return t(*vals)  # a namedtuple


def num_leaves(spec) -> int:
    if spec == LEAF:
        return 1
    return sum(num_leaves(c) for c in spec[2])


def spec_str(spec) -> str:
    """A spec printed the way torch.utils._pytree prints a TreeSpec (for error messages)."""
    if spec == LEAF:
        return "*"
    t, ctx, children = spec
    name = t.__name__
    if t is dict or t is collections.OrderedDict:
        ctx_s = repr(list(ctx))
    elif t is collections.defaultdict:
        ctx_s = repr(list(ctx[0]))
    else:
        ctx_s = "None"
    return f"TreeSpec({name}, {ctx_s}, [{', '.join(spec_str(c) for c in children)}])"


def broadcast_prefix(prefix, spec):
    """The leaves of `prefix` broadcast to the leaves of the tree `spec` describes, or None
    when `prefix` is not a prefix of that tree (torch's _broadcast_to_and_flatten)."""
    out: list = []
    if not _broadcast(prefix, spec, out):
        return None
    return out


def _broadcast(prefix, spec, out) -> bool:
    if not _is_container(prefix):
        out.extend([prefix] * num_leaves(spec))
        return True
    if spec == LEAF:
        return False
    t, ctx, children = spec
    if type(prefix) is not t or len(prefix) != len(children):
        return False
    if t is dict or t is collections.OrderedDict or t is collections.defaultdict:
        keys = ctx[0] if t is collections.defaultdict else ctx
        if set(prefix) != set(keys):
            return False
        items = [prefix[k] for k in keys]
    else:
        items = list(prefix)
    return all(_broadcast(p, c, out) for p, c in zip(items, children))


def _is_container(x) -> bool:
    t = type(x)
    return (t is tuple or t is list or t is dict or t is collections.OrderedDict
            or t is collections.defaultdict or _is_namedtuple(x))


# -- Tensors <-> arrays ----------------------------------------------------------------------

def wrap(array) -> Tensor:
    """A Tensor over a jax array or tracer; it does not require grad, so no tape inside."""
    return Tensor._wrap(array)


def split_tensors(tree):
    """Flatten a pytree into (arrays of its Tensor leaves, a template to rebuild it).

    The template keeps the non-Tensor leaves, which stay Python objects outside the JAX
    transform (auxiliary outputs may hold numbers, strings, ...)."""
    leaves, spec = tree_flatten(tree)
    positions = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    arrays = [leaves[i]._data for i in positions]
    others = [None if isinstance(x, Tensor) else x for x in leaves]
    return arrays, (spec, positions, others)


def join_tensors(arrays, template):
    """Inverse of split_tensors: Tensors over `arrays` put back into the pytree."""
    spec, positions, others = template
    leaves = list(others)
    for i, a in zip(positions, arrays):
        leaves[i] = wrap(a)
    return tree_unflatten(leaves, spec)


class Box:
    """Carries Python-side facts (output structure, auxiliary objects) out of a traced call:
    JAX only returns arrays, and the traced function runs once per call."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = None


def pure_function(func, args: tuple, kwargs: dict, slots, post, differentiating=False,
                  inputs: Box | None = None):
    """func(*args, **kwargs) as a function of the arrays at some of the flattened argument
    leaves.

    slots: indices into tree_flatten(args)[0] that become array parameters (in order);
    post: turns func's raw result into what the pure function returns (arrays only);
    differentiating: func runs with grad mode on, whatever the caller's mode (a derivative
    transform respects no_grad inside func, not around the transform, as in PyTorch);
    inputs: receives [(wrapped input Tensor, its array)] before func runs, so that post can
    see which inputs func changed in place.
    """
    leaves, spec = tree_flatten(args)
    slots = tuple(slots)

    def pure(*arrays):
        new = list(leaves)
        for i, a in zip(slots, arrays):
            new[i] = wrap(a)
        if inputs is not None:
            inputs.value = [(new[i], a) for i, a in zip(slots, arrays)]
        if differentiating:
            with enable_grad():
                out = func(*tree_unflatten(new, spec), **kwargs)
        else:
            out = func(*tree_unflatten(new, spec), **kwargs)
        return post(out)

    return pure
