"""torch.distributed.checkpoint.save: each process writes the pieces of the state dict it
holds, so no process gathers a sharded tensor.

The state dict is flattened as PyTorch's is ("model.0.weight", "optim.state.0.step", ...),
Stateful values first giving their state_dict(). A tensor's pieces are its array's shards
this process holds that are the first replica of their rows (`replica_id == 0`: over the
whole job each row is saved once, by one process, whatever the layout); a tensor that is this
process's own (its array on this process's devices only, in a job of several processes) is
saved by process 0, as PyTorch's planner keeps one copy of a replicated tensor. Other values
(ints, strings, ...) are torch.save'd bytes, by process 0. Then the processes exchange their
indexes and process 0 writes the metadata (filesystem.py).
"""

from __future__ import annotations

import io
import math

import jax
import numpy as np

from ..._tensor import Tensor
from . import _common
from ._flatten import flatten
from .default_planner import DefaultSavePlanner
from .filesystem import FORMAT, FileSystemWriter
from .metadata import (
    BytesStorageMetadata,
    ChunkStorageMetadata,
    Metadata,
    TensorProperties,
    TensorStorageMetadata,
)
from .stateful import Stateful

__all__ = ["save", "save_state_dict", "async_save"]


def _pieces(t: Tensor, rank: int, world: int) -> list:
    """[(offsets, values)] this process saves of t."""
    arr = t._data
    if isinstance(arr, jax.core.Tracer):
        raise RuntimeError("dcp.save inside torchjax.compile is not supported: save after the "
                           "compiled step returns")
    want = t.dtype.np
    if world > 1 and arr.is_fully_addressable:  # this process's own tensor
        return [((0,) * arr.ndim, np.asarray(arr).astype(want, copy=False))] if rank == 0 else []
    out = []
    for s in arr.addressable_shards:
        if s.replica_id == 0:
            offsets = tuple(i.indices(n)[0] for i, n in zip(s.index, arr.shape))
            out.append((offsets, np.asarray(s.data).astype(want, copy=False)))
    return out


def _index(flat: dict, rank: int, world: int, writer) -> tuple[dict, dict]:
    """(this process's index {fqn: entry}, its pieces {name: values})."""
    index, arrays = {}, {}
    for fqn, value in flat.items():
        if isinstance(value, Tensor):
            entry = {"kind": "tensor", "dtype": str(np.dtype(value.dtype.np)),
                     "torch_dtype": value.dtype.name, "shape": list(value.shape),
                     "pieces": []}
            for k, (offsets, values) in enumerate(_pieces(value, rank, world)):
                name = f"{fqn}/{k}"
                arrays[name] = values
                entry["pieces"].append({"key": name, "offsets": list(offsets),
                                        "sizes": list(values.shape)})
        elif rank == 0:
            name = f"{fqn}/bytes"
            arrays[name] = writer.object_item(value)
            entry = {"kind": "bytesio" if isinstance(value, io.BytesIO) else "bytes",
                     "key": name}
        else:
            continue
        index[fqn] = entry
    return index, arrays


def _merge(indexes: list) -> dict:
    """The processes' indexes (each with its file) as one: a tensor's pieces from all."""
    merged: dict = {}
    for index in indexes:
        for fqn, entry in index.items():
            if fqn not in merged:
                merged[fqn] = dict(entry, pieces=[]) if entry["kind"] == "tensor" else entry
            if entry["kind"] == "tensor":
                merged[fqn]["pieces"] += entry["pieces"]
    for fqn, entry in merged.items():
        if entry["kind"] == "tensor":
            held = sum(math.prod(p["sizes"]) for p in entry["pieces"])
            if held != math.prod(entry["shape"]):
                raise RuntimeError(f"dcp.save: the pieces saved of {fqn} hold {held} of its "
                                   f"{math.prod(entry['shape'])} elements")
    return merged


def _metadata(entries: dict) -> Metadata:
    from ... import _dtypes
    md = {}
    for fqn, e in entries.items():
        if e["kind"] == "tensor":
            from ..._tensor import Size
            md[fqn] = TensorStorageMetadata(
                TensorProperties(_dtypes.to_dtype(e["torch_dtype"])), Size(e["shape"]),
                [ChunkStorageMetadata(tuple(p["offsets"]), tuple(p["sizes"]))
                 for p in e["pieces"]])
        else:
            md[fqn] = BytesStorageMetadata()
    return Metadata(md)


def save(state_dict: dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist: bool = False, use_collectives: bool = True) -> Metadata:
    """Saves a (sharded) state dict into a checkpoint directory, every process its pieces;
    returns what the checkpoint holds."""
    _common.refuse_planner(planner, "save", DefaultSavePlanner)
    if not use_collectives:
        raise NotImplementedError("dcp.save(use_collectives=False) is not supported by "
                                  "torchjax")
    rank, world = _common.job(no_dist, process_group, "save")
    writer = _common.storage(storage_writer, checkpoint_id, FileSystemWriter)
    sd = {k: v.state_dict() if isinstance(v, Stateful) else v for k, v in state_dict.items()}
    flat, paths = flatten(sd)
    writer.prepare(rank)
    index, arrays = _index(flat, rank, world, writer)
    name = writer.write_pieces(rank, arrays)
    for entry in index.values():
        for piece in entry.get("pieces", [entry]):
            piece["file"] = name
            piece["key"] = writer.locate(piece["key"])
    if world > 1:
        from .. import _collectives
        indexes = [None] * world
        _collectives.all_gather_object(indexes, index)
    else:
        indexes = [index]
    entries = _merge(indexes)
    if rank == 0:
        writer.write_metadata({"format": FORMAT, "version": 1, "world_size": world,
                               "entries": entries}, paths=paths)
    if world > 1:
        from .. import _process_group
        _process_group.barrier()  # no process returns before the checkpoint is whole
    return _metadata(entries)


def save_state_dict(state_dict: dict, storage_writer, process_group=None,
                    coordinator_rank: int = 0, no_dist: bool = False, planner=None):
    """PyTorch's deprecated name for save(state_dict, storage_writer=...)."""
    import warnings
    warnings.warn("'save_state_dict' is deprecated and will be removed in future versions."
                  "Please use 'save' instead.", FutureWarning, stacklevel=2)
    return save(state_dict, storage_writer=storage_writer, process_group=process_group,
                no_dist=no_dist, planner=planner)


def async_save(*args, **kwargs):
    raise NotImplementedError("torch.distributed.checkpoint.async_save is not supported by "
                              "torchjax: use dcp.save (each process writes its own pieces)")
