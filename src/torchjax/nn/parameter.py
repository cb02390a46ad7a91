"""nn.Parameter: a leaf Tensor that a Module registers as a parameter."""

from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor, _init_from


class Parameter(Tensor):
    """A Tensor that is a module parameter; requires grad by default."""

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            arr = jnp.zeros((0,), jnp.float32)
        elif isinstance(data, Tensor):
            arr = data._data
        else:
            raise TypeError(f"Parameter data must be a Tensor, not {type(data).__name__}")
        _init_from(self, arr)
        if requires_grad:
            self.requires_grad = True

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        import numpy as np
        return (_rebuild_parameter, (np.asarray(self._data), self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(Tensor._wrap(jnp.array(self._data, copy=True)), self._requires_grad)
        memo[id(self)] = p
        return p


def _rebuild_parameter(arr, requires_grad):
    return Parameter(Tensor._wrap(jnp.asarray(arr)), requires_grad)


class Buffer(Tensor):
    """Marks a tensor to register as a buffer when assigned to a Module attribute."""

    def __init__(self, data: Tensor, *, persistent: bool = True):
        _init_from(self, data._data)
        self.persistent = persistent
