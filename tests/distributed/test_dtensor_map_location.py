"""torch.load(..., map_location=) of DTensors, against PyTorch's torch.load of the same file.

A checkpoint of a GPU job holds DTensors on a "cuda" mesh whose local tensors were saved on
"cuda:0"; this machine has no GPU, so such a file is made from torchjax's own file of a CPU
mesh, its mesh's device type and its storage's location rewritten (the pickle is otherwise
what a GPU job writes). PyTorch loads it with map_location="cpu" as a DTensor whose device and
local tensor are on the CPU; torchjax gives the DTensor on a CPU mesh of the same shape,
names and placements. Without map_location both refuse CUDA storages on a CPU-only machine,
and a callable map_location is refused for a DTensor with PyTorch's message."""

import io

import numpy as np
import pytest
import torch

import torchjax
from tests.distributed._common import as_saved_on_cuda, pytorch_world_of_one
from torchjax.distributed.device_mesh import DeviceMesh
from torchjax.distributed.tensor import DTensor as TjDTensor
from torchjax.distributed.tensor import Replicate as TjReplicate
from torchjax.distributed.tensor import Shard as TjShard
from torchjax.distributed.tensor import distribute_tensor as tj_distribute

X = np.arange(12.0, dtype=np.float32).reshape(4, 3)


@pytest.fixture(scope="module")
def pt():
    yield from pytorch_world_of_one()


def _cuda_file(placement, names=("gpus",)) -> bytes:
    """torchjax's file of a DTensor, as a job of one GPU would have written it."""
    mesh = DeviceMesh("cpu", [0], mesh_dim_names=names)
    mesh.device_type = "cuda"  # (what the file says of the mesh; read by the saver only)
    d = tj_distribute(torchjax.tensor(X), mesh, [placement])
    buf = io.BytesIO()
    torchjax.save({"w": d, "n": 3}, buf)
    return as_saved_on_cuda(buf.getvalue())


@pytest.mark.parametrize("placement", [TjShard(0), TjShard(1), TjReplicate()], ids=repr)
@pytest.mark.parametrize("where", ["cpu", "torch.device", "dict"])
def test_map_location_moves_a_dtensor_as_pytorch(pt, placement, where):
    from torch.distributed.tensor import DTensor
    raw = _cuda_file(placement)
    given = {"cpu": ("cpu", "cpu"), "torch.device": (torch.device("cpu"), torchjax.device("cpu")),
             "dict": ({"cuda:0": "cpu"}, {"cuda:0": "cpu"})}[where]
    want = torch.load(io.BytesIO(raw), map_location=given[0], weights_only=True)["w"]
    got = torchjax.load(io.BytesIO(raw), map_location=given[1])["w"]
    assert isinstance(want, DTensor) and isinstance(got, TjDTensor)
    assert want._local_tensor.device.type == "cpu"
    assert got.device.type == "cpu" and got.to_local().device.type == "cpu"
    assert got.device_mesh.device_type == "cpu"  # (PyTorch's keeps saying "cuda": see above)
    assert tuple(map(repr, got.placements)) == tuple(map(repr, want.placements))
    assert got.device_mesh.mesh_dim_names == want.device_mesh.mesh_dim_names == ("gpus",)
    assert tuple(got.device_mesh.shape) == tuple(want.device_mesh.shape)
    assert tuple(got.shape) == tuple(want.shape) == X.shape
    np.testing.assert_array_equal(got.to_local().numpy(), want.to_local().numpy())
    np.testing.assert_array_equal(got.full_tensor().numpy(), X)
    assert got._data.sharding.device_set == {d for d in got.device_mesh.jax_mesh.devices.flat}


def test_without_map_location_cuda_storages_are_refused_as_pytorch(pt):
    raw = _cuda_file(TjShard(0))
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torch.load(io.BytesIO(raw), weights_only=True)
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torchjax.load(io.BytesIO(raw))


def test_callable_map_location_is_refused_for_a_dtensor_as_pytorch(pt):
    raw = _cuda_file(TjShard(0))
    message = "Callable map_location not supported with _rebuild_wrapper_subclass"
    with pytest.raises(RuntimeError, match=message):
        torch.load(io.BytesIO(raw), map_location=lambda s, loc: s.cpu(), weights_only=True)
    with pytest.raises(RuntimeError, match=message):
        torchjax.load(io.BytesIO(raw), map_location=lambda s, loc: s.cpu())
    # a plain tensor's storage still follows a callable (PyTorch's too)
    buf = io.BytesIO()
    torchjax.save({"t": torchjax.tensor(X)}, buf)
    got = torchjax.load(io.BytesIO(buf.getvalue()), map_location=lambda s, loc: s.cpu())["t"]
    np.testing.assert_array_equal(got.numpy(), X)


def test_map_location_to_the_same_device_type_keeps_the_mesh(pt):
    mesh = DeviceMesh("cpu", [0], mesh_dim_names=("same",))
    d = tj_distribute(torchjax.tensor(X), mesh, [TjShard(0)])
    buf = io.BytesIO()
    torchjax.save(d, buf)
    got = torchjax.load(io.BytesIO(buf.getvalue()), map_location="cpu")
    assert got.device_mesh == mesh and got.device_mesh.device_type == "cpu"
    np.testing.assert_array_equal(got.full_tensor().numpy(), X)
