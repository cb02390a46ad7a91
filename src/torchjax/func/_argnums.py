"""argnums: which positional arguments a transform differentiates (PyTorch's checks)."""

from __future__ import annotations

from .. import _functionalize as F
from .._tensor import Tensor


def _wrap_argnum(argnum, num_args: int) -> int:
    if not isinstance(argnum, int) or isinstance(argnum, bool):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def normalize(argnums, num_args: int):
    """argnums with negative positions resolved; PyTorch's errors for bad values."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        return _wrap_argnum(argnums, num_args)
    if isinstance(argnums, tuple):
        if len(argnums) == 0:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return tuple(_wrap_argnum(a, num_args) for a in argnums)
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def slice_args(args: tuple, argnums, as_tuple: bool = False):
    if isinstance(argnums, int):
        return (args[argnums],) if as_tuple else args[argnums]
    return tuple(args[i] for i in argnums)


def diff_slots(args: tuple, argnums) -> list:
    """Indices, in tree_flatten(args)[0], of the leaves of the differentiated arguments, in
    the order tree_flatten(slice_args(args, argnums)) lists them."""
    offsets = []
    start = 0
    for a in args:
        n = len(F.tree_flatten(a)[0])
        offsets.append((start, n))
        start += n
    picks = (argnums,) if isinstance(argnums, int) else argnums
    slots = []
    for i in picks:
        s, n = offsets[i]
        slots.extend(range(s, s + n))
    return slots


def tensor_leaves(tree, check_float: bool = False) -> list:
    """The leaves of a differentiated argument: all must be Tensors (PyTorch's message)."""
    leaves = F.tree_flatten(tree)[0]
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if check_float and not (x.dtype.is_floating_point or x.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
    return leaves
