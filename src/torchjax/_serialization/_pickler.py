"""The pickle stream torch.save writes (data.pkl) for torchjax objects.

A tensor is pickled as PyTorch pickles one: a call of torch._utils._rebuild_tensor_v2 (v3 for
dtypes without a legacy storage class) on a storage, an offset, a size and a stride. Storages
are referenced by persistent id ("storage", storage type, key, location, numel); their bytes
become the records data/<key>. A view is saved as a strided window on its base's storage when
its view chain is a strided map, so a view and its base share one storage in the file, as in
PyTorch. torchjax dtypes, devices and Size are written under PyTorch's names.
"""

from __future__ import annotations

import collections
import pickle

import numpy as np

from .. import _device, _device_dtypes, _dtypes
from .._strides import contiguous_strides
from .._tensor import Size, Tensor
from ..nn.parameter import Buffer, Parameter
from ._extensions import Call, Construct, reducer_for
from ._layout import strided_window

# dtype name -> PyTorch's legacy storage class; other dtypes use an UntypedStorage
LEGACY_STORAGE = {
    "bool": "BoolStorage", "uint8": "ByteStorage", "int8": "CharStorage",
    "int16": "ShortStorage", "int32": "IntStorage", "int64": "LongStorage",
    "float16": "HalfStorage", "bfloat16": "BFloat16Storage", "float32": "FloatStorage",
    "float64": "DoubleStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}


class TorchName:
    """A global PyTorch's unpickler resolves by name; pickled as a GLOBAL opcode."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module = module
        self.name = name

    def __call__(self, *args):
        # pickle requires reduce functions to be callable; this one only names PyTorch's
        raise TypeError(f"{self.module}.{self.name} is PyTorch's; torchjax only writes its name")


_NAMES: dict = {}


def torch_name(module: str, name: str) -> TorchName:
    # one object per name, so the pickler memoizes it as PyTorch's does
    key = (module, name)
    if key not in _NAMES:
        _NAMES[key] = TorchName(module, name)
    return _NAMES[key]


_REBUILD_V2 = torch_name("torch._utils", "_rebuild_tensor_v2")
_REBUILD_V3 = torch_name("torch._utils", "_rebuild_tensor_v3")
_REBUILD_PARAM = torch_name("torch._utils", "_rebuild_parameter")
_REBUILD_PARAM_STATE = torch_name("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE = torch_name("torch._tensor", "_rebuild_from_type_v2")
_TORCH_TENSOR = torch_name("torch", "Tensor")
_TORCH_DEVICE = torch_name("torch", "device")
_TORCH_SIZE = torch_name("torch", "Size")
_UNTYPED = torch_name("torch.storage", "UntypedStorage")


class Storage:
    """One storage of the file: the data/<key> record of its owner tensor's values."""

    __slots__ = ("key", "owner", "dtype", "location")

    def __init__(self, key: str, owner: Tensor):
        self.key = key
        self.owner = owner  # also keeps id(owner) unique while saving
        self.dtype = owner.dtype
        dev = owner.device
        self.location = "cpu" if dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"

    def persistent_id(self) -> tuple:
        name = LEGACY_STORAGE.get(self.dtype.name)
        numel = self.owner._data.size
        if name is None:  # an UntypedStorage counts bytes
            return ("storage", _UNTYPED, self.key, self.location, numel * self.dtype.itemsize)
        return ("storage", torch_name("torch", name), self.key, self.location, numel)

    def payload(self) -> np.ndarray:
        """The values in C order and native byte order (the byteorder record says which)."""
        # a long the device dtype policy stores as int32 is written as the int64 it reports
        arr = _device_dtypes.to_host(self.owner, np.asarray(self.owner._data))
        return np.ascontiguousarray(arr).reshape(-1).view(np.uint8)


def storage_and_window(t: Tensor, by_owner: dict) -> tuple:
    """(Storage, offset, strides) of t: a window on its base's storage when it is one."""
    owner, window = t, None
    if t._base is not None and t._base._data.dtype == t._data.dtype:
        window = strided_window(t._base, t)
        if window is not None:
            owner = t._base
    if window is None:
        window = (0, contiguous_strides(t._data.shape))
    found = by_owner.get(id(owner))
    if found is None:
        found = by_owner[id(owner)] = Storage(str(len(by_owner)), owner)
    return (found,) + window


class _ParameterData:
    """A Parameter's values as the plain tensor (param.data, not requiring grad) PyTorch
    passes to _rebuild_parameter."""

    __slots__ = ("param",)

    def __init__(self, param):
        self.param = param


def _python_state(t: Tensor):
    """Attributes set on a tensor from Python, which PyTorch pickles as its state."""
    if isinstance(t, Buffer) or type(t) not in (Tensor, Parameter):
        return None  # a marker subclass: pickled as the plain tensor it stands for
    if t._lazy is not None:  # a pending result (_deferred): computed first, which clears
        _ = t._data          # its mark from __dict__
    return dict(t.__dict__) or None


def global_name(obj):
    """(module, name) of objects pickled as a reference to a PyTorch global, else None."""
    if isinstance(obj, TorchName):
        return obj.module, obj.name
    if isinstance(obj, _dtypes.dtype):
        return "torch", obj.name
    return None


def _torch_path(obj, name=None):
    """(module, name) under PyTorch's name of a torchjax class or function (a whole saved
    module's torchjax.nn.modules.linear.Linear is written torch.nn.modules.linear.Linear, as
    PyTorch writes it, so PyTorch can load the file), else None."""
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str) or not (module == "torchjax" or
                                           module.startswith("torchjax.")):
        return None
    return "torch" + module[len("torchjax"):], name or obj.__qualname__


class TorchPickler(pickle._Pickler):
    """The pure-Python pickler, so PyTorch's globals can be written by name without PyTorch
    being importable; storages go to `storages` (id(owner) -> Storage, in key order)."""

    def __init__(self, file, protocol: int, storages: dict):
        super().__init__(file, protocol)
        self.storages = storages

    def persistent_id(self, obj):
        return obj.persistent_id() if isinstance(obj, Storage) else None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, _ParameterData):
            subclass = reducer_for(obj.param)  # a DTensor parameter's data is a DTensor
            if subclass is not None:
                return subclass(obj.param, False)
            return self._rebuild_call(obj.param, requires_grad=False)
        if isinstance(obj, Call):
            return obj.func, obj.args
        if global_name(obj) is not None:
            return global_name(obj)[1]  # a name: pickle hands it to save_global
        if isinstance(obj, _device.device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return _TORCH_DEVICE, args
        if type(obj) is Size:
            return _TORCH_SIZE, (tuple(obj),)
        return NotImplemented

    def save_global(self, obj, name=None):
        found = global_name(obj) or _torch_path(obj, name)
        if found is None:
            return super().save_global(obj, name)
        module, name = found
        if self.proto >= 4:
            self.save(module)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode())
        self.memoize(obj)

    def _save_construct(self, obj: Construct):
        # NEWOBJ then BUILD, as pickle writes an object of a class PyTorch's loader knows
        self.save(obj.cls)
        self.save(obj.args)
        self.write(pickle.NEWOBJ)
        self.memoize(obj)
        if obj.state is not None:
            self.save(obj.state)
            self.write(pickle.BUILD)

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[Construct] = _save_construct

    def _reduce_tensor(self, t: Tensor):
        state = _python_state(t)
        subclass = reducer_for(t)
        if subclass is not None and not isinstance(t, Parameter):
            return subclass(t, t.requires_grad)
        if isinstance(t, Parameter):
            args = (_ParameterData(t), t.requires_grad, collections.OrderedDict())
            if state:
                return _REBUILD_PARAM_STATE, args + (state,)
            return _REBUILD_PARAM, args
        call = self._rebuild_call(t, t.requires_grad)
        if state:
            return _REBUILD_FROM_TYPE, (call[0], _TORCH_TENSOR, call[1], state)
        return call

    def _rebuild_call(self, t: Tensor, requires_grad: bool):
        storage, offset, strides = storage_and_window(t, self.storages)
        size = tuple(int(n) for n in t._data.shape)  # a fresh tuple, as PyTorch pickles one
        args = (storage, offset, size, strides, requires_grad, collections.OrderedDict())
        if t.dtype.name in LEGACY_STORAGE:
            return _REBUILD_V2, args
        return _REBUILD_V3, args + (t.dtype,)
