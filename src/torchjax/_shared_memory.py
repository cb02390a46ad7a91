"""Tensor.share_memory_() and Module.share_memory(): a tensor whose storage is a block of POSIX
shared memory, which processes started by torchjax.multiprocessing read and write, as
PyTorch's Hogwild training relies on (workers update one model's parameters in place; the
parent then sees the trained weights).

The block is mapped as an ndarray and made the tensor's NumPy host (_numpy_shared.py), which
already keeps a tensor and an ndarray in step: every write of the tensor (an optimizer step,
copy_, an in-place op) copies into the block, and every read compares the block with the
last snapshot and takes a new one when another process changed it. Such a host is never
released back to an ordinary tensor (its `block` is set): another process may write at any
time.

Crossing processes: multiprocessing pickles a spawned process's arguments and whatever goes
through its queues with ForkingPickler, for which a reducer is registered here, so a shared
tensor travels as the block's name, shape and dtype; the receiving process maps the same
block (once per block: two tensors received over one block stay one storage). A forked child
inherits the mapping itself. Pickling by anything else (torch.save, copy.deepcopy, pickle)
still copies the values, as in PyTorch.

Lifetime: the process that made the block removes its name when its last tensor over it is
gone, or at exit (and multiprocessing's resource tracker does if it crashes); processes that
mapped it keep their mapping. So, as with PyTorch's "file_system" strategy, the sender keeps
a shared tensor alive until the receivers have it.
"""

from __future__ import annotations

import mmap
import os
import secrets
import weakref
from multiprocessing import resource_tracker
from multiprocessing.reduction import ForkingPickler

import jax
import numpy as np

from . import _meta, _strides
from . import _numpy_shared as _ns
from ._x64 import scope

_PREFIX = "/torchjax_"
_MAPPED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # block -> _Host here
_REDUCED: set = set()  # the shared classes ForkingPickler knows


def _shm_open(name: str, flags: int) -> int:
    try:
        import _posixshmem
    except ImportError:  # Windows
        raise RuntimeError("share_memory_: torchjax's shared-memory tensors need POSIX shared "
                           "memory, which this platform lacks") from None
    return _posixshmem.shm_open(name, flags, mode=0o600)


def _map(name: str, nbytes: int, create: bool):
    """The block `name` mapped: made with nbytes, or an existing one whole."""
    fd = _shm_open(name, os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0))
    try:
        if create:
            os.ftruncate(fd, max(nbytes, 1))  # mmap refuses an empty file
        else:
            nbytes = os.fstat(fd).st_size
        return mmap.mmap(fd, max(nbytes, 1))
    finally:
        os.close(fd)  # the mapping keeps the memory


def _unlink(name: str, pid: int) -> None:
    # a forked child inherits this finalizer with the tensor: only the maker removes the name
    if os.getpid() != pid:
        return
    import _posixshmem
    try:
        _posixshmem.shm_unlink(name)
    except FileNotFoundError:
        pass
    resource_tracker.unregister(name, "shared_memory")


def _host_of(t):
    _, link = _ns._link_of(t)
    return link.host if link is not None and link.host.block is not None else None


def is_shared(t) -> bool:
    """Whether t's storage is in shared memory (share_memory_, or received from a process)."""
    return _host_of(t) is not None


def share_memory_(t):
    """Move t's storage (its base's, for a view) to shared memory; a no-op once it is there,
    and for a tensor not on the CPU (as PyTorch's CUDA tensors)."""
    if _host_of(t) is not None:
        return t
    root = t if t._base is None else t._base
    if root._lazy is not None:  # a pending result (_deferred.py) gets its value first
        root._data  # noqa: B018
    arr = root._data
    if isinstance(arr, jax.core.Tracer):
        raise RuntimeError("share_memory_() of a traced tensor (inside torchjax.compile or a "
                           "torchjax.func transform): share it before the traced call")
    if _meta.is_meta(arr) or not _ns._on_one_cpu(arr):
        return t
    _, link = _ns._link_of(root)
    if link is not None:
        # the storage moves: arrays numpy() gave before keep the old memory, as in PyTorch
        _ns._release(root, arr)
    name = f"{_PREFIX}{os.getpid()}_{secrets.token_hex(8)}"
    made = []

    def alloc(nbytes):
        made.append(_map(name, nbytes, create=True))
        return made[0], 0

    array = _ns.storage_array(root, alloc)
    resource_tracker.register(name, "shared_memory")
    seen = np.asarray(arr)  # read-only, no copy
    array[...] = seen
    host = _ns._Host(array, block=name)
    weakref.finalize(host, _unlink, name, os.getpid())
    _MAPPED[name] = host
    _ns._share(root, host, arr, seen)
    _reducible(type(root))
    return t


def _reducible(cls) -> None:
    if cls not in _REDUCED:
        _REDUCED.add(cls)
        ForkingPickler.register(cls, _reduce)


def _reduce(t):
    """ForkingPickler's reduction of a shared class: a root over a block travels as the
    block; anything else (NumPy sharing) as its values."""
    host = _host_of(t)
    if host is None or t._base is not None:
        return t.__reduce_ex__(4)
    extra = {k: v for k, v in t.__dict__.items() if k not in (_ns._KEY, _ns._FROM)}
    return (_rebuild, (host.block, tuple(t.shape), host.array.dtype, _strides.of(t),
                       type(t)._unshared, t._requires_grad, extra))


def _rebuild(block, shape, dtype, layout, cls, requires_grad, extra):
    """A tensor of class cls over the shared block `block`, in the receiving process."""
    strides, offset = layout
    host = _MAPPED.get(block)
    if host is None:
        array = np.ndarray(shape, dtype, buffer=_map(block, 0, create=False),
                           offset=offset * dtype.itemsize,
                           strides=tuple(s * dtype.itemsize for s in strides))
        host = _MAPPED[block] = _ns._Host(array, block=block)
    with scope():  # an int64 block's placeholder stays int64
        t = cls._wrap(jax.ShapeDtypeStruct(shape, dtype), requires_grad)
    if offset or tuple(strides) != _strides.contiguous_strides(shape):
        t._layout = (tuple(strides), offset)
    t.__dict__.update(extra)
    _ns._share(t, host)
    _reducible(type(t))
    return t


def share_module(module):
    """Module.share_memory(): every parameter and buffer (and an existing .grad) moves to
    shared memory."""
    for p in module.parameters():
        share_memory_(p)
        if p.grad is not None:
            share_memory_(p.grad)
    for b in module.buffers():
        share_memory_(b)
    return module
