"""torchjax.types: the type aliases PyTorch's annotations use (torch.types)."""

from __future__ import annotations

import builtins
import os
from collections.abc import Sequence
from typing import IO

from ._device import device as _device_type
from ._dtypes import dtype as _dtype_type
from ._sym_types import SymBool, SymFloat, SymInt
from ._tensor import Size, Tensor
from .storage import TypedStorage, UntypedStorage

__all__ = ["Number", "Device", "FileLike", "Tensor", "Size", "SymInt", "SymFloat", "SymBool",
           "IntLikeType", "FloatLikeType", "BoolLikeType", "py_sym_types", "Storage"]

# torchjax has no symbolic shapes: SymInt, SymFloat and SymBool (torch.SymInt, ...) are classes
# no object of which is made, so a size is always a plain Python number
py_sym_types = (SymInt, SymFloat, SymBool)

IntLikeType = builtins.int | SymInt
FloatLikeType = builtins.float | SymFloat
BoolLikeType = builtins.bool | SymBool
Number = builtins.int | builtins.float | builtins.bool
Device = _device_type | builtins.str | builtins.int | None
FileLike = builtins.str | os.PathLike | IO[bytes]
Storage = TypedStorage | UntypedStorage  # what Tensor.untyped_storage() / storage() return

# the underscored names PyTorch's own signatures import from torch.types
_int = builtins.int
_float = builtins.float
_bool = builtins.bool
_complex = builtins.complex
_dtype = _dtype_type
_device = _device_type
_size = Size | Sequence[builtins.int]
_TensorOrTensors = Tensor | Sequence[Tensor]
_TensorOrTensorsOrGradEdge = _TensorOrTensors
