"""fully_shard (FSDP2) on 8 virtual CPU devices (run by test_fsdp.py)."""

from tests.distributed._checks import check, run  # noqa: I001  (sets XLA_FLAGS first)
from tests.distributed import _common
from tests.distributed._common import close, device0_bytes, train_step

import copy
import functools
import io

import numpy as np

import torchjax as torch
import torchjax.nn.functional as F
from torchjax import nn
from torchjax.distributed.device_mesh import init_device_mesh
from torchjax.distributed.fsdp import FSDPModule, fully_shard
from torchjax.distributed.tensor import DTensor, Replicate, Shard


def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 8))


batches = functools.partial(_common.batches, 16, 8)  # 16 features, 8 classes


def dim0_sharded(p):
    shape = tuple(p.shape)
    return p._data.sharding.shard_shape(shape) == (shape[0] // 8,) + shape[1:]


def train(model, data, compiled=False):
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    step = train_step(model, opt)
    if compiled:
        step = torch.compile(step)
    losses = [step(x, y).item() for x, y in data]
    if compiled:  # one program, run by every step (no graph break, no recompile)
        assert [step.compiles, step.executions] == [1, len(data)], (step.compiles,
                                                                    step.executions)
    return losses, opt


def sharded(model):
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer)
    return fully_shard(model)


@check
def parameters_and_optimizer_state_are_one_eighth_per_device():
    ref = net()
    model = sharded(copy.deepcopy(ref))
    assert isinstance(model, FSDPModule) and isinstance(model, nn.Sequential)
    assert type(model).__name__ == "FSDPSequential" and isinstance(model[0], FSDPModule)
    for p in model.parameters():
        assert isinstance(p, DTensor) and isinstance(p, nn.Parameter)
        assert p.placements == (Shard(0),) and p.requires_grad
    mine, total = device0_bytes([p._data for p in model.parameters()])
    assert mine * 8 == total, (mine, total)
    data = batches()
    l1, _ = train(ref, data)
    l8, opt = train(model, data)
    np.testing.assert_allclose(l8, l1, rtol=1e-5)
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p, q)
        assert p.placements == (Shard(0),) and dim0_sharded(p)
        assert p.grad._data.sharding == p._data.sharding  # gradients sharded like the params
    moments = [s[k]._data for s in opt.state.values() for k in ("exp_avg", "exp_avg_sq")]
    assert len(moments) == 12
    mine, total = device0_bytes(moments)
    assert mine * 8 == total, (mine, total)
    grads = [p.grad._data for p in model.parameters()]
    mine, total = device0_bytes(grads)
    assert mine * 8 == total, (mine, total)


@check
def compiled_training_matches_one_device():
    ref = net()
    model = sharded(copy.deepcopy(ref))
    data = batches(3)
    l1, _ = train(ref, data)
    l8, opt = train(model, data, compiled=True)
    np.testing.assert_allclose(l8, l1, rtol=1e-5)
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p, q)
        assert dim0_sharded(p)
    mine, total = device0_bytes([s["exp_avg"]._data for s in opt.state.values()])
    assert mine * 8 == total


@check
def state_dict_is_full_and_round_trips():
    ref = net()
    model = sharded(copy.deepcopy(ref))
    sd = model.state_dict()
    assert list(sd) == list(ref.state_dict())
    params = dict(model.named_parameters())
    for k, v in sd.items():
        assert tuple(v.shape) == tuple(ref.state_dict()[k].shape)
        close(v, ref.state_dict()[k])
        # DTensors of the parameters' layouts, as PyTorch's FSDP2 gives (tests/distributed/
        # test_dtensor_alias.py runs PyTorch's); full_tensor() is the full value
        assert isinstance(v, DTensor) and not v.requires_grad, (k, type(v))
        assert v.placements == params[k].placements and v.device_mesh is params[k].device_mesh
        close(v.full_tensor(), ref.state_dict()[k])
    buf = io.BytesIO()
    torch.save(sd, buf)
    buf.seek(0)
    loaded = torch.load(buf)
    for k, v in loaded.items():  # DTensors again, as PyTorch's torch.load gives
        assert isinstance(v, DTensor) and v.placements == params[k].placements, k
        assert v.device_mesh == params[k].device_mesh
        assert v._data.sharding.is_equivalent_to(params[k]._data.sharding, v.ndim)
        close(v.full_tensor(), ref.state_dict()[k])
    other = sharded(net())
    with torch.no_grad():
        for p in other.parameters():
            p.zero_()
    other.load_state_dict(loaded)
    for p, q in zip(other.parameters(), ref.parameters()):
        close(p, q)
        assert dim0_sharded(p)


@check
def hsdp_on_a_two_dimensional_mesh_and_uneven_parameters():
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("replicate", "shard"))
    torch.manual_seed(0)
    ref = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 3))  # (3, 64): uneven
    model = fully_shard(copy.deepcopy(ref), mesh=mesh)
    w0, _, w2, b2 = model.parameters()
    assert w0.placements == (Replicate(), Shard(0))
    assert w0._data.sharding.shard_shape(w0.shape) == (16, 16)
    assert w2.placements == (Replicate(), Replicate())  # 3 rows do not split over 4
    data = batches(2)
    data = [(x, y % 3) for x, y in data]
    l1, _ = train(ref, data)
    l8, _ = train(model, data)
    np.testing.assert_allclose(l8, l1, rtol=1e-5)


@check
def fsdp_with_tensor_parallel_on_a_2d_mesh():
    """PyTorch's FSDP2 + TP recipe: parallelize_module over mesh["tp"], then fully_shard over
    mesh["dp"]: each parameter laid out on both dims, 1/8 per device where both split it."""
    from torchjax.distributed.tensor.parallel import (
        ColwiseParallel,
        RowwiseParallel,
        parallelize_module,
    )
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.up, self.down = nn.Linear(16, 32), nn.Linear(32, 8)

        def forward(self, x):
            return self.down(F.relu(self.up(x)))

    torch.manual_seed(0)
    ref = MLP()
    model = copy.deepcopy(ref)
    parallelize_module(model, mesh["tp"], {"up": ColwiseParallel(), "down": RowwiseParallel()})
    fully_shard(model, mesh=mesh["dp"])
    want = {"up.weight": ((Shard(0), Shard(0)), (4, 16)), "up.bias": ((Shard(0), Shard(0)), (4,)),
            "down.weight": ((Shard(0), Shard(1)), (4, 8)),
            "down.bias": ((Shard(0), Replicate()), (4,))}
    for name, p in model.named_parameters():
        placements, shard = want[name]
        assert p.placements == placements and p.device_mesh.mesh_dim_names == ("dp", "tp"), (
            name, p.placements)
        assert p._data.sharding.shard_shape(tuple(p.shape)) == shard, name
        assert tuple(p.to_local().shape) == shard, name
    mine, total = device0_bytes([model.up.weight._data, model.down.weight._data])
    assert mine * 8 == total, (mine, total)
    data = batches()
    l1, _ = train(ref, data)
    l8, opt = train(model, data)
    np.testing.assert_allclose(l8, l1, rtol=1e-5)
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p, q)
    for p in model.parameters():  # Adam's moments and the gradient laid out as the parameter
        assert opt.state[p]["exp_avg"]._data.sharding == p._data.sharding
        assert p.grad._data.sharding == p._data.sharding


if __name__ == "__main__":
    run()
