"""torch.distributed.checkpoint.load: a checkpoint read into the given state dict in place,
each tensor resharded onto its own layout.

For each tensor of the (flattened) target state dict, every piece of it this process's
devices hold is put together from the saved pieces that overlap it (reading only their
overlapping rows), and the tensor's values are replaced in place (its version bumped, views
and the parameter a state_dict() alias came from updated), keeping its sharding: a checkpoint
saved by 8 devices loads onto 2 processes or one device, and the other way round. Other values
are replaced in the state dict; a Stateful value gets its loaded state dict through
load_state_dict(), as PyTorch's.
"""

from __future__ import annotations

import io
import math

import jax
import numpy as np

from ..._tensor import Size, Tensor
from ..._x64 import scoped
from . import _common
from ._flatten import flatten, set_element
from .default_planner import DefaultLoadPlanner
from .filesystem import FileSystemReader
from .stateful import Stateful

__all__ = ["load", "load_state_dict"]


def _region(reader, fqn: str, entry: dict, bounds: tuple) -> np.ndarray:
    """The block `bounds` ((start, stop) per dim) of a saved tensor."""
    out = np.empty([b - a for a, b in bounds], np.dtype(entry["dtype"]))
    filled = 0
    for piece in entry["pieces"]:
        lo = [max(a, o) for (a, _), o in zip(bounds, piece["offsets"])]
        hi = [min(b, o + n) for (_, b), o, n in zip(bounds, piece["offsets"], piece["sizes"])]
        if any(h <= lo_ for lo_, h in zip(lo, hi)):
            continue
        rows = tuple(slice(lo_ - o, h - o) for lo_, h, o in zip(lo, hi, piece["offsets"]))
        where = tuple(slice(lo_ - a, h - a) for lo_, h, (a, _) in zip(lo, hi, bounds))
        out[where] = reader.read(piece["file"], piece["key"], rows, entry["dtype"])
        filled += math.prod(h - lo_ for lo_, h in zip(lo, hi))
    if filled != out.size:
        raise RuntimeError(f"dcp.load: the checkpoint's pieces of {fqn} cover {filled} of the "
                           f"{out.size} elements at {list(bounds)}; is it whole?")
    return out


@scoped  # int64 and float64 values stay 64-bit in the new array
def _read_tensor(reader, fqn: str, entry: dict, target: Tensor):
    """A new array of the target's sharding and dtype holding the saved values."""
    arr = target._data
    if isinstance(arr, jax.core.Tracer):
        raise RuntimeError("dcp.load inside torchjax.compile is not supported")
    if tuple(entry["shape"]) != tuple(target.shape):
        raise ValueError(f"Size mismatch between saved {Size(entry['shape'])} and current: "
                         f"{target.size()} for {fqn}")
    shape, regions = tuple(arr.shape), {}

    def piece(index):
        bounds = tuple(i.indices(n)[:2] for i, n in zip(index, shape))
        if bounds not in regions:  # (replicas of one piece are read once)
            regions[bounds] = _region(reader, fqn, entry, bounds).astype(arr.dtype, copy=False)
        return regions[bounds]

    return jax.make_array_from_callback(shape, arr.sharding, piece)


def _read_object(reader, fqn: str, entry: dict):
    from ... import serialization
    raw = reader.read_bytes(entry["file"], entry["key"])
    if entry["kind"] == "bytesio":
        return io.BytesIO(raw)
    # as PyTorch's planner loads them: the checkpoint is trusted like a pickle
    return serialization.load(io.BytesIO(raw), weights_only=False)


def _load_flat(sd: dict, reader, allow_partial: bool) -> None:
    entries = reader.read_metadata()["entries"]
    flat, paths = flatten(sd)
    for fqn, target in flat.items():
        entry = entries.get(fqn)
        if entry is None:
            if allow_partial:
                continue
            raise RuntimeError(f"Missing key in checkpoint state_dict: {fqn}.")
        if isinstance(target, Tensor):
            if entry["kind"] != "tensor":
                raise RuntimeError(f"dcp.load: {fqn} is a tensor in the state dict and an "
                                   f"object in the checkpoint")
            target._write(_read_tensor(reader, fqn, entry, target))
        elif entry["kind"] == "tensor":
            raise RuntimeError(f"dcp.load: {fqn} is a tensor in the checkpoint; the state "
                               f"dict's value to load it into is {type(target).__name__}")
        else:
            set_element(sd, paths[fqn], _read_object(reader, fqn, entry))


def load(state_dict: dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist: bool = False) -> None:
    """Loads a checkpoint into `state_dict` in place (tensors keep their layouts)."""
    _common.refuse_planner(planner, "load", DefaultLoadPlanner)
    _common.job(no_dist, process_group, "load")
    reader = _common.storage(storage_reader, checkpoint_id, FileSystemReader)
    keys = sorted(state_dict)
    sd = {k: state_dict[k].state_dict() if isinstance(state_dict[k], Stateful)
          else state_dict[k] for k in keys}
    try:
        _load_flat(sd, reader, bool(getattr(planner, "allow_partial_load", False)))
    finally:
        reader.close()
    for k in keys:
        if isinstance(state_dict[k], Stateful):
            state_dict[k].load_state_dict(sd[k])
        else:
            state_dict[k] = sd[k]


def load_state_dict(state_dict: dict, storage_reader, process_group=None,
                    coordinator_rank: int = 0, no_dist: bool = False, planner=None) -> None:
    """PyTorch's deprecated name for load(state_dict, storage_reader=...)."""
    import warnings
    warnings.warn("'load_state_dict' is deprecated and will be removed in future versions. "
                  "Please use 'load' instead.", FutureWarning, stacklevel=2)
    load(state_dict, storage_reader=storage_reader, process_group=process_group,
         no_dist=no_dist, planner=planner)
