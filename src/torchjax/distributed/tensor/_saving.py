"""torch.save / torch.load of DTensors, in PyTorch's pickle form.

PyTorch pickles a DTensor as `_rebuild_from_type_v2(_rebuild_wrapper_subclass, DTensor,
(global meta), {"_local_tensor": rank's shard, "_spec": DTensorSpec(mesh, placements, ...)})`:
each rank saves its own shard and loads it back onto a mesh it rebuilds from the spec. A
PyTorch rank is a torchjax process, which may drive several devices of the mesh: here the
"local tensor" is the block of the global value this process's devices hold (all of it in a
job of one process; PyTorch's local tensor when each process has one device). Loading lays
that block out on the same mesh and placements (`jax.make_array_from_callback`): the devices
the mesh names must exist, and in a job of several processes each process loads the file it
saved. The spec is written with PyTorch 2.13's fields, so PyTorch's torch.load reads a file of
a one-process mesh; its DeviceMesh process-group names are PyTorch's world's ("0") for a 1-d
mesh over every process, and names PyTorch cannot resolve otherwise.
"""

from __future__ import annotations

import math
import pickle

import jax
import numpy as np

from ..._serialization import _extensions
from ..._serialization._pickler import torch_name
from ..._strides import contiguous_strides
from ..._tensor import Size, Tensor
from ..._x64 import scoped
from .._reshard import place_array
from ..device_mesh import DeviceMesh, _devices
from ._dtensor import DTensor, _as_dtensor, _grad_as_dtensor, lay_out_parameter
from ._placements import Partial, Replicate, Shard, sharding_of

_SPEC = "torch.distributed.tensor._dtensor_spec."
_NAMES = {
    "dtensor": "torch.distributed.tensor.DTensor",
    "spec": _SPEC + "DTensorSpec",
    "meta": _SPEC + "TensorMeta",
    "order": _SPEC + "ShardOrderEntry",
    "mesh": "torch.distributed.device_mesh.DeviceMesh",
    "layout": "torch.distributed._mesh_layout._MeshLayout",
    "flat": "torch.distributed._mesh_layout._FlatLayout",
    "Shard": "torch.distributed.tensor.placement_types.Shard",
    "Replicate": "torch.distributed.tensor.placement_types.Replicate",
    "Partial": "torch.distributed.tensor.placement_types.Partial",
    "strided": "torch.distributed.tensor.placement_types._StridedShard",
}


def _name(key: str):
    module, _, name = _NAMES[key].rpartition(".")
    return torch_name(module, name)


# -- this process's block ----------------------------------------------------------------------

def process_block(sharding, shape) -> tuple:
    """((start, stop) per dim): the block of a global array of `shape` laid out by `sharding`
    that this process's devices hold. Their pieces must tile it."""
    shape = tuple(shape)
    pieces = {tuple(s.indices(n)[:2] for s, n in zip(index, shape))
              for index in sharding.addressable_devices_indices_map(shape).values()}
    if not pieces:
        raise NotImplementedError("torchjax: this process holds no device of the DTensor's mesh")
    block = tuple((min(p[d][0] for p in pieces), max(p[d][1] for p in pieces))
                  for d in range(len(shape)))
    held = sum(math.prod(b - a for a, b in p) for p in pieces)
    if held != math.prod(b - a for a, b in block):
        raise NotImplementedError(
            f"torchjax: this process's pieces of a DTensor of shape {shape} do not form one "
            f"block ({sorted(pieces)}); a mesh whose processes hold contiguous blocks saves")
    return block


def _multi_process_partial(placements, what: str) -> None:
    if jax.process_count() > 1 and any(isinstance(p, Partial) for p in placements):
        raise NotImplementedError(f"torchjax: {what} of a DTensor with a Partial placement "
                                  f"across processes is not supported; redistribute it to "
                                  f"Replicate() first")


@scoped  # (64-bit values stay 64-bit on the device)
def local_block(t: DTensor):
    """(block, one-device jax array of this process's block of t's value)."""
    shape = tuple(t.shape)
    target = sharding_of(t._mesh, t._placements, shape)
    block = process_block(target, shape)
    first = target.addressable_devices_indices_map(shape)
    device = min(first, key=lambda d: d.id)
    arr = t._data
    if arr.is_fully_addressable:
        if block != tuple((0, n) for n in shape):
            arr = arr[tuple(slice(a, b) for a, b in block)]
        return block, jax.device_put(arr, device)
    if not arr.sharding.is_equivalent_to(target, len(shape)):
        arr = place_array(arr, target)  # (every process saves: the move is collective)
    out = np.empty([b - a for a, b in block], arr.dtype)
    for s in arr.addressable_shards:
        where = tuple(slice(i.indices(n)[0] - a, i.indices(n)[1] - a)
                      for i, n, (a, _) in zip(s.index, shape, block))
        out[where] = np.asarray(s.data)
    return block, jax.device_put(out, device)


# -- saving ------------------------------------------------------------------------------------

_MESHES: dict = {}  # DeviceMesh -> its Construct (one object: the pickle shares it)


def _placement(p):
    if isinstance(p, Shard):
        return _extensions.Construct(_name("Shard"), (), {"dim": p.dim})
    if isinstance(p, Partial):
        return _extensions.Construct(_name("Partial"), (), {"reduce_op": p.reduce_op})
    return _extensions.Construct(_name("Replicate"), (), {})


def _flat(size: int, stride: int):
    # PyTorch's layouts leave out a mesh dimension of size 1
    shape, strides = ((size,), (stride,)) if size > 1 else ((), ())
    return _extensions.Construct(_name("flat"), (), {"shape": shape, "stride": strides})


def _group_names(mesh: DeviceMesh) -> list:
    if mesh.ndim == 1 and mesh.size() == len(jax.devices()) == jax.process_count():
        return ["0"]  # PyTorch's default (world) group
    return [f"torchjax:{n}" for n in mesh._dims]


def _mesh(mesh: DeviceMesh, like: Tensor):
    if mesh in _MESHES:
        return _MESHES[mesh]
    root_dims = tuple(mesh.jax_mesh.axis_names)
    ids = mesh._ids
    root_strides = contiguous_strides(ids.shape)
    root = None if mesh._dims == root_dims else _mesh(DeviceMesh._view(mesh, root_dims), like)
    axes = tuple(_flat(ids.shape[root_dims.index(n)], root_strides[root_dims.index(n)])
                 for n in mesh._dims)
    rank_map = Tensor._wrap(jax.device_put(ids.reshape(-1).astype(np.int32),
                                           next(iter(like._data.devices()))))
    coord = mesh.get_coordinate()
    state = {
        "_device_type": mesh.device_type,
        "_layout": _extensions.Construct(_name("layout"), (), {"axes": axes}),
        "_rank_map": rank_map,
        "_mesh_dim_names": mesh.mesh_dim_names,
        "_root_mesh": root,
        "_flatten_rank_map": tuple(int(i) for i in ids.reshape(-1)),
        "_thread_id": None,
        "_flatten_mapping": {},
        "_dim_group_names": _group_names(mesh),
        "_rank": jax.process_index(),
        "_coordinate_on_dim": None if coord is None else tuple(coord),
        "_hash": None,
    }
    _MESHES[mesh] = _extensions.Construct(_name("mesh"), (), state)
    return _MESHES[mesh]


def _shard_order(placements) -> tuple:
    dims: dict = {}
    for m, p in enumerate(placements):
        if isinstance(p, Shard):
            dims.setdefault(p.dim, []).append(m)
    return tuple(_extensions.Construct(_name("order"), (d, tuple(ms)))
                 for d, ms in sorted(dims.items()))


def reduce_dtensor(t: DTensor, requires_grad: bool):
    """The pickle reduction of t: PyTorch's, with this process's block as the local tensor."""
    _multi_process_partial(t._placements, "torch.save")
    shape = tuple(int(n) for n in t.shape)
    _, arr = local_block(t)
    local = Tensor._wrap(arr)
    meta = _extensions.Construct(_name("meta"), (Size(shape), contiguous_strides(shape),
                                                 t.dtype))
    spec = _extensions.Construct(_name("spec"), (), {
        "mesh": _mesh(t._mesh, local),
        "placements": tuple(_placement(p) for p in t._placements),
        "tensor_meta": meta,
        "shard_order": _shard_order(t._placements),
        "use_strided_shard_as_shard_order": False,
        "_hash": None,
    })
    layout = _extensions.Call(torch_name("torch.serialization", "_get_layout"),
                              ("torch.strided",))
    args = (_name("dtensor"), t.dtype, shape, contiguous_strides(shape), 0, layout,
            local.device, requires_grad)
    wrapper = torch_name("torch._utils", "_rebuild_wrapper_subclass")
    return (torch_name("torch._tensor", "_rebuild_from_type_v2"),
            (wrapper, _name("dtensor"), args, {"_local_tensor": local, "_spec": spec}))


# -- loading -----------------------------------------------------------------------------------

def _axis_size(axis) -> int:
    return math.prod(getattr(axis, "shape", ()) or ())


def _axis_offsets(axis) -> list:
    """The rank-map offsets of an axis's positions (a flattened axis spans several)."""
    offsets = [0]
    for n, s in zip(axis.shape, axis.stride):
        offsets = [o + i * s for o in offsets for i in range(n)]
    return offsets


def _mesh_from(rec, device_type: str) -> DeviceMesh:
    """The DeviceMesh a pickled one stands for, over `device_type`'s devices."""
    built = rec.__dict__.setdefault("_torchjax_meshes", {})
    if device_type in built:
        return built[device_type]
    names = getattr(rec, "_mesh_dim_names", None)
    root = getattr(rec, "_root_mesh", None)
    if root is not None:
        if names is None:
            raise NotImplementedError("torchjax.load: a DTensor on an unnamed sub-mesh")
        mesh = _mesh_from(root, device_type)[tuple(names)]
    else:
        rank_map = rec._rank_map
        ranks = np.asarray(rank_map._data if isinstance(rank_map, Tensor) else rank_map)
        axes = rec._layout.axes
        grids = np.ix_(*[np.asarray(_axis_offsets(a)) for a in axes])
        ids = ranks.reshape(-1)[sum(grids)] if axes else ranks.reshape(())
        try:
            mesh = DeviceMesh(device_type, ids, mesh_dim_names=names)
        except (ValueError, RuntimeError) as e:
            raise RuntimeError(
                f"torchjax.load: the checkpoint holds a DTensor on a DeviceMesh of "
                f"{device_type} devices {ids.tolist()}, which this job does not have ({e}). "
                f"Load it in a job with the devices it was saved from") from None
    built[device_type] = mesh
    return mesh


def _device_type(saved: str, local: Tensor) -> str:
    """The device type a loaded DTensor's mesh is over: the saved mesh's, unless map_location
    put its local tensor on another kind of device. PyTorch then moves the local tensor and
    the DTensor's device and keeps the mesh's device type (its mesh is only a list of
    ranks); here the array lives on the mesh's devices, so the mesh moves too: the same
    shape, names and device ids over the local tensor's kind of devices."""
    here = local.device.type
    if here == "meta":
        raise NotImplementedError("torchjax.load: map_location='meta' for a DTensor is not "
                                  "supported")
    platform = next(iter(local._data.devices())).platform
    try:
        if _devices(saved)[0].platform == platform:
            return saved
    except (ValueError, RuntimeError):  # (none of the saved kind here: the local's it is)
        pass
    return here


def _placement_from(rec):
    kind = type(rec).__name__
    if kind == "Shard":
        return Shard(rec.dim)
    if kind == "Partial":
        return Partial(getattr(rec, "reduce_op", "sum"))
    if kind == "Replicate":
        return Replicate()
    raise NotImplementedError(f"torchjax.load: DTensor placement {kind} is not supported")


@scoped
def rebuild_dtensor(meta, state: dict) -> DTensor:
    """The DTensor a pickled one stands for, laid out on its mesh again."""
    if isinstance(state, tuple):  # (dict, slots): PyTorch writes its DTensor's as slots
        state = {k: v for part in state for k, v in (part or {}).items()}
    local, spec = state.get("_local_tensor"), state.get("_spec")
    if not isinstance(local, Tensor) or type(spec).__name__ != "DTensorSpec":
        raise pickle.UnpicklingError("a DTensor's state must hold its _local_tensor and _spec")
    mesh = _mesh_from(spec.mesh, _device_type(getattr(spec.mesh, "_device_type", "cpu"), local))
    placements = tuple(_placement_from(p) for p in spec.placements)
    _multi_process_partial(placements, "torch.load")
    shape = tuple(meta.size)
    target = sharding_of(mesh, placements, shape)
    block = process_block(target, shape)
    values = np.asarray(local._data)
    if values.shape != tuple(b - a for a, b in block):
        raise RuntimeError(
            f"torchjax.load: a DTensor's local tensor has shape {values.shape}, but this "
            f"process's part of its global shape {shape} ({placements} on {mesh}) is "
            f"{[(a, b) for a, b in block]}: load each process's file in the job that saved it")

    def piece(index):
        return values[tuple(slice(s.indices(n)[0] - a, s.indices(n)[1] - a)
                            for s, n, (a, _) in zip(index, shape, block))]

    arr = jax.make_array_from_callback(shape, target, piece)
    d = _as_dtensor(Tensor._wrap(arr), mesh, placements)
    if meta.requires_grad:  # a leaf, as distribute_tensor's: its .grad is laid out too
        d._requires_grad = True
        d.register_post_accumulate_grad_hook(_grad_as_dtensor)
    return d


def _parameter(d: DTensor, requires_grad: bool):
    """A loaded DTensor parameter: a Parameter that is a DTensor of the same layout."""
    from ...nn.parameter import Parameter
    p = Parameter(Tensor._wrap(d._data), requires_grad)
    lay_out_parameter(p, d._mesh, d._placements, d._data.sharding)
    return p


def _register() -> None:
    _extensions.REDUCERS[DTensor] = reduce_dtensor
    _extensions.PARAMETERS[DTensor] = _parameter
    for key, full in _NAMES.items():
        _extensions.GLOBALS[full] = (DTensor if key == "dtensor"
                                     else _extensions.record_type(full))
    _extensions.REBUILDERS[DTensor] = rebuild_dtensor


_register()
