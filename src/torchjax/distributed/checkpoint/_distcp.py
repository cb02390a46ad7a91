"""PyTorch's own checkpoint directory (what its dcp.save's FileSystemWriter writes), read.

The directory holds `.metadata`, a pickle of PyTorch's `Metadata`: for each flattened key a
`TensorStorageMetadata` (properties with the dtype, the global size, the chunks: offsets and
sizes) or a `BytesStorageMetadata`, and `storage_data`, mapping each chunk's
`MetadataIndex(fqn, offset)` to a `_StorageInfo(relative_path, offset, length)`: where in a
`__<rank>_<n>.distcp` file its bytes are. Each item there is a whole torch.save archive: a
tensor chunk (a tensor of the chunk's sizes), or an object (an int, a string, a BytesIO, ...).

The pickle is read with an unpickler that knows only those classes (records of their fields,
nothing of the file is called but torch.Size, dtypes and paths), and turned into the entries
torchjax's own index has, so dcp.load reads either kind of directory the same way."""

from __future__ import annotations

import io
import os
import pickle
import struct

import numpy as np

METADATA = ".metadata"
SUFFIX = ".distcp"
_CKPT = "torch.distributed.checkpoint."


class _Record:
    """A PyTorch object of the metadata pickle, as the fields its state set."""

    def __init__(self, *args):
        self.args = args

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 2 and isinstance(state[1], dict):
            state = {**(state[0] or {}), **state[1]}  # (a dataclass with slots)
        if isinstance(state, dict):
            self.__dict__.update(state)
        else:
            self.state = state  # (TensorProperties: a tuple, dtype first)


def _record(name: str) -> type:
    return type(name, (_Record,), {})


_CLASSES = {_CKPT + "metadata." + n: _record(n) for n in (
    "Metadata", "TensorStorageMetadata", "BytesStorageMetadata", "ChunkStorageMetadata",
    "TensorProperties", "MetadataIndex", "StorageMeta")}
_CLASSES[_CKPT + "filesystem._StorageInfo"] = _record("_StorageInfo")


def _dtype(name: str):
    from ... import _dtypes
    found = getattr(_dtypes, name, None)
    if not isinstance(found, _dtypes.dtype):
        raise pickle.UnpicklingError(f"dcp.load: a checkpoint's dtype torch.{name} is not one "
                                     f"torchjax has")
    return found


class _MetadataUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        full = f"{module}.{name}"
        if full in _CLASSES:
            return _CLASSES[full]
        if full == "torch.Size":
            return tuple
        if full == "torch.serialization._get_layout":
            return str
        if full == _CKPT + "metadata._MEM_FORMAT_ENCODING":
            return int
        if module == "pathlib" and name in ("PosixPath", "WindowsPath", "PurePosixPath",
                                            "PureWindowsPath"):
            return lambda *parts: "/".join(parts)  # (the saver's checkpoint_id: not used)
        if full == "collections.OrderedDict":
            return dict
        if module == "torch":
            return _dtype(name)
        raise pickle.UnpicklingError(f"dcp.load: {full} in a PyTorch checkpoint's .metadata "
                                     f"is not something torchjax reads")


def _where(info, fqn: str) -> dict:
    descriptors = getattr(info, "transform_descriptors", None)
    if descriptors:
        raise NotImplementedError(f"dcp.load: {fqn} was saved through PyTorch's "
                                  f"FileSystemWriter extensions {list(descriptors)}, which "
                                  f"torchjax does not read")
    return {"file": info.relative_path, "key": [int(info.offset), int(info.length)]}


def read_metadata(path: str) -> dict:
    """The entries of a PyTorch checkpoint's .metadata, as torchjax's index has them."""
    with open(os.path.join(path, METADATA), "rb") as f:
        md = _MetadataUnpickler(f).load()
    if not isinstance(md, _CLASSES[_CKPT + "metadata.Metadata"]):
        raise RuntimeError(f"{path}/{METADATA} is not a PyTorch checkpoint's Metadata")
    places: dict = {}
    for index, info in (getattr(md, "storage_data", None) or {}).items():
        offset = getattr(index, "offset", None)
        places[(index.fqn, None if offset is None else tuple(offset))] = info
    entries = {}
    for fqn, meta in md.state_dict_metadata.items():
        if type(meta).__name__ == "BytesStorageMetadata":
            entries[fqn] = dict(_where(places[(fqn, None)], fqn), kind="object")
            continue
        props = meta.properties
        dtype = props.state[0] if hasattr(props, "state") else props.dtype
        pieces = []
        for chunk in meta.chunks:
            offsets = tuple(int(o) for o in chunk.offsets)
            info = places.get((fqn, offsets))
            if info is None:
                raise RuntimeError(f"dcp.load: the checkpoint's .metadata names no storage "
                                   f"for the chunk of {fqn} at {list(offsets)}")
            pieces.append(dict(_where(info, fqn), offsets=list(offsets),
                               sizes=[int(s) for s in chunk.sizes]))
        entries[fqn] = {"kind": "tensor", "dtype": str(np.dtype(dtype.np)),
                        "torch_dtype": dtype.name, "shape": [int(n) for n in meta.size],
                        "pieces": pieces}
    paths = getattr(md, "planner_data", None)  # (each key's path, for format_utils)
    return {"format": "pytorch", "entries": entries,
            "paths": paths if isinstance(paths, dict) else {}}


class Items:
    """The items of a checkpoint's .distcp files, each read once while it is the last one
    asked for (a chunk several of this process's devices need is read once)."""

    def __init__(self, path: str):
        self.path = path
        self._last: tuple = (None, None)

    def raw(self, file: str, key) -> bytes:
        offset, length = key
        with open(os.path.join(self.path, file), "rb") as f:
            f.seek(offset)
            data = f.read(length)
        if len(data) != length:
            raise RuntimeError(f"dcp.load: {file} ends before its item at {offset} "
                               f"({length} bytes): the checkpoint is incomplete")
        return data

    def tensor(self, file: str, key) -> np.ndarray:
        where = (file, tuple(key))
        if self._last[0] != where:
            from ... import serialization
            t = serialization.load(io.BytesIO(self.raw(file, key)), map_location="cpu",
                                   weights_only=True)
            self._last = (where, np.asarray(t._data))
        return self._last[1]


# -- writing PyTorch's layout ------------------------------------------------------------------

def _names():
    from ..._serialization._pickler import torch_name
    md = _CKPT + "metadata"
    return {n: torch_name(md, n) for n in (
        "Metadata", "TensorStorageMetadata", "BytesStorageMetadata", "ChunkStorageMetadata",
        "TensorProperties", "MetadataIndex", "_MEM_FORMAT_ENCODING")} | {
        "_StorageInfo": torch_name(_CKPT + "filesystem", "_StorageInfo"),
        "_get_layout": torch_name("torch.serialization", "_get_layout")}


def item_of_piece(values: np.ndarray) -> bytes:
    """A tensor piece as PyTorch's writer stores it: a torch.save archive of the tensor."""
    import jax

    from ... import serialization
    from ..._tensor import Tensor
    from ..._x64 import scoped
    buf = io.BytesIO()
    # (64-bit values stay 64-bit on their way through the device)
    t = scoped(lambda: Tensor._wrap(jax.device_put(values, jax.local_devices(
        backend="cpu")[0])))()
    serialization.save(t, buf)
    return buf.getvalue()


def item_of_object(value) -> bytes:
    """An object as PyTorch's planner stores it (a BytesIO too): a torch.save archive."""
    from ... import serialization
    buf = io.BytesIO()
    serialization.save(value, buf)
    return buf.getvalue()


def metadata_pickle(entries: dict, paths: dict) -> bytes:
    """PyTorch's Metadata of a checkpoint whose entries (torchjax's index: pieces with their
    file and [offset, length] key) are in .distcp files, pickled as PyTorch pickles it."""
    from ... import _dtypes
    from ..._serialization._extensions import Call, Construct
    from ..._tensor import Size
    n = _names()
    layout = Call(n["_get_layout"], ("torch.strided",))
    contiguous = Call(n["_MEM_FORMAT_ENCODING"], (0,))
    described, storage = {}, {}

    def where(fqn, piece, offsets, k):
        index = {"fqn": fqn, "index": k}
        if offsets is not None:
            index["offset"] = Size(offsets)
        offset, length = piece["key"]
        storage[Construct(n["MetadataIndex"], (), index)] = Construct(
            n["_StorageInfo"], (), {"relative_path": piece["file"], "offset": offset,
                                     "length": length})

    for fqn, e in entries.items():
        if e["kind"] != "tensor":
            described[fqn] = Construct(n["BytesStorageMetadata"], (), {})
            where(fqn, e, None, None)
            continue
        props = Construct(n["TensorProperties"], (), (
            _dtypes.to_dtype(e["torch_dtype"]), layout, False, contiguous, False))
        chunks = [Construct(n["ChunkStorageMetadata"], (), {
            "offsets": Size(p["offsets"]), "sizes": Size(p["sizes"])}) for p in e["pieces"]]
        described[fqn] = Construct(n["TensorStorageMetadata"], (), {
            "properties": props, "size": Size(e["shape"]), "chunks": chunks})
        for k, p in enumerate(e["pieces"]):
            where(fqn, p, p["offsets"], k)
    md = Construct(n["Metadata"], (), {
        "state_dict_metadata": described, "planner_data": paths, "storage_data": storage,
        "storage_meta": None, "version": "1.0.0"})
    return _Protocol2().dumps(md)


class _Protocol2:
    """A protocol-2 pickle of the metadata's few kinds of objects, written opcode by opcode:
    Python's pure-Python pickler (which can name PyTorch's classes without importing them)
    took ~1 s for 6,400 chunks, this ~10x less. Globals are memoized as pickle does; nothing
    else is shared in the metadata."""

    def __init__(self):
        from ... import _dtypes
        from ..._serialization._extensions import Call, Construct
        from ..._serialization._pickler import TorchName
        from ..._tensor import Size
        self.kinds = (_dtypes.dtype, TorchName, Size, Construct, Call)
        self.out: list = [b"\x80\x02"]
        self.memo: dict = {}

    def dumps(self, obj) -> bytes:
        self.value(obj)
        self.out.append(b".")
        return b"".join(self.out)

    def glob(self, module: str, name: str) -> None:
        i = self.memo.get((module, name))
        if i is not None:
            self.out.append(b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i))
            return
        i = self.memo[(module, name)] = len(self.memo)
        self.out.append(f"c{module}\n{name}\n".encode())
        self.out.append(b"q" + bytes([i]) if i < 256 else b"r" + struct.pack("<I", i))

    def marked(self, values, close: bytes) -> None:
        """MARK, each value, then the opcode that takes them (TUPLE, APPENDS, SETITEMS)."""
        self.out.append(b"(")
        for x in values:
            self.value(x)
        self.out.append(close)

    def value(self, v) -> None:  # noqa: C901  (one branch per kind of object)
        dtype, TorchName, Size, Construct, Call = self.kinds
        out = self.out
        if v is None:
            out.append(b"N")
        elif v is True or v is False:
            out.append(b"\x88" if v else b"\x89")
        elif isinstance(v, int):
            if -2 ** 31 <= v < 2 ** 31:
                out.append(b"J" + struct.pack("<i", v))
            else:
                raw = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
                out.append(b"\x8a" + bytes([len(raw)]) + raw)
        elif isinstance(v, str):  # (memoized: field names and file names repeat)
            i = self.memo.get(v)
            if i is not None:
                out.append(b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i))
                return
            raw = v.encode("utf-8")
            out.append(b"X" + struct.pack("<I", len(raw)) + raw)
            i = self.memo[v] = len(self.memo)
            out.append(b"q" + bytes([i]) if i < 256 else b"r" + struct.pack("<I", i))
        elif isinstance(v, dtype):
            self.glob("torch", v.name)
        elif isinstance(v, TorchName):
            self.glob(v.module, v.name)
        elif type(v) is Size:
            self.glob("torch", "Size")
            self.value((tuple(v),))
            out.append(b"R")
        elif isinstance(v, Construct):  # cls.__new__(cls, *args), then its state
            self.value(v.cls)
            self.value(v.args)
            out.append(b"\x81")
            if v.state is not None:
                self.value(v.state)
                out.append(b"b")
        elif isinstance(v, Call):
            self.value(v.func)
            self.value(v.args)
            out.append(b"R")
        elif isinstance(v, tuple):
            self.marked(v, b"t")
        elif isinstance(v, list):  # (an empty one, then APPENDS of the items)
            out.append(b"]")
            if v:
                self.marked(v, b"e")
        elif isinstance(v, dict):  # (an empty one, then SETITEMS of keys and values)
            out.append(b"}")
            if v:
                self.marked([x for item in v.items() for x in item], b"u")
        else:
            raise TypeError(f"dcp.save: {type(v).__name__} in a .metadata")
