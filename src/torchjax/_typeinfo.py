"""torch.finfo and torch.iinfo."""

from __future__ import annotations

import builtins

import jax.numpy as jnp

from . import _dtypes

__all__ = ["finfo", "iinfo"]

_PY_TYPES = {builtins.float: "float64", builtins.int: "int64", builtins.bool: "bool",
             builtins.complex: "complex128"}


def _as_dtype(type, fname: str) -> _dtypes.dtype:
    if isinstance(type, _dtypes.dtype):
        return type
    if builtins.isinstance(type, builtins.type) and type in _PY_TYPES:
        return _dtypes.to_dtype(_PY_TYPES[type])
    raise TypeError(f"{fname}(): argument 'type' (position 1) must be torch.dtype, not "
                    f"{builtins.type(type).__name__}")


class _TypeInfo:
    _fields: tuple[str, ...] = ()

    def __eq__(self, other):
        if builtins.type(other) is not builtins.type(self):
            return False
        return all(getattr(self, f) == getattr(other, f) for f in self._fields)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        # PyTorch's finfo/iinfo are unhashable C types
        raise TypeError(f"unhashable type: 'torch.{builtins.type(self).__name__}'")

    def __repr__(self) -> str:
        body = ", ".join(f"{f}={getattr(self, f):g}" for f in self._fields if f != "dtype")
        return f"{builtins.type(self).__name__}({body}, dtype={self.dtype})"


class finfo(_TypeInfo):
    """Numerical properties of a floating point dtype (as torch.finfo)."""

    _fields = ("resolution", "min", "max", "eps", "smallest_normal", "tiny", "dtype")

    def __init__(self, type=None):
        d = _dtypes.get_default_dtype() if type is None else _as_dtype(type, "finfo")
        if not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        d = d.to_real()
        info = jnp.finfo(d.np)
        self.bits = builtins.int(info.bits)
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = builtins.float(info.smallest_normal)
        self.smallest_normal = self.tiny
        self.resolution = 10.0 ** -builtins.int(info.precision)
        if d in _dtypes.FLOAT8:
            # PyTorch's float8 limits give no decimal digit of precision, and e5m2fnuz an
            # epsilon of 2**-3
            self.resolution = 1.0
            if d.name == "float8_e5m2fnuz":
                self.eps = 0.125
        self.dtype = d.name


class iinfo(_TypeInfo):
    """Numerical properties of an integer dtype (as torch.iinfo)."""

    _fields = ("min", "max", "dtype")

    def __init__(self, type=None):
        if type is None:
            raise TypeError('iinfo() missing 1 required positional arguments: "type"')
        d = _as_dtype(type, "iinfo")
        if d.name == "bool":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d.is_floating_point or d.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = jnp.iinfo(d.np)
        self.bits = builtins.int(info.bits)
        self.max = builtins.int(info.max)
        self.min = builtins.int(info.min)
        self.dtype = d.name


finfo.__module__ = iinfo.__module__ = "torch"
