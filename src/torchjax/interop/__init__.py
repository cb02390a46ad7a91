"""torchjax.interop: move code between torchjax and pure JAX.

`from_jax(fn)` turns a pure JAX function into a torchjax op: it runs as one jitted call on
the tensors' arrays, and its backward (to any order) is JAX's own vjp of `fn`.
"""

from __future__ import annotations

import functools

import jax

from .. import _programs
from .._jax_node import _forward, edge_of, record
from .._tensor import Tensor
from .._x64 import scoped

__all__ = ["from_jax"]


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def from_jax(fn=None, *, name: str | None = None, _every_input: bool = False):
    """Wrap a pure JAX function so it takes and returns torchjax Tensors.

    Tensors anywhere in the arguments (also inside tuples, lists and dicts) reach `fn` as jax
    arrays; every other argument is passed through unchanged and must be hashable (it keys the
    compile cache, like a static argument of jax.jit). The result may be an array or any
    pytree of arrays; it comes back with Tensors in place of the arrays. Gradients flow to
    every tensor argument that requires grad; the grad_fn is named ``<name>Backward``.

    Example::

        import jax.numpy as jnp
        import torchjax as torch
        from torchjax.interop import from_jax

        @from_jax
        def swish(x, beta):
            return x * jax.nn.sigmoid(beta * x)

        y = swish(torch.randn(3, requires_grad=True), 1.5)   # grad_fn=<swishBackward>
    """
    # (_every_input, torchjax's own: fn returns one array that depends on every tensor
    # argument, so its dependences need no trace)
    if fn is None:
        return functools.partial(from_jax, name=name, _every_input=_every_input)
    label = name or getattr(fn, "__name__", "JaxFunction")
    flat_fns: dict = {}

    @functools.wraps(fn)
    @scoped  # fn is traced in torchjax's x64 scope: it sees the dtypes of the tensors
    def op(*args, **kwargs):
        leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_tensor)
        where = tuple(i for i, x in enumerate(leaves) if _is_tensor(x))
        statics = tuple((i, x) for i, x in enumerate(leaves) if not _is_tensor(x))
        key = (treedef, where, tuple((i, type(x)) for i, x in statics), statics)
        try:
            entry = flat_fns.get(key)
        except TypeError:
            raise TypeError(f"from_jax({label}): non-tensor arguments must be hashable (they "
                            "key the compile cache); pass arrays as torchjax Tensors") from None
        if entry is None:
            entry = flat_fns[key] = _flatten(fn, treedef, where, statics, len(leaves)) + (
                _ident(fn, treedef, where, statics),)
        flat, whole, ident = entry
        tensors = [leaves[i] for i in where]
        arrays = tuple(t._data for t in tensors)
        # fn's result as fn returns it: its tree comes with the program (also with one the
        # program cache loaded, which was never traced here)
        out_leaves, out_tree = jax.tree_util.tree_flatten(_forward(whole, ident)(*arrays))
        # (torchjax's own functions of one array out that depends on every tensor argument,
        # a layout change, say so: finding it out is a trace per shape, in every process)
        reach = [[True] * len(tensors)] if _every_input else None
        outs = record(flat, arrays, tuple(edge_of(t) for t in tensors), f"{label}Backward",
                      reach=reach, ident=ident, outs=tuple(out_leaves))
        return jax.tree_util.tree_unflatten(out_tree, outs)

    return op


def _ident(fn, treedef, where, statics):
    """What names fn's program for the program cache (_programs.py), or None: fn is
    torchjax's own (a user's function is never named: its code is not part of the cache's
    key, so an edited one would load a stale program; it is traced in every process), the
    other arguments plain values or layouts, the containers builtin ones (the tree's text
    then says all of it)."""
    tree = str(treedef)
    if "CustomNode" in tree or "namedtuple" in tree or " at 0x" in tree:
        return None
    return _programs.ident_of("from_jax", fn, tree, where, statics)


def _flatten(fn, treedef, where, statics, n):
    """fn as a function of the tensor arrays only: (its result as a flat tuple of arrays,
    its result as fn returns it)."""
    def whole(*arrays):
        leaves = [None] * n
        for i, a in zip(where, arrays):
            leaves[i] = a
        for i, v in statics:
            leaves[i] = v
        args, kwargs = jax.tree_util.tree_unflatten(treedef, leaves)
        return fn(*args, **kwargs)

    def flat(*arrays):
        return tuple(jax.tree_util.tree_leaves(whole(*arrays)))

    return flat, whole
