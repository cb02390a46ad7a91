"""torch.distributed.checkpoint.filesystem: a checkpoint directory.

torchjax's layout: each process writes the pieces it saves into `__<rank>_0.safetensors` (one
safetensors tensor per piece), and process 0 then writes `.metadata.json`, naming for every
key of the flattened state dict its global shape, dtype and pieces (file, tensor, offsets,
sizes), or the tensor holding an object's bytes. Readers open only the pieces that overlap
what they load, and only the overlapping rows of those (safetensors' slices). A directory
PyTorch's dcp.save wrote (`.metadata` and `.distcp` files) is read too (_distcp.py).
"""

from __future__ import annotations

import enum
import io
import json
import os

import jax.numpy as jnp
import numpy as np

from . import _distcp

__all__ = ["FileSystemWriter", "FileSystemReader", "SerializationFormat"]

METADATA = ".metadata.json"
FORMAT = "torchjax.distributed.checkpoint"
# dtypes safetensors' NumPy side stores as themselves; others go as bytes (a last dim)
_NATIVE = {np.dtype(t) for t in (np.float64, np.float32, np.float16, np.int64, np.uint64,
                                  np.int32, np.uint32, np.int16, np.uint16, np.int8, np.uint8,
                                  np.bool_, np.complex64)}


def _library():
    try:
        import safetensors.numpy
    except ImportError:  # pragma: no cover - a dependency; the message names it
        raise ImportError("torchjax.distributed.checkpoint needs the safetensors package: "
                          "pip install safetensors") from None
    return safetensors


def storable(values: np.ndarray) -> np.ndarray:
    """values as safetensors holds them: bfloat16, complex128 and other dtypes its NumPy side
    lacks become their bytes along a last dimension (rows still slice as rows)."""
    values = np.array(values, order="C", copy=None)  # (ascontiguousarray makes 0-d 1-d)
    if values.dtype in _NATIVE:
        return values
    return values.reshape(values.shape + (1,)).view(np.uint8)  # (a 0-d array cannot view)


def restored(raw: np.ndarray, dtype: str) -> np.ndarray:
    want = jnp.dtype(dtype)
    if raw.dtype == want:
        return raw
    return np.array(raw, order="C", copy=None).view(want).reshape(raw.shape[:-1])


class SerializationFormat(enum.Enum):
    """PyTorch's formats of a FileSystemWriter's items. TORCH_SAVE is PyTorch's own directory
    (`.metadata` and `.distcp` files, PyTorch's dcp.load reads it); torchjax's default layout
    (safetensors and a JSON index) is neither, and is what a writer given none writes."""

    TORCH_SAVE = "torch_save"
    SAFETENSORS = "safetensors"


class FileSystemWriter:
    """Writes a checkpoint into the directory `path` (made if missing): torchjax's layout, or
    with `serialization_format=SerializationFormat.TORCH_SAVE` PyTorch's."""

    def __init__(self, path, single_file_per_rank: bool = True, sync_files: bool = True,
                 thread_count: int = 1, per_thread_copy_ahead: int = 10_000_000,
                 cache_staged_state_dict: bool = False, overwrite: bool = True,
                 _extensions=None, serialization_format=None):
        if not single_file_per_rank:
            raise NotImplementedError("FileSystemWriter(single_file_per_rank=False) is not "
                                      "supported by torchjax: one file per process")
        if cache_staged_state_dict:
            raise NotImplementedError("FileSystemWriter(cache_staged_state_dict=True) (async "
                                      "staging) is not supported by torchjax")
        if _extensions:
            raise NotImplementedError("FileSystemWriter(_extensions=) is not supported by "
                                      "torchjax")
        if serialization_format is not None:
            serialization_format = SerializationFormat(getattr(serialization_format, "value",
                                                               serialization_format))
            if serialization_format is SerializationFormat.SAFETENSORS:
                raise NotImplementedError(
                    "FileSystemWriter(serialization_format=SerializationFormat.SAFETENSORS) "
                    "(PyTorch's safetensors items) is not supported by torchjax: TORCH_SAVE "
                    "writes PyTorch's directory, no serialization_format torchjax's own")
        self._torch_save = serialization_format is SerializationFormat.TORCH_SAVE
        self.serialization_format = serialization_format
        self.path = os.fspath(path)
        self.sync_files = sync_files
        self.overwrite = overwrite
        self._where: dict = {}

    def reset(self, checkpoint_id=None) -> None:
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)
        self._where = {}

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id) -> bool:
        return isinstance(checkpoint_id, (str, os.PathLike))

    def _index_name(self) -> str:
        return _distcp.METADATA if self._torch_save else METADATA

    def prepare(self, rank: int) -> None:
        os.makedirs(self.path, exist_ok=True)
        if rank != 0:
            return
        for name in (METADATA, _distcp.METADATA):  # (either layout's index of an old one)
            meta = os.path.join(self.path, name)
            if os.path.exists(meta):
                if not self.overwrite:
                    raise RuntimeError(f"Checkpoint already exists and overwrite=False: "
                                       f"{self.path}")
                os.remove(meta)  # a checkpoint half overwritten is never read as whole

    def object_item(self, value):
        """What write_pieces is given for an object (an int, a BytesIO, ...)."""
        if self._torch_save:
            return _distcp.item_of_object(value)
        if isinstance(value, io.BytesIO):
            return np.frombuffer(value.getvalue(), np.uint8)
        from ... import serialization
        buf = io.BytesIO()
        serialization.save(value, buf)
        return np.frombuffer(buf.getvalue(), np.uint8)

    def write_pieces(self, rank: int, pieces: dict) -> str:
        """Writes {name: array (or an object's item)} as this process's file; returns the
        file's name."""
        if self._torch_save:
            name = f"__{rank}_0{_distcp.SUFFIX}"
            path = os.path.join(self.path, name)
            with open(path, "wb") as f:
                for key, values in pieces.items():
                    item = values if isinstance(values, bytes) else _distcp.item_of_piece(values)
                    self._where[key] = [f.tell(), len(item)]
                    f.write(item)
        else:
            name = f"__{rank}_0.safetensors"
            path = os.path.join(self.path, name)
            _library().numpy.save_file({k: storable(v) for k, v in pieces.items()}, path)
        self._sync(path)
        return name

    def locate(self, key: str):
        """The key a reader finds a written piece by in its file."""
        return self._where[key] if self._torch_save else key

    def write_metadata(self, metadata: dict, paths: dict | None = None) -> None:
        path = os.path.join(self.path, self._index_name())
        with open(path + ".tmp", "wb" if self._torch_save else "w") as f:
            if self._torch_save:
                f.write(_distcp.metadata_pickle(metadata["entries"], paths or {}))
            else:  # (each key's path too, for format_utils.dcp_to_torch_save)
                json.dump(dict(metadata, paths={k: list(v) for k, v in (paths or {}).items()}),
                          f)
        self._sync(path + ".tmp")
        os.replace(path + ".tmp", path)

    def _sync(self, path: str) -> None:
        if self.sync_files:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


class FileSystemReader:
    """Reads a checkpoint FileSystemWriter wrote into the directory `path`."""

    def __init__(self, path, _extension_registry=None):
        if _extension_registry is not None:
            raise NotImplementedError("FileSystemReader(_extension_registry=) is not supported "
                                      "by torchjax")
        self.path = os.fspath(path)
        self._open: dict = {}
        self._items = None  # (a PyTorch directory's items, once its metadata is read)

    def reset(self, checkpoint_id=None) -> None:
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)
        self._open = {}
        self._items = None

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id) -> bool:
        return isinstance(checkpoint_id, (str, os.PathLike))

    def read_metadata(self) -> dict:
        path = os.path.join(self.path, METADATA)
        if not os.path.exists(path):
            if os.path.exists(os.path.join(self.path, _distcp.METADATA)):
                # PyTorch's own directory: its .metadata pickle and .distcp files
                self._items = _distcp.Items(self.path)
                return _distcp.read_metadata(self.path)
            raise FileNotFoundError(f"No checkpoint at {self.path}: {METADATA} is missing")
        with open(path) as f:
            metadata = json.load(f)
        if metadata.get("format") != FORMAT:
            raise RuntimeError(f"{path} is not a torchjax checkpoint's metadata")
        return metadata

    def read(self, file: str, key, rows: tuple, dtype: str) -> np.ndarray:
        """The `rows` (a slice per dim) of a saved piece, as `dtype`."""
        if self._items is not None:
            whole = self._items.tensor(file, key)
            return np.asarray(whole[rows] if rows else whole).astype(jnp.dtype(dtype),
                                                                     copy=False)
        if file not in self._open:
            self._open[file] = _library().safe_open(os.path.join(self.path, file),
                                                    framework="numpy")
        piece = self._open[file].get_slice(key)
        raw = piece[rows] if rows else piece[...]
        return restored(np.asarray(raw), dtype)

    def read_bytes(self, file: str, key) -> bytes:
        """The bytes of a saved object (a torch.save archive, or a BytesIO's own bytes)."""
        if self._items is not None:
            return self._items.raw(file, key)
        return self.read(file, key, (), "uint8").tobytes()

    def close(self) -> None:
        self._open = {}
        self._items = None
