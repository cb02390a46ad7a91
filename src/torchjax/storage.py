"""torchjax.storage: PyTorch's storage classes.

A torchjax tensor keeps its values in a JAX array, which has no bytes a script could hold,
resize or share through a storage. Tensor.untyped_storage() and Tensor.storage() return
storage objects that describe the array under a tensor (address stand-in, size, device: what
code reads storages for, _tensor_storage.py); the classes also exist so the references real
code makes run: `isinstance(obj, torch.UntypedStorage)`, `torch.FloatStorage` in a type table,
`torch.LongStorage.dtype`. Making a storage directly raises an error naming the class.

torch.UntypedStorage and torch.TypedStorage are the storage types of PyTorch 2; the legacy
typed ones (torch.FloatStorage, torch.LongStorage, ...; torch.Storage is FloatStorage) are
TypedStorage subclasses whose `dtype` says their element type.
"""

from __future__ import annotations

from . import _dtypes, _dtypes_storage_only

__all__ = ["TypedStorage", "UntypedStorage"]


class _StorageBase:
    """The base of PyTorch's storages; torchjax makes them only for Tensor.untyped_storage()."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"torch.{type(self).__name__} is not supported by torchjax: a "
                           f"tensor keeps its values in a JAX array, not a storage")


StorageBase = _StorageBase  # torch.StorageBase, the C++ base class in PyTorch


class UntypedStorage(_StorageBase):
    """The bytes under a tensor: Tensor.untyped_storage() gives a description of them.

    Its data_ptr() is the stand-in address Tensor.data_ptr() uses (_ops/tensor_memory.py), so
    tensors sharing a base report one storage, as code that finds tied or shared weights by
    `t.untyped_storage().data_ptr()` expects; nbytes() is the base's size in bytes. The bytes
    themselves cannot be read or written through it.
    """

    def data_ptr(self) -> int:
        """The stand-in address of the first byte, shared by every tensor on this base."""
        return self._ptr

    def nbytes(self) -> int:
        """The size of the storage in bytes."""
        return self._nbytes

    size = __len__ = nbytes

    def element_size(self) -> int:
        """1: an untyped storage counts bytes."""
        return 1

    @property
    def device(self):
        """The device of the tensor's values."""
        return self._device

    def __repr__(self) -> str:
        return f"torch.storage.UntypedStorage(device={self._device}) of size {self._nbytes}"


class TypedStorage:
    """A storage with an element dtype (deprecated in PyTorch): Tensor.storage() gives one."""

    is_sparse = False
    dtype = None

    __init__ = _StorageBase.__init__

    def untyped(self) -> UntypedStorage:
        """The same storage, counted in bytes."""
        return self._untyped_storage

    def data_ptr(self) -> int:
        """The stand-in address of the first element (the untyped storage's)."""
        return self._untyped_storage.data_ptr()

    def nbytes(self) -> int:
        """The size of the storage in bytes."""
        return self._untyped_storage.nbytes()

    def element_size(self) -> int:
        """The size of one element of `dtype` in bytes."""
        return self.dtype.itemsize

    def size(self) -> int:
        """The number of elements of `dtype` the storage holds."""
        return self.nbytes() // self.element_size()

    __len__ = size

    @property
    def device(self):
        """The device of the tensor's values."""
        return self._untyped_storage.device

    def __repr__(self) -> str:
        return (f"torch.storage.TypedStorage(dtype={self.dtype}, "
                f"device={self.device}) of size {self.size()}")


class _LegacyStorage(TypedStorage):
    """The legacy typed storages (torch.FloatStorage, ...)."""


def _legacy(name: str, d) -> type:
    cls = type(name, (_LegacyStorage,), {"dtype": d, "__doc__": f"A {d!r} storage in PyTorch."})
    cls.__module__ = "torch"
    return cls


_LEGACY = {
    "BFloat16Storage": _dtypes.bfloat16, "BoolStorage": _dtypes.bool,
    "ByteStorage": _dtypes.uint8, "CharStorage": _dtypes.int8,
    "ComplexDoubleStorage": _dtypes.complex128, "ComplexFloatStorage": _dtypes.complex64,
    "DoubleStorage": _dtypes.float64, "FloatStorage": _dtypes.float32,
    "HalfStorage": _dtypes.float16, "IntStorage": _dtypes.int32,
    "LongStorage": _dtypes.int64, "ShortStorage": _dtypes.int16,
    "QInt32Storage": _dtypes_storage_only.qint32, "QInt8Storage": _dtypes_storage_only.qint8,
    "QUInt2x4Storage": _dtypes_storage_only.quint2x4,
    "QUInt4x2Storage": _dtypes_storage_only.quint4x2,
    "QUInt8Storage": _dtypes_storage_only.quint8,
}
# the classes the torch package exports (torch.FloatStorage, ...), made once here
LEGACY = {name: _legacy(name, d) for name, d in _LEGACY.items()}
Storage = LEGACY["FloatStorage"]
