"""torchjax.storage: PyTorch's storage classes, named but never made.

A torchjax tensor keeps its values in a JAX array, which has no storage object a script could
hold, resize or share (torch.is_storage is always False). The classes exist so that the
references real code makes run: `isinstance(obj, torch.UntypedStorage)` checks (False),
`torch.FloatStorage` in a type table, `torch.LongStorage.dtype`. Making one raises an error
naming the class.

torch.UntypedStorage and torch.TypedStorage are the storage types of PyTorch 2; the legacy
typed ones (torch.FloatStorage, torch.LongStorage, ...; torch.Storage is FloatStorage) are
TypedStorage subclasses whose `dtype` says their element type.
"""

from __future__ import annotations

from . import _dtypes, _dtypes_storage_only

__all__ = ["TypedStorage", "UntypedStorage"]


class _StorageBase:
    """The base of PyTorch's storages; torchjax makes none."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"torch.{type(self).__name__} is not supported by torchjax: a "
                           f"tensor keeps its values in a JAX array, not a storage")


StorageBase = _StorageBase  # torch.StorageBase, the C++ base class in PyTorch


class UntypedStorage(_StorageBase):
    """The bytes under a tensor in PyTorch."""


class TypedStorage:
    """A storage with an element dtype in PyTorch (deprecated there)."""

    is_sparse = False
    dtype = None

    __init__ = _StorageBase.__init__


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
