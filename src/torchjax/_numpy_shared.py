"""Shared memory with NumPy: Tensor.numpy(), torch.from_numpy(), and as_tensor/asarray of an
ndarray share one buffer with the array, as PyTorch's do.

A JAX array cannot be that buffer. XLA computes on its own buffers (64-byte aligned), treats
them as immutable, and runs CPU programs asynchronously: an array made by `jax.device_put` of
an aligned ndarray may alias the ndarray, but a program dispatched on it then sees writes
made after the dispatch returned (measured here: a 2000x2000 matmul summed the zeros written
after the call). So a shared tensor keeps a *host*: the ndarray whose memory is the storage,
and the host is the truth:

- writing the tensor (an in-place op, index assignment, `copy_`, an optimizer step, a
  gradient accumulating into an exported `.grad`) copies the new values into the host
  buffer when it happens: one copy, and the array sees them;
- reading the tensor's values takes a fresh snapshot of the host buffer (one copy into a
  private aligned buffer that JAX then aliases), so writes into the array through any route
  (slices, `np.copyto`, C code) are seen by the next op, and an op already dispatched never
  sees a later write.

The cost is paid only while something outside torchjax can still reach the memory. Before
each read or write the host checks (with reference counts) whether any ndarray other than
its own still holds the buffer; once none does (the array a logging call made was dropped,
the temporary passed to from_numpy is gone) the tensor takes a last snapshot and becomes an
ordinary tensor again.

How the reads and writes are seen without a test on every tensor's hot path: a shared
tensor's class is swapped for a subclass (same name, one per class: Tensor, Parameter, ...)
whose `_data` is a property; the property shadows the slot that every other tensor reads
directly. Its views and detach()/.data aliases get the view variant, which re-reads from
the root. Tensors never shared keep their class and pay nothing.
"""

from __future__ import annotations

import os
import sys
import warnings
import weakref

import jax
import numpy as np

from . import _device, _device_dtypes, _dtypes, _host_put, _meta, _strides
from ._numpy_layout import _byte_view, _view_array
from ._stacklevel import user_stacklevel
from ._tensor import Size, Tensor
from ._views import read_through
from ._x64 import scope

_SLOT = Tensor.__dict__["_data"]  # the slot: a shared tensor's last known array (metadata)
_KEY = "_numpy_link"  # in a shared root's __dict__: its _Link
_FROM = "_numpy_from"  # in a shared view's __dict__: the root snapshot its values came from

_SUPPORTED = frozenset(np.dtype(n) for n in (
    "float64", "float32", "float16", "complex64", "complex128", "int64", "int32", "int16",
    "int8", "uint64", "uint32", "uint16", "uint8", "bool"))


class _Host:
    """A storage shared with NumPy: `array` is the ndarray over it, shaped as its roots.
    `block` names the shared-memory block the array maps (share_memory_, _shared_memory.py):
    other processes may write it at any time, so such a host is never released."""

    __slots__ = ("array", "roots", "block", "__weakref__")

    def __init__(self, array, block=None):
        self.array = array
        self.roots = []  # weak references to the root tensors over this storage
        self.block = block


class _Link:
    """A shared root's link to its host. `snap` is the JAX array last read or written and
    `seen` an ndarray with its values, never written (the private buffer snap aliases, or a
    read-only view of snap): while the host still holds those bytes, snap is current and a
    read costs a comparison instead of a copy. `override` holds a tracer set while tracing."""

    __slots__ = ("host", "override", "snap", "seen")

    def __init__(self, host, snap=None, seen=None):
        self.host = host
        self.override = None
        self.snap = snap
        self.seen = seen


# -- is anyone else holding the memory? ----------------------------------------------------

def _refs(host):
    a = host.array
    b = a.base
    return sys.getrefcount(a), (sys.getrefcount(b) if isinstance(b, np.ndarray) else 0)


def _baseline():
    """_refs of a host whose array (and the array's base) nothing else holds."""
    alone = _Host(np.zeros(1))
    viewed = _Host(np.zeros(2)[1:])
    return _refs(alone)[0], _refs(viewed)[1]


_A0, _B0 = _baseline()


def _in_use(host) -> bool:
    """Whether the memory may be reachable other than through the host: another root, or
    any ndarray (the user's array, a view of it, an array numpy() returned) still alive.
    Conservative: memory owned by something that is not an ndarray counts as in use."""
    if host.block is not None:
        return True
    if len(host.roots) > 1 and sum(r() is not None for r in host.roots) > 1:
        return True
    a_refs, b_refs = _refs(host)
    if a_refs > _A0:
        return True
    b = host.array.base
    if b is None:
        return False
    if not isinstance(b, np.ndarray) or b.base is not None:
        return True
    return b_refs > _B0


# -- copies in and out ----------------------------------------------------------------------

_CPU_DEFAULT = None


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _same(a, b) -> bool:
    """Whether two ndarrays of one shape and dtype hold the same bytes (-0.0 is not 0.0, a NaN
    is itself): a read, cheaper than the copy and device_put it saves."""
    if a.dtype.kind == "c":
        return _same(a.real, b.real) and _same(a.imag, b.imag)
    u = _UINT[a.dtype.itemsize]
    return bool(np.array_equal(a.view(u), b.view(u)))


def _upload(array):
    """(a JAX array holding a snapshot of `array`, the private buffer it was copied into):
    one copy into an aligned buffer, which device_put then aliases (nothing writes it)."""
    global _CPU_DEFAULT
    buf = _host_put.aligned_copy(array)
    if _CPU_DEFAULT is None:
        _CPU_DEFAULT = jax.default_backend() == "cpu"
    with scope():
        if _CPU_DEFAULT:
            # uncommitted, like every other CPU tensor; _host_put's direct transfer, as
            # jax.device_put's would be (its Python placement logic was ~0.1 ms of each
            # from_numpy: a reinforcement-learning loop makes one per environment step)
            return _host_put.put(buf), buf
        return jax.device_put(buf, _device.jax_device("cpu")), buf


def _on_one_cpu(arr) -> bool:
    try:
        devs = arr.devices()
    except Exception:  # a tracer or a shape-only placeholder
        return False
    return len(devs) == 1 and next(iter(devs)).platform == "cpu"


# -- the shared classes ---------------------------------------------------------------------

def _root_get(self):
    link = self.__dict__[_KEY]
    if link.override is not None:
        return link.override
    arr = link.snap
    if arr is None or arr.is_deleted() or not _same(link.host.array, link.seen):
        arr, link.seen = _upload(link.host.array)
        link.snap = arr
    if _in_use(link.host):
        _SLOT.__set__(self, arr)
    else:
        _release(self, arr)
    return arr


def _root_set(self, new):
    link = self.__dict__[_KEY]
    if isinstance(new, jax.core.Tracer):  # torchjax.compile, vmap, checkpoint: temporary
        link.override = new
        return
    link.override = None
    host = link.host
    if not _in_use(host):
        _release(self, new)
        return
    if _meta.is_meta(new) or tuple(new.shape) != host.array.shape:
        raise RuntimeError("Trying to resize storage that is not resizable")
    if new.dtype != host.array.dtype or not _on_one_cpu(new):
        _release(self, new)  # another dtype, device or sharding: a storage of its own
        return
    seen = np.asarray(new)  # read-only, no copy (JAX then skips donating new: still correct)
    np.copyto(host.array, seen)
    link.snap, link.seen = new, seen
    _SLOT.__set__(self, new)


def _view_get(self):
    data = self._base._data  # the root's snapshot (which may end the sharing)
    d = self.__dict__
    if d.get(_FROM) is data:  # read from this very snapshot already
        return _SLOT.__get__(self)
    chain = self._view_chain
    arr = read_through(chain, data) if chain else data
    _SLOT.__set__(self, arr)
    if "_unshared" in type(self).__dict__:  # still shared: remember where arr came from
        d[_FROM] = data
    return arr


def _view_set(self, new):
    # a view's values come from its root: this is a refresh, or a tracer the root also has
    _SLOT.__set__(self, new)
    self.__dict__.pop(_FROM, None)


def _data_set(self, value):
    # `t.data = other` points t at other's storage: the array stops sharing, as in PyTorch
    arr = self._data  # the current values, for the views (reading may end the sharing)
    if _KEY in self.__dict__:
        _release(self, arr)
    Tensor.data.fset(self, value)


def _refresh_views(self):
    views = self._views
    if views:  # views re-read from the root when read: only drop the dead ones
        views[:] = [r for r in views if r() is not None]


def _slot_meta(fn):
    """A metadata method of Tensor run on the last known array, not a fresh snapshot."""
    def run(self, *args, **kwargs):
        return fn(_Meta(_SLOT.__get__(self)), *args, **kwargs)
    run.__name__ = fn.__name__
    return run


class _Meta:
    __slots__ = ("_data",)
    _lazy = None  # never a pending result (Tensor's shape reads look: _deferred)

    def __init__(self, arr):
        self._data = arr


def _dtype(self):
    d = _dtypes.from_jax(_SLOT.__get__(self).dtype)
    if d is _dtypes.int32 and _device_dtypes.STATE.on:  # a long stored as int32
        return _device_dtypes.reported(self, d)
    return d


def _device_of(self):
    arr = _SLOT.__get__(self)
    if arr.__class__ is jax.ShapeDtypeStruct:  # from_numpy before its first read
        return _device.device("cpu")
    return _device.device_of(arr)


def _as_plain(method):
    """A Tensor method (pickling, deepcopy) run on the tensor as its own class, on its
    current values: the result is an ordinary tensor, not a second sharer."""
    def run(self, *args):
        cls = type(self)
        arr = self._data  # a fresh snapshot (reading may end the sharing)
        if type(self) is not cls:
            return getattr(self, method)(*args)
        link = self.__dict__.pop(_KEY, None)
        _SLOT.__set__(self, arr)
        self.__class__ = cls._unshared
        try:
            out = getattr(self, method)(*args)
        finally:
            self.__class__ = cls
            if link is not None:
                self.__dict__[_KEY] = link
        if isinstance(out, Tensor):  # a deepcopy: copied __dict__ must not claim sharing
            out.__dict__.pop(_KEY, None)
            out.__dict__.pop(_FROM, None)
        return out
    return run


def _namespace(root: bool) -> dict:
    ns = {
        "_data": property(_root_get, _root_set) if root else property(_view_get, _view_set),
        "_numpy_root": root,
        "shape": property(lambda self: Size(_SLOT.__get__(self).shape)),
        "device": property(_device_of),
        "__deepcopy__": _as_plain("__deepcopy__"),
        "__reduce_ex__": _as_plain("__reduce_ex__"),
    }
    for name in ("size", "dim", "ndimension", "numel", "nelement", "__len__"):
        ns[name] = _slot_meta(getattr(Tensor, name))
    ns["dtype"] = property(_dtype)
    for name in ("ndim", "is_meta", "itemsize"):
        ns[name] = property(_slot_meta(getattr(Tensor, name).fget))
    ns["nbytes"] = property(lambda self: self.numel() * self.itemsize)
    if root:
        ns["data"] = property(Tensor.data.fget, _data_set)
        ns["_refresh_views"] = _refresh_views
    return ns


_CLASSES: dict = {}


def _shared_class(cls, root: bool):
    c = _CLASSES.get((cls, root))
    if c is None:
        ns = _namespace(root)
        ns.update(__slots__=(), __module__=cls.__module__, __qualname__=cls.__qualname__,
                  __doc__=cls.__doc__, _unshared=cls,
                  # made anew (deepcopy, _wrap): an ordinary tensor of the class
                  __new__=staticmethod(lambda c_, *a, **k: cls(*a, **k)),
                  _wrap=classmethod(lambda c_, *a, **k: cls._wrap(*a, **k)))
        c = _CLASSES[(cls, root)] = type(cls.__name__, (cls,), ns)
        if cls is Tensor:  # JAX flattens a Tensor to its array; the subclass too
            jax.tree_util.register_pytree_node(
                c, lambda t: ((t._data,), None), lambda _, xs: Tensor._wrap(xs[0]))
    return c


class _SharedViews(list):
    """A shared root's live views: a view appended here (any view op, detach(), .data)
    takes the view class, so it re-reads from the root.

    A view is appended just after its op computed it from the root's current snapshot, so
    it is marked as read from that snapshot: its first read then re-reads only if the
    memory changed since. (Without the mark, the 999 pieces of `input.split(1, dim=1)` over
    a from_numpy array each re-ran the whole split on their first read.)"""

    def __init__(self, link):
        super().__init__()
        self.link = link

    def append(self, ref):
        v = ref()
        if v is not None and "_unshared" not in type(v).__dict__:
            v.__class__ = _shared_class(type(v), root=False)
            link = self.link
            if link.override is None and link.snap is not None and not isinstance(
                    _SLOT.__get__(v), jax.core.Tracer):
                v.__dict__[_FROM] = link.snap
        list.append(self, ref)


def _share(root, host, snap=None, seen=None) -> None:
    link = root.__dict__[_KEY] = _Link(host, snap, seen)
    host.roots = [r for r in host.roots if r() is not None]
    host.roots.append(weakref.ref(root))
    views = _SharedViews(link)
    for ref in root._views or ():
        if ref() is not None:
            views.append(ref)
    root._views = views
    root.__class__ = _shared_class(type(root), root=True)


def _release(root, arr) -> None:
    """End the sharing: root (and its views) become ordinary tensors holding arr."""
    link = root.__dict__.pop(_KEY)
    link.host.roots = [r for r in link.host.roots if r() is not None and r() is not root]
    root.__class__ = type(root)._unshared
    root._data = arr
    views = root._views
    plain = []
    for ref in views or ():
        v = ref()
        if v is None:
            continue
        if "_unshared" in type(v).__dict__:
            v.__class__ = type(v)._unshared
        v.__dict__.pop(_FROM, None)
        v._data = read_through(v._view_chain, arr) if v._view_chain else arr
        plain.append(ref)
    root._views = plain


def _link_of(t):
    root = t if t._base is None else t._base
    return root, (root.__dict__.get(_KEY) if type(root).__dict__.get("_numpy_root") else None)


# -- Tensor.numpy() ---------------------------------------------------------------------------

def storage_array(root, alloc):
    """An ndarray laid out as root's strides over new memory: alloc(nbytes) gives the
    (buffer, byte offset) it starts at. Its values are not set."""
    arr = _SLOT.__get__(root)
    strides, offset = _strides.of(root)
    dt = np.dtype(arr.dtype)
    extent = 0 if arr.size == 0 else offset + 1 + sum(
        (n - 1) * s for n, s in zip(arr.shape, strides))
    raw, off = alloc(extent * dt.itemsize)
    return np.ndarray(arr.shape, dt, buffer=raw, offset=off + offset * dt.itemsize,
                      strides=tuple(s * dt.itemsize for s in strides))


def _export(root) -> _Host:
    """Give root a host: a new aligned buffer laid out as root's strides, holding its values."""
    arr = _SLOT.__get__(root)
    array = storage_array(root, _host_put.aligned_buffer)
    seen = np.asarray(arr)  # read-only, no copy
    array[...] = seen  # the one copy
    host = _Host(array)
    _share(root, host, arr, seen)
    return host


def _where(t) -> tuple:
    """(shape, dtype, strides, offset) of t in its storage; read before sharing starts, since
    a shared tensor's reads may end the sharing while no array exists yet."""
    arr = _SLOT.__get__(t)
    strides, offset = _strides.of(t)
    return tuple(arr.shape), np.dtype(arr.dtype), strides, offset


def numpy(self, *, force: bool = False) -> np.ndarray:
    """The tensor's values as an ndarray sharing its memory: writes to either are seen by
    the other (see the module docstring for how, and what it costs)."""
    if self._requires_grad and not force:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")
    if self._lazy is not None:  # a pending result (_deferred.py) gets its value first
        self._data  # noqa: B018
    # a shared tensor's own read: while traced (torchjax.compile) it is the tracer, which
    # must fail here as any traced read does
    arr = self._data if "_unshared" in type(self).__dict__ else _SLOT.__get__(self)
    if _meta.is_meta(arr):
        raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() "
                        "to copy the tensor to host memory first.")
    if isinstance(arr, jax.core.Tracer):
        return np.asarray(arr)  # JAX's error: a traced value has no memory
    if _device_dtypes.STATE.on and _device_dtypes.is_long32(self):
        # a long the device dtype policy stores as int32: int64 values, in a copy
        return _device_dtypes.to_host(self, np.asarray(arr))
    if not _on_one_cpu(arr):
        dev = _device.device_of(arr)
        if dev.type != "cpu" and not force:
            raise TypeError(f"can't convert {dev} device type tensor to numpy. Use "
                            f"Tensor.cpu() to copy the tensor to host memory first.")
        return np.array(self._data)  # a copy, as .cpu() would make (or a gathered shard set)
    # where first: working out strides may read the values, which may end the sharing. A
    # detach()/.data alias (no view ops) is the root's memory as the root has it
    alias = self._base is None or not self._view_chain
    where = None if alias else (_where(self), _strides.of(self._base)[1])
    root, link = _link_of(self)
    if link is None and isinstance(_SLOT.__get__(root), jax.core.Tracer):
        # a concrete detach() of a traced tensor (a recomputation under jax.vjp): there is no
        # storage to share, only these values
        return np.array(arr)
    if where is not None and not _byte_view(where[0][1], np.dtype(_SLOT.__get__(root).dtype)):
        # values computed from the base (view_as_complex of a bfloat16 tensor is an upcast
        # here), not a view of its bytes: a copy
        return np.array(arr)
    host = _export(root) if link is None else link.host
    if where is None:
        return host.array[...]
    return _view_array(host, *where)


# -- torch.from_numpy, as_tensor, asarray ----------------------------------------------------

_READONLY_WARNED = [False]


def _check(a: np.ndarray) -> None:
    if a.dtype not in _SUPPORTED:
        if a.dtype.newbyteorder("=") in _SUPPORTED and not a.dtype.isnative:
            raise ValueError("given numpy array has byte order different from the native byte "
                             "order. Conversion between byte orders is currently not supported.")
        raise TypeError(f"can't convert np.ndarray of type numpy.{a.dtype.type.__name__}. The "
                        "only supported types are: float64, float32, float16, complex64, "
                        "complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, "
                        "and bool.")
    if any(s < 0 for s in a.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if any(s % a.itemsize for s in a.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")


# A shared array is compared with the tensor's last snapshot on every read (no write into an
# ndarray can be noticed otherwise), about 0.2-0.6 ms per MB here. A data set converted once
# and kept (`X = torch.from_numpy(X_np)`, then `X[idx]` per batch) would pay that for the
# whole set on every batch, so arrays above this size are copied, as before sharing existed,
# with a warning that later writes into the array are not seen.
_SHARE_MAX_ENV = "TORCHJAX_NUMPY_SHARE_MB"
_COPY_WARNED = [False]


def _share_max() -> float:
    try:
        return float(os.environ.get(_SHARE_MAX_ENV, "4")) * 2 ** 20
    except ValueError:
        return 4 * 2 ** 20


def _copied(ndarray: np.ndarray) -> Tensor:
    if not _COPY_WARNED[0]:
        _COPY_WARNED[0] = True
        warnings.warn(
            f"torch.from_numpy: a {ndarray.nbytes / 2 ** 20:.1f} MB array is copied instead of "
            f"shared: torchjax shares memory with NumPy arrays up to "
            f"{_share_max() / 2 ** 20:g} MB (set {_SHARE_MAX_ENV} to change it), because a "
            "shared array is compared with the tensor on every read. Writes into the array "
            "after this call are not seen by the tensor. This warning is shown once.",
            UserWarning, stacklevel=user_stacklevel())
    with scope():  # an int64 array stays int64
        return Tensor._wrap(_host_put.put(np.array(ndarray, copy=True)))


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing the memory of `ndarray`: writes to either are seen by the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _check(ndarray)
    if not ndarray.flags.writeable and not _READONLY_WARNED[0]:
        _READONLY_WARNED[0] = True
        warnings.warn(
            "The given NumPy array is not writable, and PyTorch does not support non-writable "
            "tensors. This means writing to this tensor will result in undefined behavior. You "
            "may want to copy the array to protect its data or make it writable before "
            "converting it to a tensor. This type of warning will be suppressed for the rest of "
            "this program.", UserWarning, stacklevel=user_stacklevel())
    if ndarray.nbytes > _share_max():
        return _copied(ndarray)
    # no copy yet: the first read takes the snapshot (one copy for a batch used once)
    with scope():  # an int64 array's placeholder stays int64
        t = Tensor._wrap(jax.ShapeDtypeStruct(ndarray.shape, ndarray.dtype))
    strides = tuple(s // ndarray.itemsize for s in ndarray.strides)
    if strides != _strides.contiguous_strides(ndarray.shape):
        t._layout = (strides, 0)
    _share(t, _Host(ndarray))
    return t


def shares_with(data, dtype, device) -> bool:
    """Whether as_tensor/asarray of `data` with this dtype and device is from_numpy(data)."""
    if not isinstance(data, np.ndarray) or data.dtype not in _SUPPORTED:
        return False
    if dtype is not None and np.dtype(_dtypes.to_dtype(dtype).np) != data.dtype:
        return False
    return device is None or _device.device(device).type == "cpu"


def adopt(t: Tensor, src: Tensor) -> None:
    """t (a new tensor holding src's values) takes src's storage when NumPy shares it:
    nn.Parameter(torch.from_numpy(a)) is a view of a's memory, as in PyTorch."""
    if src._base is not None and not (src._detached and not src._view_chain):
        return
    _, link = _link_of(src)
    if link is not None and link.host.array.shape == tuple(_SLOT.__get__(t).shape) \
            and t._base is None:
        arr = _SLOT.__get__(t)
        _share(t, link.host, arr, np.asarray(arr))


Tensor.numpy = numpy
