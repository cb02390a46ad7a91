"""torch.from_dlpack / torch.to_dlpack (and torch.utils.dlpack): tensors exchanged with other
array libraries through DLPack.

from_dlpack of a CPU array (NumPy, PyTorch, CuPy's host arrays, a legacy capsule) shares its
memory as PyTorch's does, through torch.from_numpy's mechanism (_numpy_shared.py): writes on
either side are seen by the other. Arrays on an accelerator come in through JAX's own DLPack
import (JAX arrays are immutable, so later writes by the producer are not seen).
to_dlpack gives the legacy capsule of the tensor's JAX array.
"""

from __future__ import annotations

import jax
import numpy as np

from ._numpy_shared import from_numpy
from ._tensor import Tensor

__all__ = ["from_dlpack", "to_dlpack"]

_CPU = 1  # DLPack's kDLCPU


def _shared(array: np.ndarray) -> Tensor:
    # a read-only buffer (a JAX array's) cannot change under the tensor: a copy is the same
    # and spares from_numpy's warning about non-writable arrays
    return from_numpy(array if array.flags.writeable else array.copy())


class _Capsule:
    """A legacy DLPack capsule presented as an object with __dlpack__ (which NumPy reads)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **_):
        return self.capsule

    def __dlpack_device__(self):
        return (_CPU, 0)


def from_dlpack(ext_tensor, *, device=None, copy=None) -> Tensor:
    """A tensor over the memory of ext_tensor (an object with __dlpack__, or a capsule)."""
    if isinstance(ext_tensor, Tensor):
        out = ext_tensor.detach()
    elif hasattr(ext_tensor, "__dlpack__"):
        on_cpu = ext_tensor.__dlpack_device__()[0] == _CPU
        if on_cpu:
            out = _shared(np.from_dlpack(ext_tensor))
        else:
            out = Tensor._wrap(jax.dlpack.from_dlpack(ext_tensor))
    elif type(ext_tensor).__name__ == "PyCapsule":
        try:
            out = _shared(np.from_dlpack(_Capsule(ext_tensor)))
        except (BufferError, ValueError, RuntimeError, TypeError):
            raise RuntimeError(
                "from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                "consumed only once, so you might have already constructed a tensor from it "
                "once.") from None
    else:
        raise RuntimeError(
            "from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
            "consumed only once, so you might have already constructed a tensor from it once.")
    if device is not None:
        out = out.to(device)
    return out.clone() if copy else out


def to_dlpack(tensor: Tensor):
    """The legacy DLPack capsule of the tensor (consumed once, by from_dlpack)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' must be Tensor, not "
                        f"{type(tensor).__name__}")
    return tensor._data.__dlpack__()
