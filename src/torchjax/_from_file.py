"""torch.from_file: a 1-d tensor of `size` elements read from a file. With shared=True the
tensor maps the file (a NumPy memmap shared through torch.from_numpy's mechanism), so writes
to it reach the file, and a file shorter than the tensor is first extended with zeros, as
PyTorch's mapping does; otherwise the file is mapped privately (copy-on-write), as
PyTorch maps it: the tensor's writes stay in memory. (A mapped
file above from_numpy's sharing limit, TORCHJAX_NUMPY_SHARE_MB, is copied, with its warning.)"""

from __future__ import annotations

import os

import jax
import numpy as np

from . import _dtypes, _numpy_shared
from ._creation import _finish, _target
from ._x64 import scoped

__all__ = ["from_file"]


@scoped
def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False):
    """The first `size` elements of dtype stored in the file (mapped when shared)."""
    d = _dtypes.get_default_dtype() if dtype is None else _dtypes.to_dtype(dtype)
    np_dtype = np.dtype(d.np)
    need = int(size) * np_dtype.itemsize
    mode = "read-write" if shared else "read-only"
    if not os.path.exists(filename):
        raise RuntimeError(f"unable to open file <{filename}> in {mode} mode: No such file or "
                           f"directory (2)")
    have = os.path.getsize(filename)
    if shared:
        if have < need:  # PyTorch grows the file to the mapping's size
            with open(filename, "r+b") as f:
                f.truncate(need)
        if size == 0:
            return _finish(jax.device_put(np.zeros(0, np_dtype)), _target(device), False)
        mapped = np.memmap(filename, dtype=np_dtype, mode="r+", shape=(int(size),))
        return _numpy_shared.from_numpy(mapped)
    if have < need:
        raise RuntimeError(f"file <{filename}> size <{have}> is smaller than the required "
                           f"mapping size <{need}>")
    if size == 0:
        return _finish(jax.device_put(np.zeros(0, np_dtype)), _target(device), False)
    # a private (copy-on-write) mapping, as PyTorch's: the tensor's writes stay in memory,
    # while pages it has not written still show the file's later changes
    private = np.memmap(filename, dtype=np_dtype, mode="c", shape=(int(size),))
    return _numpy_shared.from_numpy(private)
