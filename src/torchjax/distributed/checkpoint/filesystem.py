"""torch.distributed.checkpoint.filesystem: a checkpoint directory.

torchjax's layout (not PyTorch's .distcp files): each process writes the pieces it saves into
`__<rank>_0.safetensors` (one safetensors tensor per piece), and process 0 then writes
`.metadata.json`, naming for every key of the flattened state dict its global shape, dtype
and pieces (file, tensor, offsets, sizes), or the tensor holding an object's bytes. Readers
open only the pieces that overlap what they load, and only the overlapping rows of those
(safetensors' slices).
"""

from __future__ import annotations

import json
import os

import jax.numpy as jnp
import numpy as np

__all__ = ["FileSystemWriter", "FileSystemReader"]

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


class FileSystemWriter:
    """Writes a checkpoint into the directory `path` (made if missing)."""

    def __init__(self, path, single_file_per_rank: bool = True, sync_files: bool = True,
                 thread_count: int = 1, per_thread_copy_ahead: int = 10_000_000,
                 cache_staged_state_dict: bool = False, overwrite: bool = True,
                 _extensions=None):
        if not single_file_per_rank:
            raise NotImplementedError("FileSystemWriter(single_file_per_rank=False) is not "
                                      "supported by torchjax: one file per process")
        if cache_staged_state_dict:
            raise NotImplementedError("FileSystemWriter(cache_staged_state_dict=True) (async "
                                      "staging) is not supported by torchjax")
        if _extensions:
            raise NotImplementedError("FileSystemWriter(_extensions=) is not supported by "
                                      "torchjax")
        self.path = os.fspath(path)
        self.sync_files = sync_files
        self.overwrite = overwrite

    def reset(self, checkpoint_id=None) -> None:
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id) -> bool:
        return isinstance(checkpoint_id, (str, os.PathLike))

    def prepare(self, rank: int) -> None:
        os.makedirs(self.path, exist_ok=True)
        meta = os.path.join(self.path, METADATA)
        if rank == 0 and os.path.exists(meta):
            if not self.overwrite:
                raise RuntimeError(f"Checkpoint already exists and overwrite=False: {self.path}")
            os.remove(meta)  # a checkpoint half overwritten is never read as whole

    def write_pieces(self, rank: int, pieces: dict) -> str:
        """Writes {name: array} as this process's file; returns the file's name."""
        name = f"__{rank}_0.safetensors"
        path = os.path.join(self.path, name)
        _library().numpy.save_file({k: storable(v) for k, v in pieces.items()}, path)
        self._sync(path)
        return name

    def write_metadata(self, metadata: dict) -> None:
        path = os.path.join(self.path, METADATA)
        with open(path + ".tmp", "w") as f:
            json.dump(metadata, f)
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

    def reset(self, checkpoint_id=None) -> None:
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)
        self._open = {}

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id) -> bool:
        return isinstance(checkpoint_id, (str, os.PathLike))

    def read_metadata(self) -> dict:
        path = os.path.join(self.path, METADATA)
        if not os.path.exists(path):
            if os.path.exists(os.path.join(self.path, ".metadata")):
                raise NotImplementedError(
                    f"{self.path} is a checkpoint of PyTorch's distributed checkpoint (.metadata "
                    f"and .distcp files), which torchjax does not read: save it with "
                    f"torch.save of the full state dict (get_state_dict with "
                    f"full_state_dict=True) in PyTorch, and torchjax.load it")
            raise FileNotFoundError(f"No checkpoint at {self.path}: {METADATA} is missing")
        with open(path) as f:
            metadata = json.load(f)
        if metadata.get("format") != FORMAT:
            raise RuntimeError(f"{path} is not a torchjax checkpoint's metadata")
        return metadata

    def read(self, file: str, key: str, rows: tuple, dtype: str) -> np.ndarray:
        """The `rows` (a slice per dim) of a saved piece, as `dtype`."""
        if file not in self._open:
            self._open[file] = _library().safe_open(os.path.join(self.path, file),
                                                    framework="numpy")
        piece = self._open[file].get_slice(key)
        raw = piece[rows] if rows else piece[...]
        return restored(np.asarray(raw), dtype)

    def close(self) -> None:
        self._open = {}
