"""Tensor parallel on 8 virtual CPU devices (run by test_tp.py)."""

from tests.distributed._checks import check, run  # noqa: I001  (sets XLA_FLAGS first)

import copy

import numpy as np

import torchjax as torch
import torchjax.nn.functional as F
from torchjax import nn
from torchjax.distributed.device_mesh import init_device_mesh
from torchjax.distributed.tensor import DTensor, Replicate, Shard
from torchjax.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                  SequenceParallel, parallelize_module)
from torchjax.nn.parallel import DistributedDataParallel


class MLP(nn.Module):
    def __init__(self, dim=16, hidden=64):
        super().__init__()
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


class Attention(nn.Module):
    def __init__(self, dim=32, heads=8):
        super().__init__()
        self.heads = heads
        self.norm = nn.LayerNorm(dim)
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        h = self.norm(x)

        def split(t):  # heads follow the sharded feature dim: each device keeps one head
            return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)
        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        a = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1) @ v
        return x + self.out(a.transpose(1, 2).reshape(b, s, d))


def close(a, b, tol=2e-5):
    np.testing.assert_allclose(np.asarray(a.detach()._data), np.asarray(b.detach()._data),
                               rtol=tol, atol=tol)


def shard_shape(p):
    return tuple(p._data.sharding.shard_shape(tuple(p.shape)))


def compare(ref, model, x, steps=3):
    opt_r = torch.optim.SGD(ref.parameters(), lr=0.1)
    opt_m = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        for m, o in ((ref, opt_r), (model, opt_m)):
            o.zero_grad()
            m(x).pow(2).mean().backward()
        for p, q in zip(model.parameters(), ref.parameters()):
            close(p.grad, q.grad)
        opt_r.step()
        opt_m.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        close(p, q)
    close(model(x), ref(x))


@check
def mlp_colwise_rowwise_matches_one_device():
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("tp",))
    torch.manual_seed(0)
    ref = MLP()
    model = parallelize_module(copy.deepcopy(ref), mesh,
                               {"up": ColwiseParallel(), "down": RowwiseParallel()})
    assert isinstance(model.up.weight, DTensor) and isinstance(model.up.weight, nn.Parameter)
    assert model.up.weight.placements == (Shard(0),) and shard_shape(model.up.weight) == (8, 16)
    assert shard_shape(model.up.bias) == (8,)
    assert model.down.weight.placements == (Shard(1),)
    assert shard_shape(model.down.weight) == (16, 8)
    assert model.down.bias.placements == (Replicate(),)
    x = torch.randn(4, 16)
    seen = []
    model.up.register_forward_hook(lambda m, a, o: seen.append(o._data.sharding))
    y = model(x)
    assert seen[0].shard_shape((4, 64)) == (4, 8)  # colwise output: sharded features
    assert y._data.sharding.is_fully_replicated  # rowwise output: all-reduced
    compare(ref, model, x)


@check
def attention_block_matches_one_device():
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("tp",))
    torch.manual_seed(0)
    ref = Attention()
    model = parallelize_module(copy.deepcopy(ref), mesh, {
        "q": ColwiseParallel(), "k": ColwiseParallel(), "v": ColwiseParallel(),
        "out": RowwiseParallel(), "norm": SequenceParallel()})
    assert model.norm.weight.placements == (Replicate(),)
    x = torch.randn(2, 8, 32)
    compare(ref, model, x, steps=2)


@check
def compiled_training_step_is_one_program_matching_eager():
    """An Adam step of a colwise/rowwise MLP under torchjax.compile: one program run by
    every step, the eager losses and parameters, the weights still sharded."""
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("tp",))
    x = torch.randn(4, 16)
    got = []
    for compiled in (False, True):
        torch.manual_seed(0)
        model = parallelize_module(MLP(), mesh, {"up": ColwiseParallel(),
                                                 "down": RowwiseParallel()})
        opt = torch.optim.Adam(model.parameters(), lr=0.1)

        def step():
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            return loss
        run = torch.compile(step) if compiled else step
        losses = [run().item() for _ in range(3)]
        if compiled:
            assert [run.compiles, run.executions] == [1, 3], (run.compiles, run.executions)
        assert shard_shape(model.up.weight) == (8, 16)
        assert shard_shape(model.down.weight) == (16, 8)
        got.append((losses, model))
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-5)
    for p, q in zip(got[1][1].parameters(), got[0][1].parameters()):
        close(p, q)


@check
def tensor_parallel_inside_data_parallel_on_a_2d_mesh():
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    torch.manual_seed(0)
    ref = MLP()
    model = parallelize_module(copy.deepcopy(ref), mesh["tp"],
                               {"up": ColwiseParallel(), "down": RowwiseParallel()})
    ddp = DistributedDataParallel(model, device_mesh=mesh["dp"])
    assert shard_shape(model.up.weight) == (16, 16)  # TP's layout kept, replicated over dp
    x = torch.randn(8, 16)
    compare(ref, ddp, x, steps=2)


@check
def plan_errors_name_the_problem():
    """As PyTorch's (test_dtensor_errors.py compares the messages): a key nothing matches
    warns and is skipped, a value that is not a style raises, a style on a module it cannot
    lay out raises."""
    import warnings
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("tp",))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        m = parallelize_module(MLP(), mesh, {"nope": ColwiseParallel(), "up": ColwiseParallel()})
    assert any("Parallelize plan key 'nope' could not be resolved" in str(w.message)
               for w in seen)
    assert isinstance(m.up.weight, DTensor)  # (the other entries still apply)
    try:
        parallelize_module(MLP(), mesh, {"up": "colwise"})
    except TypeError as e:
        assert "not a ParallelStyle" in str(e)
    else:
        raise AssertionError("no error")
    try:
        parallelize_module(nn.ReLU(), mesh, ColwiseParallel())
    except NotImplementedError as e:
        assert str(e) == "ColwiseParallel currently only support nn.Linear and nn.Embedding!"
    else:
        raise AssertionError("no error")

if __name__ == "__main__":
    run()
