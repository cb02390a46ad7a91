"""The meta device: tensors with a shape and a dtype but no data.

`with torch.device("meta"): model = Net()` builds a model without computing or storing any
parameter, which is how large models are instantiated before `to_empty()` or
`load_state_dict(..., assign=True)` gives them real storage. A meta tensor wraps a MetaArray
(a jax.ShapeDtypeStruct) where other tensors wrap a jax.Array. An op on one runs no program:
the dispatcher sees JAX refuse the argument and asks jax.eval_shape for the result's shape
and dtype instead, so ordinary arrays pay nothing for this. Autograd is not recorded on
meta tensors; in-place ops and random fills leave them as they are.
"""

from __future__ import annotations

import functools

import jax


class MetaArray(jax.ShapeDtypeStruct):
    """The array of a meta tensor: a shape and a dtype. `aval` lets the dispatcher read its
    type as it reads a jax.Array's."""

    __slots__ = ()

    @property
    def aval(self):
        return jax.core.ShapedArray(self.shape, self.dtype)


def array(shape, dtype) -> MetaArray:
    return MetaArray(tuple(shape), dtype)


def like(arr) -> MetaArray:
    """A MetaArray with arr's shape and dtype."""
    return MetaArray(tuple(arr.shape), arr.dtype)


def is_meta(arr) -> bool:
    return arr.__class__ is MetaArray


def any_meta(arrays) -> bool:
    """Whether a dispatcher argument list (arrays, numbers, tuples of arrays) holds one."""
    for a in arrays:
        if a.__class__ is MetaArray:
            return True
        if isinstance(a, tuple) and any(x.__class__ is MetaArray for x in a):
            return True
    return False


def evaluate(program, arrays):
    """The outputs of `program` (the op's jitted function) for these arguments as MetaArrays,
    computing nothing. Ordinary arrays among the arguments count only by their shapes, as in
    PyTorch, where an op mixing meta and real tensors gives a meta result. The jitted
    function's eval_shape keeps its trace per argument types (~50 us again, where
    jax.eval_shape of a new function traces every time, ~0.3-1 ms)."""
    out = program.eval_shape(*arrays)
    return jax.tree_util.tree_map(like, out)


def no_data(method):
    """A Tensor method that fills self with data: on a meta tensor there is none to fill."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        if self._data.__class__ is MetaArray:
            return self
        return method(self, *args, **kwargs)

    return run


def no_data_error():
    return NotImplementedError("Cannot copy out of meta tensor; no data!")
