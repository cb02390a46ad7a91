"""The globals a weights-only load may name: PyTorch's default allowlist mapped onto torchjax
objects, the names PyTorch allows that torchjax cannot represent, and the user's additions."""

from __future__ import annotations

import _compat_pickle
import codecs
import collections

from .. import _device, _dtypes
from .._tensor import Size
from ..nn.parameter import Parameter
from ._pickler import LEGACY_STORAGE

# modules never allowed, even when the user allowlists one of their globals
BLOCKED_MODULES = ("sys", "os", "posix", "nt")


class StorageType:
    """A storage class named in the file (torch.FloatStorage, ...): gives the dtype."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"StorageType(dtype={self.dtype})"


class TensorType:
    """torch.Tensor in a checkpoint: it names the type in _rebuild_from_type_v2."""

    def __new__(cls, *args):
        raise NotImplementedError("torchjax.load: constructing torch.Tensor from a checkpoint "
                                  "(PyTorch's legacy tensor pickling) is not supported")


class ParameterType:
    """torch.nn.parameter.Parameter in a checkpoint: a type name, or built from (data, grad)."""

    def __new__(cls, *args):
        return Parameter(*args)


def _static_globals() -> dict:
    """PyTorch's default weights-only allowlist, as torchjax objects."""
    table = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "_codecs.encode": codecs.encode,  # bytes under pickle protocol 2
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch.Size": Size,
        "torch.device": _device.device,
        "torch.Tensor": TensorType,
        "torch.nn.parameter.Parameter": ParameterType,
        "torch.storage.UntypedStorage": StorageType(_dtypes.uint8),
    }
    for d in _dtypes.ALL:
        table[f"torch.{d.name}"] = d
    for dname, sname in LEGACY_STORAGE.items():
        table[f"torch.{sname}"] = table[f"torch.cuda.{sname}"] = StorageType(
            _dtypes.to_dtype(dname))
    return table


def _unsupported_globals() -> dict:
    """Globals PyTorch's allowlist has but torchjax cannot represent: name -> what it is."""
    kinds = {
        "quantized tensors": [
            "torch._utils._rebuild_qtensor", "torch.qint8", "torch.qint32", "torch.quint8",
            "torch.quint4x2", "torch.quint2x4", "torch.per_tensor_affine",
            "torch.per_tensor_symmetric", "torch.per_channel_affine",
            "torch.per_channel_symmetric", "torch.per_channel_affine_float_qparams",
            "torch.QInt8Storage", "torch.QInt32Storage", "torch.QUInt8Storage",
            "torch.QUInt4x2Storage", "torch.QUInt2x4Storage"],
        "sparse tensors": ["torch._utils._rebuild_sparse_tensor"],
        "nested tensors": ["torch._utils._rebuild_nested_tensor"],
        "meta tensors": ["torch._utils._rebuild_meta_tensor_no_storage"],
        "TypedStorage objects": ["torch.storage.TypedStorage"],
        "a dtype torchjax does not have": [
            f"torch.{n}" for n in (
                "complex32", "float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz",
                "float8_e4m3fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "bits8", "bits16",
                "bits1x8", "bits2x4", "bits4x2",
                *(f"{s}int{b}" for s in ("u", "") for b in range(1, 8)))],
        "legacy tensor types": [
            f"torch.{ns}{k}Tensor" for ns in ("", "cuda.", "sparse.", "cuda.sparse.")
            for k in ("Double", "Float", "Half", "BFloat16", "Long", "Int", "Short", "Char",
                      "Byte", "Bool")],
    }
    return {name: kind for kind, names in kinds.items() for name in names}


# PyTorch's DTensor classes: allowlisted only once torch.distributed.tensor is imported
DTENSOR_GLOBALS = (
    "torch.distributed.device_mesh.DeviceMesh",
    "torch.distributed.tensor._dtensor_spec.DTensorSpec",
    "torch.distributed.tensor._dtensor_spec.TensorMeta",
    "torch.distributed.tensor.DTensor",
    "torch.distributed.tensor.placement_types.Partial",
    "torch.distributed.tensor.placement_types.Replicate",
    "torch.distributed.tensor.placement_types.Shard",
)
DTENSOR_MESSAGE = "``torch.distributed.tensor`` must be imported to load DTensors"

STATIC_GLOBALS = _static_globals()
UNSUPPORTED_GLOBALS = _unsupported_globals()

# globals the user allowlisted: callables, or (callable, "full.name") pairs
user_safe_globals: set = set()


def user_globals() -> dict:
    table = {}
    for g in user_safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(g)}")
            if type(g[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(g[1])}")
            table[g[1]] = g[0]
        else:
            table[f"{g.__module__}.{g.__qualname__}"] = g
            if g.__module__.startswith("torchjax."):  # as torch.save writes it (_pickler)
                table[f"torch{g.__module__[len('torchjax'):]}.{g.__qualname__}"] = g
    return table


def py3_name(module: str, name: str) -> tuple[str, str]:
    # protocol 2 pickles name builtins as __builtin__.* (Python 2's names)
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def raise_unsupported(full: str):
    raise NotImplementedError(f"torchjax.load: the checkpoint contains "
                              f"{UNSUPPORTED_GLOBALS[full]} ({full}), which torchjax does not "
                              f"support")


def refusal_message(full: str) -> str:
    shown = full[len("builtins."):] if full.startswith("builtins.") else full
    return (f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please "
            f"use `torch.serialization.add_safe_globals([{shown}])` or the "
            f"`torch.serialization.safe_globals([{shown}])` context manager to allowlist this "
            f"global if you trust this class/function.")
