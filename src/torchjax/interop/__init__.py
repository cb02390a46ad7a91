"""torchjax.interop: move code between torchjax and pure JAX.

`from_jax(fn)` turns a pure JAX function into a torchjax op: it runs as one jitted call on
the tensors' arrays, and its backward (to any order) is JAX's own vjp of `fn`.
"""

from __future__ import annotations

import functools

import jax

from .._jax_node import edge_of, record
from .._tensor import Tensor
from .._x64 import scoped

__all__ = ["from_jax"]


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def from_jax(fn=None, *, name: str | None = None):
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
    if fn is None:
        return functools.partial(from_jax, name=name)
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
            entry = flat_fns[key] = _flatten(fn, treedef, where, statics, len(leaves))
        flat, out_tree = entry
        tensors = [leaves[i] for i in where]
        outs = record(flat, tuple(t._data for t in tensors),
                      tuple(edge_of(t) for t in tensors), f"{label}Backward")
        return jax.tree_util.tree_unflatten(out_tree[0], outs)

    return op


def _flatten(fn, treedef, where, statics, n):
    """fn as a function of the tensor arrays only, returning a flat tuple of arrays."""
    out_tree = [None]

    def flat(*arrays):
        leaves = [None] * n
        for i, a in zip(where, arrays):
            leaves[i] = a
        for i, v in statics:
            leaves[i] = v
        args, kwargs = jax.tree_util.tree_unflatten(treedef, leaves)
        outs, out_tree[0] = jax.tree_util.tree_flatten(fn(*args, **kwargs))
        return tuple(outs)

    return flat, out_tree
