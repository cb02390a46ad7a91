"""torch.distributed.checkpoint.format_utils: a checkpoint directory as one torch.save file of
its whole state dict, and back.

dcp_to_torch_save reads every key of a directory (torchjax's layout or PyTorch's `.distcp`
one) whole, each tensor put together from all its pieces as a plain tensor on one device,
nests the keys again along the paths the saver recorded (PyTorch's `planner_data`; a key
without one stays flat, as in PyTorch) and torch.save's the result; torch_save_to_dcp saves a
torch.save file's state dict as a checkpoint directory (torchjax's layout, as dcp.save)."""

from __future__ import annotations

import warnings

import jax

from ..._tensor import Tensor
from ..._x64 import scoped
from .filesystem import FileSystemReader, FileSystemWriter

__all__ = ["dcp_to_torch_save", "torch_save_to_dcp"]


@scoped  # (64-bit values stay 64-bit)
def _whole(reader, fqn: str, entry: dict) -> Tensor:
    from .state_dict_loader import _region
    values = _region(reader, fqn, entry, tuple((0, n) for n in entry["shape"]))
    return Tensor._wrap(jax.device_put(values))


def _put(root: dict, path: tuple, value) -> None:
    """value at `path` of the nested state dict, making the dicts (a str part) and lists (an
    int part, padded with None) on the way, as PyTorch's unflattening does."""
    where = root
    for part, after in zip(path, path[1:]):
        empty = [] if isinstance(after, int) else {}
        if isinstance(where, list):
            where.extend([None] * (part + 1 - len(where)))
            if where[part] is None:
                where[part] = empty
        else:
            where.setdefault(part, empty)
        where = where[part]
    last = path[-1]
    if isinstance(where, list):
        where.extend([None] * (last + 1 - len(where)))
    where[last] = value


def dcp_to_torch_save(dcp_checkpoint_dir, torch_save_path) -> None:
    """Converts the checkpoint in `dcp_checkpoint_dir` into the torch.save file
    `torch_save_path` (its whole state dict: run it in one process)."""
    from ... import serialization
    from .state_dict_loader import _read_object
    reader = FileSystemReader(dcp_checkpoint_dir)
    sd: dict = {}
    try:
        metadata = reader.read_metadata()
        paths = metadata.get("paths") or {}
        for fqn, entry in metadata["entries"].items():
            value = (_whole(reader, fqn, entry) if entry["kind"] == "tensor"
                     else _read_object(reader, fqn, entry))
            _put(sd, tuple(paths.get(fqn) or (fqn,)), value)
    finally:
        reader.close()
    serialization.save(sd, torch_save_path)


def torch_save_to_dcp(torch_save_path, dcp_checkpoint_dir) -> None:
    """Saves the state dict of the torch.save file `torch_save_path` as a checkpoint in
    `dcp_checkpoint_dir`."""
    from ... import serialization
    from .state_dict_saver import save
    state_dict = serialization.load(torch_save_path, weights_only=False)
    with warnings.catch_warnings():  # (one process by intent, as PyTorch's, which is quiet)
        warnings.filterwarnings("ignore", "torch.distributed is disabled")
        save(state_dict, storage_writer=FileSystemWriter(dcp_checkpoint_dir), no_dist=True)
