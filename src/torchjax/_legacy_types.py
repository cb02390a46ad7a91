"""PyTorch's legacy tensor types: torch.FloatTensor, torch.LongTensor, torch.cuda.FloatTensor...

Older code (and much research code still) builds tensors with them, checks
`isinstance(x, torch.FloatTensor)` and converts with `x.type(torch.DoubleTensor)`. Each is a
class of the metaclass `tensortype`, as in PyTorch: calling one makes a plain Tensor of its
dtype (and device), and isinstance compares dtype and device; no Tensor is an instance of the
class itself.
"""

from __future__ import annotations

import warnings

from . import _device, _dtypes
from ._tensor import Tensor

# dtype name -> the legacy type's name
NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
         "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
         "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
         "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
         "complex128": "ComplexDoubleTensor"}


class tensortype(type):
    """The metaclass of the legacy tensor types (torch.tensortype)."""

    def __instancecheck__(cls, obj) -> bool:
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and (obj.device.type == "cuda") == cls.is_cuda)

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _new(cls, *args, device=None):
    """torch.FloatTensor(...): sizes give an uninitialised tensor of the type, data a copy in
    its dtype, a tensor of that dtype an alias of it."""
    from . import _creation
    if cls.is_cuda:
        if _device.device_count("cuda") == 0:
            raise TypeError(f"type {cls.__module__}.{cls.__name__} not available. JAX has no "
                            f"CUDA backend here.")
        device = device or "cuda"
    if len(args) == 1 and isinstance(args[0], Tensor):
        t = args[0]
        if t.dtype is not cls.dtype:
            raise TypeError(f"expected {cls.__name__} (got {NAMES.get(t.dtype.name, 'Tensor')})")
        return t.view_as(t)  # an alias, as PyTorch's
    return _creation.legacy_new(*args, dtype=cls.dtype, device=device)


def _make(name: str, dtype, module: str) -> tensortype:
    return tensortype(name, (), {"dtype": dtype, "is_cuda": module == "torch.cuda",
                                 "is_sparse": False, "__new__": _new, "__module__": module,
                                 "__doc__": f"{module}.{name}: tensors of dtype {dtype}"})


CPU = {name: _make(name, _dtypes.to_dtype(d), "torch") for d, name in NAMES.items()}
CUDA = {name: _make(name, _dtypes.to_dtype(d), "torch.cuda") for d, name in NAMES.items()}


def type_name(t: Tensor) -> str:
    """What Tensor.type() returns: 'torch.FloatTensor', 'torch.cuda.FloatTensor', ..."""
    prefix = "torch.cuda." if t.device.type == "cuda" else "torch."
    return prefix + NAMES.get(t.dtype.name, "Tensor")


def lookup(name: str) -> tensortype:
    """The legacy type named 'torch.FloatTensor' or 'torch.cuda.LongTensor'."""
    table = CUDA if name.startswith("torch.cuda.") else CPU
    short = name.rsplit(".", 1)[-1]
    if short not in table:
        raise ValueError(f"invalid type: '{name}'")
    return table[short]


def set_default_tensor_type(t) -> None:
    """torch.set_default_tensor_type: the default dtype (and, for a torch.cuda type, the
    default device) from a legacy type or its name."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    if isinstance(t, str):
        t = lookup(t)
    if not isinstance(t, tensortype):
        raise TypeError(f"invalid type object: only floating-point types are supported as the "
                        f"default type, got {t!r}")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtypes.set_default_dtype(t.dtype)
    if t.is_cuda:
        _device.set_default_device("cuda")
