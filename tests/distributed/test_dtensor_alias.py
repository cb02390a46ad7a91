"""A DTensor's aliases without history (detach(), .data) are DTensors of its mesh and
placements, so a module's state_dict of an FSDP2 model holds DTensors: PyTorch's behaviour,
run here against PyTorch itself (gloo, a world of one process, a mesh of one CPU device) and
torchjax (a mesh of this process's one device). On 8 devices fsdp_script.py checks the same
of a sharded model."""

import numpy as np
import pytest
import torch

import torchjax
from tests.distributed._common import pytorch_world_of_one
from torchjax.distributed.device_mesh import init_device_mesh as tj_mesh
from torchjax.distributed.fsdp import fully_shard as tj_fully_shard
from torchjax.distributed.tensor import DTensor as TjDTensor
from torchjax.distributed.tensor import Shard as TjShard
from torchjax.distributed.tensor import distribute_tensor as tj_distribute


@pytest.fixture(scope="module")
def pt():
    """PyTorch's distributed package in this process: gloo, one rank."""
    yield from pytorch_world_of_one()


def _summary(t, dtensor_cls):
    return (isinstance(t, dtensor_cls), tuple(map(repr, getattr(t, "placements", ()))),
            t.requires_grad)


def test_detach_and_data_keep_the_layout(pt):
    from torch.distributed.tensor import DTensor, Shard, distribute_tensor
    x = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    d = distribute_tensor(torch.tensor(x, requires_grad=True), pt, [Shard(0)])
    j = tj_distribute(torchjax.tensor(x, requires_grad=True), tj_mesh("cpu", (1,)),
                      [TjShard(0)])
    for alias in ("detach", "data"):
        want = getattr(d, alias)
        got = getattr(j, alias)
        want, got = (want() if alias == "detach" else want), (got() if alias == "detach"
                                                              else got)
        assert _summary(got, TjDTensor) == _summary(want, DTensor), alias
        assert got.device_mesh is j.device_mesh
        np.testing.assert_array_equal(got.full_tensor().numpy(), want.full_tensor().numpy())
    # an alias: a write through it is seen by the DTensor (as PyTorch's)
    a, b = d.detach(), j.detach()
    with torch.no_grad():
        a.mul_(2)
    b.mul_(2)
    np.testing.assert_array_equal(j.detach().full_tensor().numpy(),
                                  d.detach().full_tensor().numpy())


def test_fully_shard_state_dict_holds_dtensors(pt):
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor import DTensor
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    mine = torchjax.nn.Sequential(torchjax.nn.Linear(4, 3), torchjax.nn.ReLU(),
                                  torchjax.nn.Linear(3, 2))
    mine.load_state_dict({k: torchjax.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    fully_shard(ref, mesh=pt)
    tj_fully_shard(mine, mesh=tj_mesh("cpu", (1,)))
    want, got = ref.state_dict(), mine.state_dict()
    assert list(got) == list(want)
    for k in want:
        assert _summary(got[k], TjDTensor) == _summary(want[k], DTensor), k
        np.testing.assert_array_equal(got[k].full_tensor().numpy(),
                                      want[k].full_tensor().detach().numpy())
    # loading it back into a sharded model (the values are copied into the parameters)
    other = tj_fully_shard(torchjax.nn.Sequential(torchjax.nn.Linear(4, 3), torchjax.nn.ReLU(),
                                                  torchjax.nn.Linear(3, 2)),
                           mesh=tj_mesh("cpu", (1,)))
    other.load_state_dict(got)
    for p, q in zip(other.parameters(), mine.parameters()):
        np.testing.assert_array_equal(p.detach().full_tensor().numpy(),
                                      q.detach().full_tensor().numpy())
