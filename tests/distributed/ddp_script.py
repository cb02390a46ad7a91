"""DistributedDataParallel and DataParallel on 8 virtual CPU devices (run by test_ddp.py)."""

from tests.distributed._checks import check, run  # noqa: I001  (sets XLA_FLAGS first)
from tests.distributed import _common
from tests.distributed._common import close, train_step

import copy
import functools

import numpy as np

import torchjax as torch
import torchjax.nn.functional as F
from torchjax import nn
from torchjax.distributed.device_mesh import init_device_mesh
from torchjax.nn.parallel import DataParallel, DistributedDataParallel


def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))


batches = functools.partial(_common.batches, 8, 4)  # 8 features, 4 classes


def train(model, params, data, compiled=False, opt_cls=torch.optim.Adam):
    opt = opt_cls(params, lr=1e-2)
    step = train_step(model, opt)
    if compiled:
        step = torch.compile(step)
    losses, grads = [], []
    for x, y in data:
        losses.append(step(x, y).item())
        grads.append([p.grad.clone() for p in params])
    return losses, grads


def sharding_seen(module):
    seen = []
    module.register_forward_pre_hook(lambda m, args: seen.append(args[0]._data.sharding))
    return seen


@check
def ddp_matches_one_device_over_five_steps():
    ref = net()
    model = copy.deepcopy(ref)
    ddp = DistributedDataParallel(model)
    assert ddp.module is model and list(ddp.state_dict())[0] == "module.0.weight"
    for p in ddp.parameters():  # replicated: every device holds the whole parameter
        assert len(p._data.sharding.device_set) == 8 and p._data.sharding.is_fully_replicated
    seen = sharding_seen(model)
    data = batches()
    l1, g1 = train(ref, list(ref.parameters()), data)
    l8, g8 = train(ddp, list(ddp.parameters()), data)
    # the batch reached the module sharded on dim 0: 4 rows per device
    assert {tuple(s.shard_shape((32, 8))) for s in seen} == {(4, 8)}
    np.testing.assert_allclose(l8, l1, rtol=1e-5)
    for a, b in zip(g8, g1):
        for x, y in zip(a, b):
            close(x, y)
    for p, q in zip(ddp.module.parameters(), ref.parameters()):
        close(p, q)
        assert p._data.sharding.is_fully_replicated


@check
def ddp_compiled_step_matches_one_device():
    ref = net()
    ddp = DistributedDataParallel(copy.deepcopy(ref))
    data = batches(3)
    l1, _ = train(ref, list(ref.parameters()), data, opt_cls=torch.optim.SGD)
    l8, _ = train(ddp, list(ddp.parameters()), data, compiled=True, opt_cls=torch.optim.SGD)
    np.testing.assert_allclose(l8, l1, rtol=1e-5)
    for p, q in zip(ddp.module.parameters(), ref.parameters()):
        close(p, q)


@check
def ddp_no_sync_accumulates_as_pytorch():
    ref = net()
    ddp = DistributedDataParallel(copy.deepcopy(ref))
    (x1, y1), (x2, y2) = batches(2)
    with ddp.no_sync():
        assert ddp.require_backward_grad_sync is False
        F.cross_entropy(ddp(x1), y1).backward()
    F.cross_entropy(ddp(x2), y2).backward()
    F.cross_entropy(ref(x1), y1).backward()
    F.cross_entropy(ref(x2), y2).backward()
    for p, q in zip(ddp.module.parameters(), ref.parameters()):
        close(p.grad, q.grad)


@check
def ddp_on_a_mesh_dimension_and_uneven_batch_error():
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    ref = net()
    ddp = DistributedDataParallel(copy.deepcopy(ref), device_mesh=mesh["dp"])
    seen = sharding_seen(ddp.module)
    x, y = batches(1)[0]
    close(ddp(x), ref(x))
    assert tuple(seen[0].shard_shape((32, 8))) == (16, 8)
    try:
        ddp(torch.randn(5, 8))
    except ValueError as e:
        assert "does not split evenly over 2 devices" in str(e), e
    else:
        raise AssertionError("no error")


@check
def batchnorm_under_ddp_uses_the_global_batch():
    torch.manual_seed(0)
    ref = nn.SyncBatchNorm.convert_sync_batchnorm(
        nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 4)))
    ddp = DistributedDataParallel(copy.deepcopy(ref))
    data = batches(3)
    # SGD: the first Linear's bias has a zero gradient (the norm removes the mean), and Adam
    # would turn the float noise in it into full-size steps of either sign
    l1, _ = train(ref, list(ref.parameters()), data, opt_cls=torch.optim.SGD)
    l8, _ = train(ddp, list(ddp.parameters()), data, opt_cls=torch.optim.SGD)
    np.testing.assert_allclose(l8, l1, rtol=1e-5)
    for a, b in zip(ddp.module.state_dict().values(), ref.state_dict().values()):
        close(a, b)


@check
def data_parallel_over_local_devices():
    ref = net()
    dp = DataParallel(copy.deepcopy(ref))
    assert dp.device_ids == list(range(8)) and dp.device_mesh.size() == 8
    x, y = batches(1)[0]
    out = dp(x)
    close(out, ref(x))
    F.cross_entropy(out, y).backward()
    F.cross_entropy(ref(x), y).backward()
    for p, q in zip(dp.module.parameters(), ref.parameters()):
        close(p.grad, q.grad)
    two = DataParallel(copy.deepcopy(ref), device_ids=[0, 1])
    seen = sharding_seen(two.module)
    close(two(x), ref(x))
    assert len(seen[0].device_set) == 2
    assert list(two.state_dict()) == [f"module.{k}" for k in ref.state_dict()]


if __name__ == "__main__":
    run()
