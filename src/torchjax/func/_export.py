"""A torchjax Module as a pure JAX function, and back.

    apply_fn, params, buffers = torchjax.func.functionalize(model)
    logits = apply_fn(params, buffers, x)        # x and the result are jax arrays
    grads = jax.grad(lambda p: loss(apply_fn(p, buffers, x), y))(params)
    ...                                          # jax.jit, jax.vmap, optax, sharding
    torchjax.func.load_params(model, params)     # the trained values back into the module

`params` and `buffers` are dicts of jax arrays keyed by state_dict names. apply_fn runs the
module's own forward with those arrays swapped in for its tensors (functional_call), so every
op is the op eager mode runs, on JAX's tracers. Random draws (dropout in training mode) come
from the `key` argument, one fold per draw, so a jitted apply_fn draws anew for each key; a
call that draws without a key raises instead of freezing one mask into the program.
"""

from __future__ import annotations

import jax
import numpy as np

from .. import _random
from .._functionalize import tree_flatten, tree_unflatten, wrap
from .._tensor import Tensor
from ._functional_call import functional_call

__all__ = ["functionalize", "load_params"]


def _arrays(named) -> dict:
    return {k: v._data for k, v in named}


def functionalize(model, *, return_buffers: bool = False):
    """(apply_fn, params, buffers) for a Module, where
    apply_fn(params, buffers, *args, key=None, **kwargs) is a pure JAX function of arrays.

    With return_buffers=True apply_fn returns (output, new_buffers): the buffers a training-mode
    forward updates (BatchNorm's running statistics) as new arrays; otherwise those updates are
    dropped, as a pure function must. For a plain function (PyTorch's
    torch.func.functionalize(func)) the function itself is returned: JAX programs are already
    free of mutation, and torchjax keeps an argument's in-place changes visible as PyTorch's
    functionalize does."""
    from ..nn.modules.module import Module
    if not isinstance(model, Module):
        if not callable(model):
            raise TypeError(f"functionalize expects a Module or a function, got "
                            f"{type(model).__name__}")
        return model
    params = _arrays(model.named_parameters())
    buffers = _arrays(model.named_buffers())

    def apply_fn(params, buffers, *args, key=None, **kwargs):
        given = {k: wrap(v) for k, v in params.items()}
        given.update((k, wrap(v)) for k, v in buffers.items())
        leaves, spec = tree_flatten((args, kwargs))
        args, kwargs = tree_unflatten([wrap(a) if isinstance(a, (jax.Array, jax.core.Tracer))
                                       else a for a in leaves], spec)
        draws = [0]

        def draw(gen, parts):
            if key is None:
                raise RuntimeError(
                    "functionalize: the model draws random numbers (dropout or another random "
                    "op in training mode); pass key=jax.random.key(...) to apply_fn, or call "
                    "model.eval() first")
            k = draws[0]
            draws[0] += 1
            return key, np.uint32(k)

        prev = _random.DRAW_HOOK
        _random.DRAW_HOOK = draw
        try:
            out = functional_call(model, given, args, kwargs)
        finally:
            _random.DRAW_HOOK = prev
        res = _unwrap(out)
        if return_buffers:
            return res, {k: given[k]._data for k in buffers}
        return res

    return apply_fn, params, buffers


def _unwrap(out):
    """Tensors in a result pytree replaced by their arrays (tuples, lists, dicts kept)."""
    if isinstance(out, Tensor):
        return out._data
    if isinstance(out, (list, tuple)):
        vals = [_unwrap(o) for o in out]
        return type(out)(*vals) if hasattr(type(out), "_fields") else type(out)(vals)
    if isinstance(out, dict):
        return type(out)((k, _unwrap(v)) for k, v in out.items())
    return out


def load_params(model, params: dict, buffers: dict | None = None) -> None:
    """Write arrays (e.g. trained by optax) into the module's parameters and buffers, in
    place, keeping the tensors and their dtypes (the way back from functionalize)."""
    named = dict(model.named_parameters())
    named.update(model.named_buffers())
    for source in (params, buffers or {}):
        for k, v in source.items():
            if k not in named:
                raise KeyError(f"load_params: {k!r} is not a parameter or buffer of "
                               f"{type(model).__name__}")
            t = named[k]
            if tuple(v.shape) != tuple(t.shape):
                raise ValueError(f"load_params: {k!r} has shape {tuple(v.shape)}, the module's "
                                 f"tensor has {tuple(t.shape)}")
            t._write(jax.numpy.asarray(v, dtype=t._data.dtype))
