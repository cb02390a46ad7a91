"""torch.sparse.FloatTensor & co.: the legacy sparse constructors older programs use (pygcn
builds its adjacency with torch.sparse.FloatTensor(indices, values, shape)).

As PyTorch's, each is a class of the metaclass tensortype: calling it with indices and values
makes a sparse COO tensor of them (the values keep their dtype, as in PyTorch), with sizes an
empty one of its dtype, each with PyTorch's deprecation warning; isinstance checks dtype and
layout.
"""

from __future__ import annotations

import warnings

from .. import _legacy_types
from .._tensor import Tensor
from ._construct import sparse_coo_tensor


class sparse_tensortype(_legacy_types.tensortype):
    def __instancecheck__(cls, obj) -> bool:
        return super().__instancecheck__(obj) and obj.is_sparse


_WARNED: set = set()


def _warn_once(msg: str) -> None:
    # PyTorch warns once per process (TORCH_WARN_ONCE), every time under set_warn_always(True)
    from .._settings import is_warn_always_enabled
    if msg not in _WARNED or is_warn_always_enabled():
        _WARNED.add(msg)
        warnings.warn(msg, UserWarning, stacklevel=3)


def _new(cls, *args, device=None):
    from .. import _creation
    if len(args) >= 2 and isinstance(args[0], Tensor):
        _warn_once("torch.sparse.SparseTensor(indices, values, shape, *, device=) is "
                   "deprecated.  Please use torch.sparse_coo_tensor(indices, values, shape, "
                   "dtype=, device=).")
        # the values keep their own dtype, as PyTorch's legacy constructor keeps them
        return sparse_coo_tensor(*args[:3], device=device)
    _warn_once("torch.sparse.SparseTensor(shape, *, device=) is deprecated.  Please use "
               "torch.sparse_coo_tensor(shape, dtype=, device=).")
    sizes = tuple(args[0]) if len(args) == 1 and not isinstance(args[0], int) else args
    indices = _creation.zeros(len(sizes), 0, dtype=_creation._dtypes.int64)
    return sparse_coo_tensor(indices, _creation.zeros(0, dtype=cls.dtype), sizes,
                             device=device)


TYPES = {name: sparse_tensortype(name, (), {
    "dtype": _legacy_types.CPU[name].dtype, "is_cuda": False, "is_sparse": True,
    "__new__": _new, "__module__": "torch.sparse",
    "__doc__": f"torch.sparse.{name}: sparse COO tensors of dtype "
               f"{_legacy_types.CPU[name].dtype}"})
    for name in ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
                 "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor")}
