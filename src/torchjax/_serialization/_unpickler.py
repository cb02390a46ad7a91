"""Reading torch.save's pickle stream (data.pkl) into torchjax objects.

With weights_only (the default) the stream is read by a restricted unpickler: every global
the file names must be one PyTorch's weights-only unpickler allows (mapped here onto its
torchjax equivalent) or one the user allowlisted with add_safe_globals; any other global is
refused, by name, before anything is called. Only allowlisted callables are ever called.
weights_only=False maps torch.* names onto torchjax.* and loads everything else as plain
pickle does, which runs whatever code the file names: use it only on trusted files.

Tensors that share a storage in the file (a tensor and its slices) come back sharing values:
the first one that covers its storage becomes the base, the others views of it, so an
in-place write through one is seen by the others, as in PyTorch.
"""

from __future__ import annotations

import importlib
import pickle

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _device, _dtypes
from .._dispatch import _make_view
from .._strides import contiguous_strides
from .._tensor import Tensor
from ..nn.parameter import Parameter
from . import _extensions
from ._allowlist import (
    BLOCKED_MODULES,
    DTENSOR_GLOBALS,
    DTENSOR_MESSAGE,
    STATIC_GLOBALS,
    UNSUPPORTED_GLOBALS,
    ParameterType,
    StorageType,
    TensorType,
    py3_name,
    raise_unsupported,
    refusal_message,
    user_globals,
)


class _StridedWindow:
    """The view link of a loaded tensor sharing a storage: the elements offset +
    sum(i_k * stride_k) of its flattened base, as PyTorch's as_strided picks them."""

    @staticmethod
    def pure_view(stat, arr):
        size, stride, offset = stat
        index = offset + sum(lax.broadcasted_iota(jnp.int64, size, k) * s
                             for k, s in enumerate(stride))
        return arr.reshape(-1)[index]


_STRIDED = _StridedWindow()


class _StorageProxy:
    """The storage a callable map_location receives: it can be moved, and says where to."""

    def __init__(self, location: str):
        self.location = location

    @property
    def device(self):
        return _device.device(self.location)

    def cpu(self):
        return _StorageProxy("cpu")

    def cuda(self, device=None, non_blocking=False):
        index = device if isinstance(device, int) else _device.device(device or "cuda").index
        return _StorageProxy(f"cuda:{index or 0}")

    def to(self, device, non_blocking=False):
        return _StorageProxy(str(_device.device(device)))


def _restorer(map_location):
    """location saved in the file -> location to load to, following map_location."""
    if map_location is None:
        return lambda loc: loc
    if isinstance(map_location, dict):
        return lambda loc: str(map_location.get(loc, loc))
    if isinstance(map_location, bytes):
        map_location = map_location.decode("ascii")
    if isinstance(map_location, (str, _device.device)):
        return lambda loc: str(map_location)
    if callable(map_location):
        def restore(loc):
            moved = map_location(_StorageProxy(loc), loc)
            if moved is None:
                return loc
            if isinstance(moved, _StorageProxy):
                return moved.location
            raise TypeError(f"map_location must return None or the storage it was given "
                            f"(moved with .cpu(), .cuda() or .to()), not "
                            f"{type(moved).__name__}")
        return restore
    raise TypeError(f"map_location should be None, a str, a torch.device, a dict or a "
                    f"callable, not {type(map_location).__name__}")


def _jax_device(location: str):
    try:
        dev = _device.device(location)
    except (RuntimeError, TypeError):
        raise RuntimeError(f"torchjax.load: cannot restore a storage saved on device "
                           f"'{location}': torchjax has cpu, cuda and tpu devices. Pass "
                           f"map_location='cpu' to load it on the CPU.") from None
    if dev.type == "cuda" and _device.device_count("cuda") == 0:
        raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                           "torch.cuda.is_available() is False. If you are running on a "
                           "CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.")
    found = _device.jax_device(dev)
    if found.process_index != jax.process_index():
        # in a job of several processes a checkpoint's "cpu" / "cuda:i" is this process's
        # own device, as each PyTorch rank loads onto its own (JAX lists every process's)
        mine = jax.local_devices(backend=found.platform)
        found = mine[min(dev.index or 0, len(mine) - 1)]
    return found


def _byteswapped(values: np.ndarray) -> np.ndarray:
    dt = values.dtype
    unit = dt.itemsize // 2 if dt.kind == "c" else dt.itemsize  # complex: swap each part
    if unit == 1:
        return values
    return values.view(f"u{unit}").byteswap().view(dt)


class LoadedStorage:
    """A storage of the file: its values as a 1-D array and where they go. The first tensor
    built on it that covers it whole becomes the base the others view."""

    __slots__ = ("values", "device", "owner", "_typed")

    def __init__(self, values: np.ndarray, device):
        self.values = values
        self.device = device
        self.owner = None
        self._typed: dict = {}

    def as_dtype(self, dtype) -> LoadedStorage:
        """The same bytes read as `dtype` (an UntypedStorage under _rebuild_tensor_v3)."""
        if self.values.dtype == dtype.np:
            return self
        if dtype.name not in self._typed:
            if self.values.nbytes % dtype.itemsize:
                raise RuntimeError(f"a storage of {self.values.nbytes} bytes cannot hold "
                                   f"elements of {dtype}")
            self._typed[dtype.name] = LoadedStorage(self.values.view(dtype.np), self.device)
        return self._typed[dtype.name]

    def put(self, values: np.ndarray):
        return jax.device_put(values, self.device)

    def shared_tensor(self, window: np.ndarray, offset: int, size: tuple, stride: tuple):
        covers = (offset == 0 and window.size == self.values.size
                  and stride == contiguous_strides(size))
        if self.owner is None:
            if covers:
                self.owner = Tensor._wrap(self.put(window))
                return self.owner
            self.owner = Tensor._wrap(self.put(self.values))  # hidden: the whole storage
        t = Tensor._wrap(self.put(window))
        _make_view(t, self.owner, ((_STRIDED, (size, stride, offset)),))
        return t


def _ints(value, what: str) -> tuple:
    if not isinstance(value, (tuple, list)) or not all(type(v) is int for v in value):
        raise RuntimeError(f"torchjax.load: a tensor's {what} must be a tuple of ints, got "
                           f"{value!r}")
    return tuple(value)


def _window(storage: LoadedStorage, offset, size, stride) -> np.ndarray:
    """The elements of a tensor in its storage as a C-ordered array: a fresh copy, or the
    storage array itself when the tensor is all of it."""
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    values = storage.values
    if type(offset) is not int or len(size) != len(stride):
        raise RuntimeError(f"torchjax.load: invalid tensor layout: size {size}, stride "
                           f"{stride}, storage offset {offset!r}")
    if offset < 0 or min(size + stride, default=0) < 0:
        raise RuntimeError(f"torchjax.load: negative size, stride or storage offset: size "
                           f"{size}, stride {stride}, storage offset {offset}")
    empty = 0 in size
    needed = offset if empty else offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    if needed > values.size:
        item = values.dtype.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{needed * item} are out of bounds for storage of size "
                           f"{values.nbytes}")
    if empty:
        return np.empty(size, values.dtype)
    if offset == 0 and needed == values.size and stride == contiguous_strides(size):
        return values.reshape(size)  # the whole storage: no copy
    item = values.dtype.itemsize
    return np.lib.stride_tricks.as_strided(
        values[offset:], shape=size, strides=[s * item for s in stride]).copy()


def _set_state(t: Tensor, state) -> None:
    """Python attributes PyTorch saved with a tensor: a dict, or (dict, slots)."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        parts = state
    else:
        parts = (state,)
    for part in parts:
        for k, v in (part or {}).items():
            if not isinstance(k, str) or hasattr(type(t), k) or k in Tensor.__slots__:
                raise RuntimeError(f"torchjax.load: the checkpoint sets attribute {k!r} of a "
                                   f"tensor, which is part of the tensor itself")
            setattr(t, k, v)


class Loader:
    """The rebuild functions and storages of one load, bound to its archive."""

    def __init__(self, read_record, map_location, swap_bytes: bool):
        self._read = read_record  # name -> bytes-like
        self._restore = _restorer(map_location)
        self._callable_map = callable(map_location) and not isinstance(
            map_location, (str, bytes, dict, _device.device))
        self._swap = swap_bytes
        self._storages: dict = {}
        self._devices: dict = {}
        self.table = dict(STATIC_GLOBALS)
        self.table.update({
            "torch._utils._rebuild_tensor": self.rebuild_tensor,
            "torch._utils._rebuild_tensor_v2": self.rebuild_tensor_v2,
            "torch._utils._rebuild_tensor_v3": self.rebuild_tensor_v3,
            "torch._utils._rebuild_parameter": self.rebuild_parameter,
            "torch._utils._rebuild_parameter_with_state": self.rebuild_parameter,
            "torch._tensor._rebuild_from_type_v2": self.rebuild_from_type_v2,
            "torch._utils._rebuild_device_tensor_from_cpu_tensor": self.rebuild_on_device,
            "torch._utils._rebuild_device_tensor_from_numpy": self.rebuild_on_device,
            "torch._utils._rebuild_wrapper_subclass": self.rebuild_wrapper_subclass,
            "torch.serialization._get_layout": _get_layout,
        })

    def device_for(self, location: str):
        target = self._restore(location)
        if target not in self._devices:
            self._devices[target] = _jax_device(target)
        return self._devices[target]

    # -- persistent ids -----------------------------------------------------------------

    def persistent_load(self, pid):
        if type(pid) is not tuple or len(pid) != 5:
            raise pickle.UnpicklingError(f"persistent_load id must be a ('storage', type, key, "
                                         f"location, numel) tuple, but got {pid!r}")
        kind, stype, key, location, numel = (
            v.decode("ascii") if isinstance(v, bytes) else v for v in pid)
        if kind != "storage":
            raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got "
                                         f"{kind!r}")
        if not isinstance(stype, StorageType) or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"invalid storage reference {pid!r}")
        if key not in self._storages:
            self._storages[key] = self._read_storage(str(key), stype.dtype, numel, str(location))
        return self._storages[key]

    def _read_storage(self, key: str, dtype, numel: int, location: str) -> LoadedStorage:
        name = f"data/{key}"
        raw = self._read(name)
        nbytes = numel * dtype.itemsize
        if len(raw) != nbytes:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: the record has "
                               f"{len(raw)} bytes but its storage of {numel} {dtype} elements "
                               f"needs {nbytes}. The checkpoint file is corrupted.")
        values = np.frombuffer(raw, dtype=dtype.np, count=numel)
        if self._swap:
            values = _byteswapped(values)
        return LoadedStorage(values, self.device_for(location))

    # -- rebuild functions PyTorch's pickle stream calls ----------------------------------

    def rebuild_tensor(self, storage, storage_offset, size, stride):
        return self._tensor(storage, storage_offset, size, stride, False, None)

    def rebuild_tensor_v2(self, storage, storage_offset, size, stride, requires_grad,
                          backward_hooks, metadata=None):
        return self._tensor(storage, storage_offset, size, stride, requires_grad, metadata)

    def rebuild_tensor_v3(self, storage, storage_offset, size, stride, requires_grad,
                          backward_hooks, dtype, metadata=None):
        if not isinstance(storage, LoadedStorage) or not isinstance(dtype, _dtypes.dtype):
            raise pickle.UnpicklingError("_rebuild_tensor_v3 expects a storage and a dtype")
        return self._tensor(storage.as_dtype(dtype), storage_offset, size, stride,
                            requires_grad, metadata)

    def _tensor(self, storage, offset, size, stride, requires_grad, metadata):
        if not isinstance(storage, LoadedStorage):
            raise pickle.UnpicklingError(f"a tensor must be rebuilt from a storage, not "
                                         f"{type(storage).__name__}")
        window = _window(storage, offset, size, stride)
        for bit, value in (metadata or {}).items():
            if bit not in ("conj", "neg"):
                raise NotImplementedError(f"torchjax.load: tensor metadata {bit!r}")
            if value:  # PyTorch's lazy conjugate / negative bits: apply them
                window = np.conj(window) if bit == "conj" else np.negative(window)
        if requires_grad or metadata:
            t = Tensor._wrap(storage.put(window))
            return t.requires_grad_(True) if requires_grad else t
        return storage.shared_tensor(window, offset, tuple(size), tuple(stride))

    def rebuild_parameter(self, data, requires_grad, backward_hooks, state=None):
        if not isinstance(data, Tensor):
            raise pickle.UnpicklingError(f"a Parameter must be rebuilt from a tensor, not "
                                         f"{type(data).__name__}")
        # a subclass's parameter (a DTensor's) is one of its kind, as PyTorch's Parameter is
        make = _extensions.reducer_for(data, _extensions.PARAMETERS)
        param = make(data, requires_grad) if make else Parameter(data, requires_grad)
        if state:
            _set_state(param, state)
        return param

    def rebuild_wrapper_subclass(self, cls, dtype, size, stride, storage_offset, layout,
                                 device, requires_grad):
        # (a DTensor's data is in the state that follows: see rebuild_from_type_v2)
        if cls not in _extensions.REBUILDERS:
            raise NotImplementedError(f"torchjax.load: tensor subclass {cls!r}")
        if self._callable_map:  # (PyTorch's wrapper subclasses take a device, not a storage)
            raise RuntimeError("Callable map_location not supported with "
                               "_rebuild_wrapper_subclass or _rebuild_device_tensor_from_numpy")
        return _extensions.WrapperMeta(cls, dtype, _ints(size, "size"), _ints(stride, "stride"),
                                       str(device), bool(requires_grad))

    def rebuild_from_type_v2(self, func, new_type, args, state):
        result = func(*args)
        if isinstance(result, _extensions.WrapperMeta):
            if new_type is not result.cls:
                raise pickle.UnpicklingError(f"a {result.cls!r} rebuilt as {new_type!r}")
            return _extensions.REBUILDERS[new_type](result, state or {})
        if new_type is ParameterType and not isinstance(result, Parameter):
            result = Parameter(result, result.requires_grad)
        elif new_type not in (TensorType, ParameterType):
            raise NotImplementedError(f"torchjax.load: tensor subclass {new_type!r}")
        if state:
            _set_state(result, state)
        return result

    def rebuild_on_device(self, data, dtype, device, requires_grad):
        values = np.asarray(data._data if isinstance(data, Tensor) else data)
        t = Tensor._wrap(jax.device_put(values.astype(dtype.np), self.device_for(str(device))))
        return t.requires_grad_(True) if requires_grad else t


def _get_layout(name):
    # torch.strided is every layout torchjax's tensors have
    if name != "torch.strided":
        raise NotImplementedError(f"torchjax.load: tensor layout {name!r}")
    return name


class RestrictedUnpickler(pickle.Unpickler):
    """weights_only: globals from PyTorch's allowlist or the user's, nothing else."""

    def __init__(self, file, loader: Loader, **kwargs):
        super().__init__(file, **kwargs)
        self._loader = loader

    def find_class(self, module, name):
        module, name = py3_name(module, name)
        full = f"{module}.{name}"
        if module in BLOCKED_MODULES:
            raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {full} whose "
                                         f"module {module} is blocked.")
        if full in self._loader.table:
            return self._loader.table[full]
        if full in _extensions.GLOBALS:
            return _extensions.GLOBALS[full]
        users = user_globals()
        if full in users:
            return users[full]
        if full in UNSUPPORTED_GLOBALS:
            raise_unsupported(full)
        if full in DTENSOR_GLOBALS:
            raise pickle.UnpicklingError(DTENSOR_MESSAGE)
        raise pickle.UnpicklingError(refusal_message(full))

    def persistent_load(self, pid):
        return self._loader.persistent_load(pid)


def _torchjax_equivalent(module: str, name: str):
    """torch.<path>.<name> -> torchjax.<path>.<name>."""
    try:
        obj = importlib.import_module("torchjax" + module[len("torch"):])
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise NotImplementedError(f"torchjax.load: the checkpoint uses {module}.{name}, which "
                                  f"has no torchjax equivalent") from None
    return obj


def full_unpickler(pickle_module, file, loader: Loader, **kwargs):
    """weights_only=False: PyTorch's names mapped onto torchjax, everything else as pickle
    loads it. Unsafe: the file can run any code."""

    class FullUnpickler(pickle_module.Unpickler):
        def find_class(self, module, name):
            full = f"{module}.{name}"
            if full in loader.table:
                return loader.table[full]
            if full not in _extensions.GLOBALS and module.startswith("torch.distributed."):
                # unpickling imports what the file names, as PyTorch's does: the
                # distributed package's classes register themselves when imported
                importlib.import_module("torchjax.distributed.tensor")
            if full in _extensions.GLOBALS:
                return _extensions.GLOBALS[full]
            if full in UNSUPPORTED_GLOBALS:
                raise_unsupported(full)
            if module == "torch" or module.startswith("torch."):
                return _torchjax_equivalent(module, name)
            return super().find_class(module, name)

        def persistent_load(self, pid):
            return loader.persistent_load(pid)

    return FullUnpickler(file, **kwargs)

